package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/stormbench/stormbench/profiles"
)

// TestCompletion asks cobra's __complete, as the shell scripts do, for
// commands, subcommands, flags and flag values: the built-in profile
// names, output formats and a result's variants.
func TestCompletion(t *testing.T) {
	quick := "../../results/baselines/quick.json"
	for _, tc := range []struct {
		words []string
		want  []string
		not   []string
	}{
		{[]string{"run", "--profile", ""}, profiles.Names(), nil},
		{[]string{"fleet", "up", "--profile", "qu"}, []string{"quick"}, nil},
		{[]string{"profiles", "show", ""}, profiles.Names(), nil},
		{[]string{"cal"}, []string{"calibrate"}, nil},
		{[]string{"run", "--pro"}, []string{"--profile"}, nil},
		{[]string{"gate", "--allow-m"}, []string{"--allow-mismatch"}, nil},
		{[]string{"profiles", "val"}, []string{"validate"}, nil},
		{[]string{"help", "rep"}, []string{"report"}, nil},
		// A subcommand's subcommand, and a flag only it has.
		{[]string{"fleet", "snapshot", "sa"}, []string{"save"}, nil},
		{[]string{"fleet", "snapshot", "save", "--fi"}, []string{"--file"}, nil},
		{[]string{"cluster", "status", "--out"}, []string{"--output"}, nil},
		// Deprecated flags are not offered (cleanup --run is --run-id's
		// former name).
		{[]string{"cleanup", "--run"}, []string{"--run-id"}, []string{"--run"}},
		{[]string{"run", "-o", ""}, []string{"text", "json", "yaml"}, nil},
		{[]string{"report", "--output", ""}, []string{"html", "markdown"}, []string{"json"}},
		{[]string{"run", "--seeds", ""}, []string{"fixed", "vary"}, nil},
		{[]string{"completion", ""}, []string{"bash", "zsh", "fish", "powershell"}, nil},
		{[]string{"gate", "--current", quick, "--variant", ""}, []string{"legacy", "preserve"}, nil},
		{[]string{"compare", quick, "--baseline-variant", ""}, []string{"legacy", "preserve"}, nil},
	} {
		code, stdout, stderr := runCLI(t, append([]string{"__complete"}, tc.words...)...)
		lines := strings.Split(strings.TrimSpace(stdout), "\n")
		var got []string
		for _, l := range lines[:len(lines)-1] { // the last is ":directive"
			got = append(got, strings.SplitN(l, "\t", 2)[0])
		}
		if code != exitOK || !strings.HasPrefix(lines[len(lines)-1], ":") {
			t.Errorf("__complete %q: exit %d, stdout %q, stderr %q", tc.words, code, stdout, stderr)
			continue
		}
		for _, w := range tc.want {
			if !slices.Contains(got, w) {
				t.Errorf("__complete %q = %q, lacks %q", tc.words, got, w)
			}
		}
		for _, w := range tc.not {
			if slices.Contains(got, w) {
				t.Errorf("__complete %q = %q, offers %q", tc.words, got, w)
			}
		}
	}
	if len(profiles.Names()) < 3 {
		t.Errorf("profiles.Names() = %q: the profile completion test proves little", profiles.Names())
	}
}

// TestCompletionScripts: every shell's script calls __complete; a shell
// stormbench has no script for is bad usage.
func TestCompletionScripts(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		code, out, stderr := runCLI(t, "completion", shell)
		if code != exitOK || !strings.Contains(out, "stormbench __complete") && !strings.Contains(out, "__complete") {
			t.Errorf("completion %s: exit %d, %.200s %s", shell, code, out, stderr)
		}
	}
	for _, args := range [][]string{{"completion", "tcsh"}, {"completion"}, {"completion", "bash", "zsh"}} {
		if code, out, _ := runCLI(t, args...); code != exitUsage || out != "" {
			t.Errorf("%q: exit %d, stdout %.100q; want %d and nothing", args, code, out, exitUsage)
		}
	}
}

// failingWriter fails every write, as a full disk or a closed pipe does.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// TestUnwritableStdout: version and completion fail (exit 3, naming the
// cause) when their output cannot be written, instead of exiting 0.
func TestUnwritableStdout(t *testing.T) {
	for _, args := range [][]string{
		{"version"}, {"version", "-o", "json"}, {"version", "-o", "yaml"}, {"--version"},
		{"completion", "bash"}, {"completion", "zsh"}, {"completion", "fish"}, {"completion", "powershell"},
	} {
		var stderr bytes.Buffer
		if code := run(context.Background(), failingWriter{}, &stderr, args); code != exitFailed || !strings.Contains(stderr.String(), "no space left on device") {
			t.Errorf("%q into a failing stdout: exit %d, stderr %q; want %d naming the cause", args, code, stderr.String(), exitFailed)
		}
	}
}

// TestBashCompletion sources the bash script in bash and completes as a
// shell would: the script asks `stormbench __complete` (this test binary,
// standing in for stormbench) and fills COMPREPLY. bash-completion's
// _get_comp_words_by_ref is stubbed with what it gives for these words,
// and compopt, which works only under complete.
func TestBashCompletion(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	code, script, stderr := runCLI(t, "completion", "bash")
	if code != exitOK {
		t.Fatalf("completion bash: exit %d: %s", code, stderr)
	}
	for _, tc := range []struct{ words, want string }{
		{"stormbench cal", "calibrate"},
		{"stormbench run --profile qui", "quick"},
		{"stormbench fleet snapshot sa", "save"},
		{"stormbench cluster status --out", "--output"},
		{"stormbench report -o mark", "markdown"},
	} {
		prog := fmt.Sprintf(`stormbench() { STORMBENCH_TEST_AS_CLI=1 %q "$@"; }
compopt() { :; }
_get_comp_words_by_ref() { cur=${COMP_WORDS[COMP_CWORD]}; prev=${COMP_WORDS[COMP_CWORD-1]}; words=("${COMP_WORDS[@]}"); cword=$COMP_CWORD; }
%s
COMP_WORDS=(%s); COMP_CWORD=$((${#COMP_WORDS[@]}-1)); __start_stormbench; echo "${COMPREPLY[*]}"
`, exe, script, tc.words)
		out, err := exec.Command(bash, "-c", prog).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: bash: %v\n%s", tc.words, err, out)
		}
		if got := strings.TrimSpace(string(out)); got != tc.want {
			t.Errorf("%q completes to %q, want %q", tc.words, got, tc.want)
		}
	}
}
