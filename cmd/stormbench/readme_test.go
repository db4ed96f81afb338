package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stormbench/stormbench/bench/cluster"
)

// TestREADMECommands parses every stormbench command line of the README's
// shell blocks through the command's own flags (with --help appended, so
// that nothing runs): a flag the README names and the CLI no longer has, or
// a value of the wrong type, fails here.
func TestREADMECommands(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(string(data), -1)
	var lines []string
	for _, b := range blocks {
		joined := strings.ReplaceAll(b[1], "\\\n", " ")
		for _, l := range strings.Split(joined, "\n") {
			l = strings.TrimSpace(l)
			if i := strings.Index(l, " #"); i >= 0 {
				l = strings.TrimSpace(l[:i])
			}
			for _, prefix := range []string{"bin/stormbench ", "stormbench "} {
				if rest, ok := strings.CutPrefix(l, prefix); ok {
					lines = append(lines, rest)
				}
			}
		}
	}
	if len(lines) < 20 {
		t.Fatalf("found %d stormbench commands in the README, want its examples", len(lines))
	}
	checked := 0
	for _, l := range lines {
		// Alternatives, pipes, redirections and substitutions are prose.
		if strings.ContainsAny(l, "|<>$`'\"") || strings.Contains(l, "...") {
			continue
		}
		args := strings.Fields(l)
		code, _, stderr := runCLI(t, append(args, "--help")...)
		if code != exitOK {
			t.Errorf("README: stormbench %s: exit %d: %s", l, code, strings.TrimSpace(stderr))
		}
		checked++
	}
	t.Logf("%d of %d README commands parsed", checked, len(lines))
}

// TestREADMEExamplesRun runs the README's examples that need no cluster,
// for real, in a scratch directory laid out as the README assumes
// (results/A.json and results/B.json are runs of the quick profile, as is
// the committed baseline; shard0.json
// and shard1.json two shards of one run). Each example is quoted as the
// README writes it, so an example edited in one place fails here until the
// other follows. The examples that start a cluster run in .ci/run (make run)
// and in the integration tests.
func TestREADMEExamplesRun(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	// The committed baseline: its recorded profile carries the gates the
	// README's gate example relies on.
	fixture, err := filepath.Abs("../../results/baselines/quick.json")
	if err != nil {
		t.Fatal(err)
	}
	quickProfile, err := filepath.Abs("../../profiles/quick.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	s0, s1 := writeShardFixtures(t, dir)
	t.Chdir(dir)
	copyFile := func(from, to string) {
		t.Helper()
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	copyFile(fixture, "results/A.json")
	copyFile(fixture, "results/B.json")
	copyFile(fixture, "results/baselines/quick.json")
	copyFile(s0, "shard0.json")
	copyFile(s1, "shard1.json")
	copyFile(quickProfile, "my-storm.yaml")
	copyFile(quickProfile, "my.yaml")
	// run --dry-run checks the binaries of the embedded cluster it would start.
	t.Setenv("STORMBENCH_BIN_DIR", fakeBinDir(t, cluster.AllBinaries()...))

	tests := []struct {
		readme string   // as the README writes it
		args   []string // what runs: the README's line without alternatives or redirections
		stdout string   // in stdout
		file   string   // written by the command
	}{
		{"bin/stormbench --help", []string{"--help"}, "Exit codes: 0 ok", ""},
		{"bin/stormbench calibrate --list-cases", []string{"calibrate", "--list-cases"}, "kubelet/legacy", ""},
		{"bin/stormbench compare results/A.json [results/B.json]", []string{"compare", "results/A.json"}, "legacy", ""},
		{"bin/stormbench compare results/A.json [results/B.json]", []string{"compare", "results/A.json", "results/B.json"}, "legacy", ""},
		{"bin/stormbench completion bash > /etc/bash_completion.d/stormbench", []string{"completion", "bash"}, "complete", ""},
		// The committed baseline ran on a 2-core host: some of its storms
		// saturated it, so the README says when to allow that.
		{"bin/stormbench gate --baseline results/baselines/quick.json --current results/A.json --thresholds-from-baseline --junit junit.xml\n  # add --allow-host-bound",
			[]string{"gate", "--baseline", "results/baselines/quick.json", "--current", "results/A.json", "--thresholds-from-baseline", "--junit", "junit.xml", "--allow-host-bound"}, "PASS", "junit.xml"},
		{"bin/stormbench merge --output-file merged.json shard0.json shard1.json",
			[]string{"merge", "--output-file", "merged.json", "shard0.json", "shard1.json"}, "", "merged.json"},
		{"bin/stormbench profiles list", []string{"profiles", "list"}, "fleet-1k", ""},
		{"bin/stormbench profiles show quick", []string{"profiles", "show", "quick"}, "name: quick", ""},
		{"bin/stormbench profiles validate my-storm.yaml", []string{"profiles", "validate", "my-storm.yaml"}, "valid", ""},
		{"bin/stormbench report results/A.json --output-file report.html", []string{"report", "results/A.json", "--output-file", "report.html"}, "", "report.html"},
		{"report.md for PRs", []string{"report", "results/A.json", "--output-file", "report.md"}, "", "report.md"},
		{"bin/stormbench run --profile my.yaml --dry-run", []string{"run", "--profile", "my.yaml", "--dry-run"}, "name: quick", ""},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			if !strings.Contains(readme, tt.readme) {
				t.Fatalf("the README no longer has %q: update this test with it", tt.readme)
			}
			code, stdout, stderr := runCLI(t, tt.args...)
			if code != exitOK {
				t.Fatalf("exit %d, want 0; stderr:\n%s", code, stderr)
			}
			if !strings.Contains(stdout, tt.stdout) {
				t.Errorf("stdout lacks %q:\n%s", tt.stdout, stdout)
			}
			if tt.file != "" {
				fi, err := os.Stat(tt.file)
				if err != nil {
					t.Fatalf("%s not written: %v", tt.file, err)
				}
				if fi.Size() == 0 {
					t.Errorf("%s is empty", tt.file)
				}
			}
		})
	}
}
