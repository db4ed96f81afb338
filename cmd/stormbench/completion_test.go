package main

import (
	"bytes"
	"context"
	"errors"
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
