package main

import (
	"strings"
	"testing"

	"github.com/stormbench/stormbench/bench/cluster"
)

// TestRunSeedsFlag: --seeds sets the profile's repetitions.seeds (the
// resolved profile on stdout says it), the aa profile varies its seeds,
// and anything but fixed or vary is refused (exit 2).
func TestRunSeedsFlag(t *testing.T) {
	bins := fakeBinDir(t, cluster.AllBinaries()...)
	tests := []struct {
		name    string
		args    []string
		code    int
		stdout  []string
		stderr  string
		without string // not in stdout
	}{
		{"vary", []string{"--profile", "quick", "--seeds", "vary", "--repetitions", "3"}, exitOK, []string{"repetitions:\n  count: 3\n  seeds: vary\n"}, "", ""},
		{"fixed over aa's vary", []string{"--profile", "aa", "--seeds", "fixed"}, exitOK, []string{"repetitions: 6\n"}, "", "seeds: vary"},
		{"aa varies", []string{"--profile", "aa"}, exitOK, []string{"name: legacy-a", "name: legacy-b", "repetitions:\n  count: 6\n  seeds: vary\n"}, "(repetitions.seeds: vary: each block plays its own schedule, from seeds [42 6839728766377637706 ", ""},
		{"quick stays a count", []string{"--profile", "quick"}, exitOK, []string{"repetitions: 1\n"}, "", "seeds:"},
		{"unknown mode", []string{"--profile", "quick", "--seeds", "sometimes"}, exitUsage, nil, `--seeds "sometimes": one of fixed`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"run", "--dry-run", "--run-id", "seeds", "--output-dir", t.TempDir(), "--bin-dir", bins}, tc.args...)
			code, stdout, stderr := runCLI(t, args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstderr:\n%s", code, tc.code, stderr)
			}
			for _, want := range tc.stdout {
				if !strings.Contains(stdout, want) {
					t.Errorf("resolved profile lacks %q:\n%s", want, stdout)
				}
			}
			if tc.without != "" && strings.Contains(stdout, tc.without) {
				t.Errorf("resolved profile has %q:\n%s", tc.without, stdout)
			}
			if !strings.Contains(stderr, tc.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tc.stderr, stderr)
			}
		})
	}
}
