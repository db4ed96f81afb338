package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestBashCompletion sources the generated bash script in bash and asks it
// to complete a command, a flag and a subcommand, as a shell would.
func TestBashCompletion(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	code, script, stderr := runCLI(t, "completion", "bash")
	if code != exitOK {
		t.Fatalf("completion bash: exit %d: %s", code, stderr)
	}
	for _, tc := range []struct {
		words string
		cword int
		want  string
	}{
		{"stormbench cal", 1, "calibrate"},
		{"stormbench run --pro", 2, "--profile"},
		{"stormbench gate --allow-m", 2, "--allow-mismatch"},
		{"stormbench profiles val", 2, "validate"},
		{"stormbench help rep", 2, "report"},
		// A subcommand's subcommand, and a flag only it has.
		{"stormbench fleet snapshot sa", 3, "save"},
		{"stormbench fleet snapshot save --fi", 4, "--file"},
		// A flag of a subcommand other than the first (cluster status).
		{"stormbench cluster status --out", 3, "--output"},
		// Deprecated flags are not offered (cleanup --run is --run-id's
		// former name).
		{"stormbench cleanup --run", 2, "--run-id"},
	} {
		prog := script + "\nCOMP_WORDS=(" + tc.words + "); COMP_CWORD=" + string(rune('0'+tc.cword)) + "; _stormbench; echo \"${COMPREPLY[*]}\"\n"
		out, err := exec.Command(bash, "-c", prog).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: bash: %v\n%s", tc.words, err, out)
		}
		if got := strings.TrimSpace(string(out)); got != tc.want {
			t.Errorf("%q completes to %q, want %q", tc.words, got, tc.want)
		}
	}
	for _, shell := range []string{"zsh", "fish"} {
		if code, out, _ := runCLI(t, "completion", shell); code != exitOK || !strings.Contains(out, "stormbench") {
			t.Errorf("completion %s: exit %d", shell, code)
		}
	}
	if code, _, _ := runCLI(t, "completion", "powershell"); code != exitUsage {
		t.Errorf("completion powershell: exit %d, want %d", code, exitUsage)
	}
}
