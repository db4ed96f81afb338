package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
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
