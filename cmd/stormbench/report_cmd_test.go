package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReportCommand(t *testing.T) {
	dir := t.TempDir()
	htmlOut := filepath.Join(dir, "report.html")
	code, stdout, stderr := runCLI(t, "report", abFixture, "--output-file", htmlOut)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	b, err := os.ReadFile(htmlOut)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	if n := strings.Count(page, "<svg"); n != 11 || strings.Count(page, "<figure") != n {
		t.Errorf("%d <svg> and %d <figure>, want 11 each", n, strings.Count(page, "<figure"))
	}
	for _, bad := range []string{"<script", "<link", `src="http`, `href="http`} {
		if strings.Contains(page, bad) {
			t.Errorf("HTML report contains %q", bad)
		}
	}

	mdOut := filepath.Join(dir, "report.md")
	// -o FILE, the old spelling: still written, with a deprecation note.
	if code, _, stderr := runCLI(t, "report", abFixture, "-o", mdOut, "--baseline-variant", "preserve"); code != exitOK || !strings.Contains(stderr, "-o FILE is deprecated") {
		t.Fatalf("markdown: exit %d: %s", code, stderr)
	}
	md, err := os.ReadFile(mdOut)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "| metric | preserve | legacy | vs preserve |") || strings.Contains(string(md), "<svg") {
		t.Errorf("markdown report:\n%s", md)
	}

	code, stdout, _ = runCLI(t, "report", abFixture)
	if code != exitOK || !strings.HasPrefix(stdout, "## stormbench report: quick (run q1)") || !strings.Contains(stdout, "### Not modelled") {
		t.Errorf("markdown on stdout: exit %d\n%s", code, stdout)
	}
	// -o names the format, as in kubectl.
	if code, stdout, _ := runCLI(t, "report", abFixture, "-o", "html"); code != exitOK || !strings.HasPrefix(stdout, "<!DOCTYPE html>") {
		t.Errorf("-o html: exit %d, %.40q", code, stdout)
	}
	// An existing file is replaced only with --force.
	if code, _, stderr := runCLI(t, "report", abFixture, "--output-file", htmlOut); code != exitUsage || !strings.Contains(stderr, "--force") {
		t.Errorf("existing output without --force: exit %d, %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "report", abFixture, "--output-file", htmlOut, "--force"); code != exitOK {
		t.Errorf("--force: exit %d, %s", code, stderr)
	}
}

func TestReportCommandBadInput(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.json")
	if err := os.WriteFile(garbage, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"no file", nil, "exactly one result file"},
		{"two files", []string{abFixture, abFixture}, "exactly one result file"},
		{"unknown extension", []string{abFixture, "--output-file", filepath.Join(dir, "r.pdf")}, "cannot tell the format"},
		{"unknown -o format", []string{abFixture, "-o", "pdf"}, "unknown report format"},
		{"unknown format", []string{abFixture, "--format", "pdf"}, "unknown report format"},
		{"not a result", []string{garbage}, "not a stormbench result document"},
		{"unknown baseline", []string{abFixture, "--baseline-variant", "nope"}, `no group "nope"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, append([]string{"report"}, tt.args...)...)
			if code != exitUsage || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, tt.want)
			}
		})
	}
}
