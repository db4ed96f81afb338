package main

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/spf13/cobra/doc"

	"github.com/stormbench/stormbench/bench/testutil"
)

// TestCommandReference keeps the command reference in docs/ (one Markdown
// page per command, made by cobra's doc generator from the commands' own
// fields and flags) equal to the CLI: when it is stale, `go test
// ./cmd/stormbench -run TestCommandReference -update` writes it anew.
func TestCommandReference(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", "/home/user/.cache")
	t.Setenv("HOME", "/home/user")
	gen := t.TempDir()
	if err := doc.GenMarkdownTree(newRootCmd(&cmdEnv{stdout: io.Discard, stderr: io.Discard}), gen); err != nil {
		t.Fatal(err)
	}
	want, _ := filepath.Glob(filepath.Join(gen, "*.md"))
	if testutil.Updating() {
		old, _ := filepath.Glob("docs/*.md")
		for _, f := range old {
			if err := os.Remove(f); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.MkdirAll("docs", 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range want {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("docs", filepath.Base(f))
		if testutil.Updating() {
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if committed, err := os.ReadFile(path); err != nil || string(committed) != string(data) {
			t.Errorf("%s is stale or missing (%v): go test ./cmd/stormbench -run TestCommandReference -update writes it", path, err)
		}
	}
	committed, _ := filepath.Glob("docs/*.md")
	for _, f := range committed {
		if !slices.ContainsFunc(want, func(w string) bool { return filepath.Base(w) == filepath.Base(f) }) {
			t.Errorf("%s documents no command: go test ./cmd/stormbench -run TestCommandReference -update removes it", f)
		}
	}
}
