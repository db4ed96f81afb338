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
	code, stdout, stderr := runCLI(t, "report", abFixture, "-o", htmlOut)
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
	if code, _, stderr := runCLI(t, "report", abFixture, "-o", mdOut, "--baseline-variant", "preserve"); code != exitOK {
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
		{"unknown extension", []string{abFixture, "-o", filepath.Join(dir, "r.pdf")}, "cannot tell the format"},
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
