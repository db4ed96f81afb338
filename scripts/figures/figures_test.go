package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestFiguresCurrent regenerates every figure block of every markdown
// document of the repository and fails when one differs from what its
// result file gives, names a missing file or cannot be made: a figure in a
// README is what the committed result says (make figures rewrites them).
func TestFiguresCurrent(t *testing.T) {
	root := "../.."
	docs, err := listFiles(root, ".", ".md")
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, d := range docs {
		stale, n, err := regenerate(root, d, false)
		if err != nil {
			t.Error(err)
			continue
		}
		total += n
		for _, b := range stale {
			t.Errorf("%s:%d: the %s block of %s differs from what its file gives: run make figures", d, b.Line, b.Kind, b.Source)
		}
	}
	// The README's A/B table and results/README.md's catalogue at least.
	if total < 2 {
		t.Errorf("found %d figure blocks in the repository's documents, want the README's and the results catalogue", total)
	}
}

// TestParseBlocks reads markers, their kinds and options, and refuses a
// malformed document with the line at fault.
func TestParseBlocks(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want []block // Line, Source, Kind, Options, Body
		err  string
	}{
		{
			name: "two blocks",
			doc: "# x\n<!-- stormbench:figures results/a.json -->\nold\n<!-- /stormbench:figures -->\ntext\n" +
				"<!-- stormbench:figures results/a.json ab metrics=x,y -->\n<!-- /stormbench:figures -->\n",
			want: []block{
				{Line: 2, Source: "results/a.json", Kind: "ab", Options: map[string]string{}, Body: "old\n"},
				{Line: 6, Source: "results/a.json", Kind: "ab", Options: map[string]string{"metrics": "x,y"}, Body: ""},
			},
		},
		{name: "catalogue", doc: "<!-- stormbench:figures results catalogue -->\n<!-- /stormbench:figures -->\n",
			want: []block{{Line: 1, Source: "results", Kind: "catalogue", Options: map[string]string{}}}},
		{name: "file", doc: "<!-- stormbench:figures cmd/stormbench/testdata/help/run.golden file -->\n<!-- /stormbench:figures -->\n",
			want: []block{{Line: 1, Source: "cmd/stormbench/testdata/help/run.golden", Kind: "file", Options: map[string]string{}}}},
		{name: "not closed", doc: "<!-- stormbench:figures results/a.json -->\nx\n", err: "line 1: block not closed"},
		{name: "nested", doc: "<!-- stormbench:figures results/a.json -->\n<!-- stormbench:figures results/b.json -->\n", err: "line 2: a block opened inside the block of line 1"},
		{name: "close alone", doc: "x\n<!-- /stormbench:figures -->\n", err: "line 2: <!-- /stormbench:figures --> without an opening marker"},
		{name: "no source", doc: "<!-- stormbench:figures  -->\n", err: "line 1: marker names no source file"},
		{name: "unknown kind", doc: "<!-- stormbench:figures results/a.json chart -->\n", err: `line 1: unknown kind "chart"`},
		{name: "unknown option", doc: "<!-- stormbench:figures results/a.json machine metrics=x -->\n", err: `line 1: kind machine takes no option "metrics=x"`},
		{name: "malformed", doc: "<!-- stormbench:figures results/a.json\n", err: "line 1: malformed marker"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseBlocks(tt.doc)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one with %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("%d blocks, want %d", len(got), len(tt.want))
			}
			for i, w := range tt.want {
				g := got[i]
				if g.Line != w.Line || g.Source != w.Source || g.Kind != w.Kind || g.Body != w.Body || len(g.Options) != len(w.Options) {
					t.Errorf("block %d = %+v, want %+v", i, g, w)
				}
				for k, v := range w.Options {
					if g.Options[k] != v {
						t.Errorf("block %d option %s = %q, want %q", i, k, g.Options[k], v)
					}
				}
			}
		})
	}
}

// TestRegenerate makes a README's blocks from a copy of the committed
// baseline, finds them current, then stale once the result changes, and
// fails on a block that names a missing file.
func TestRegenerate(t *testing.T) {
	root := t.TempDir()
	data, err := os.ReadFile("../../results/baselines/quick.json")
	if err != nil {
		t.Fatal(err)
	}
	res := filepath.Join(root, "results", "quick.json")
	if err := os.MkdirAll(filepath.Dir(res), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(res, data, 0o644); err != nil {
		t.Fatal(err)
	}
	doc := "# x\n\n<!-- stormbench:figures results/quick.json ab metrics=apiserver.excess_requests_per_restart -->\n<!-- /stormbench:figures -->\n\n" +
		"<!-- stormbench:figures results/quick.json machine -->\nhand-written\n<!-- /stormbench:figures -->\n" +
		"<!-- stormbench:figures results/quick.json summary -->\n<!-- /stormbench:figures -->\n"
	if err := os.WriteFile(filepath.Join(root, "README.md"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := run(&out, &errOut, []string{"-root", root}); code != 0 {
		t.Fatalf("figures: exit %d: %s", code, errOut.String())
	}
	got, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	// The committed baseline is made again as the model moves: the blocks
	// are checked for their shape and for the run they name, read from
	// the file itself.
	var meta struct {
		Run struct {
			ID          string `json:"id"`
			GitRevision string `json:"gitRevision"`
		} `json:"run"`
	}
	if err := json.Unmarshal(data, &meta); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`\n- legacy: 5 runs, .*\n- preserve: 5 runs, `,
		`\n\*\*preserve vs legacy: API excess requests per restart -\d+\.\d% \(95% CI -\d+\.\d%…-\d+\.\d%, n = 5 \+ 5, p = 0\.\d+`,
		`\| API excess requests per restart \| [\d.]+ \[[\d.]+…[\d.]+\] ¹ \| [\d.]+ \[[\d.]+…[\d.]+\] ¹ \| \*\*-\d+\.\d% \[-[\d.]+%…-[\d.]+%\] \(p=0\.\d+ adj=0\.\d+ n=5\)\*\* \|`,
		"\\[`results/quick\\.json`\\]\\(results/quick\\.json\\) was made by stormbench " + regexp.QuoteMeta(meta.Run.GitRevision) + " on \\d{4}-\\d\\d-\\d\\d: machine ",
		"```\n" + `stormbench \S+  run ` + regexp.QuoteMeta(meta.Run.ID) + `  50 nodes  500 pods  45 services  seed 42  complete\n`,
	} {
		if !regexp.MustCompile(want).Match(got) {
			t.Errorf("README lacks %s:\n%s", want, got)
		}
	}
	if strings.Contains(string(got), "hand-written") {
		t.Error("a block's old body survived")
	}
	if code := run(&out, &errOut, []string{"-root", root, "-check"}); code != 0 {
		t.Fatalf("figures -check after figures: exit %d, want 0: %s", code, out.String())
	}

	// Another result under the same name: the blocks are stale.
	changed := bytes.Replace(data, []byte(`"gitRevision":"`+meta.Run.GitRevision+`"`), []byte(`"gitRevision":"0000000"`), 1)
	if bytes.Equal(changed, data) || meta.Run.GitRevision == "0000000" {
		t.Fatalf("the fixture has no gitRevision %q to change", meta.Run.GitRevision)
	}
	if err := os.WriteFile(res, changed, 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if code := run(&out, &errOut, []string{"-root", root, "-check"}); code != 1 {
		t.Fatalf("figures -check after the result changed: exit %d, want 1", code)
	}
	for _, want := range []string{"README.md:3: results/quick.json ab differs", "results/quick.json machine differs"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("figures -check said %q, want %q", out.String(), want)
		}
	}

	// A block naming a file that is not there.
	if err := os.Remove(res); err != nil {
		t.Fatal(err)
	}
	errOut.Reset()
	if code := run(&out, &errOut, []string{"-root", root, "-check"}); code != 2 {
		t.Fatalf("figures -check with the result gone: exit %d, want 2", code)
	}
	if want := "README.md:3: ab block: names results/quick.json, which does not exist"; !strings.Contains(errOut.String(), want) {
		t.Errorf("stderr %q, want %q", errOut.String(), want)
	}
}

// TestQuotes: a document quotes a result by its path from the root or from
// the document's folder, not as the tail of a longer name.
func TestQuotes(t *testing.T) {
	tests := []struct {
		doc, text, file string
		want            bool
	}{
		{"README.md", "see results/scale/fleet-1k.json", "results/scale/fleet-1k.json", true},
		{"results/scale/README.md", "(`fleet-1k.json`)", "results/scale/fleet-1k.json", true},
		{"results/scale/README.md", "fleet-1k-r3.json", "results/scale/fleet-1k.json", false},
		{"results/scale/README.md", "old-fleet-1k.json", "results/scale/fleet-1k.json", false},
		{"README.md", "fleet-1k.json", "results/scale/fleet-1k.json", false},
		{"results/calibration/README.md", "2026-12-02/containerd.json", "results/calibration/containerd.json", false},
		{"results/calibration/README.md", "2026-12-02/containerd.json", "results/calibration/2026-12-02/containerd.json", true},
		{"results/calibration/2026-12-02/README.md", "`final-hollow.*`", "results/calibration/2026-12-02/final-hollow.json", true},
		{"results/calibration/2026-12-02/README.md", "`busy-status-hollow.{json,md}`", "results/calibration/2026-12-02/busy-status-hollow.json", true},
		{"results/calibration/2026-12-02/README.md", "`busy-status-hollow-2.{json,md}`", "results/calibration/2026-12-02/busy-status-hollow.json", false},
	}
	for _, tt := range tests {
		if got := (quotation{path: tt.doc, text: tt.text}).quotes(tt.file); got != tt.want {
			t.Errorf("%s with %q quotes %s: %v, want %v", tt.doc, tt.text, tt.file, got, tt.want)
		}
	}
}

// TestFrontDoor keeps the README a front door, at most 300 lines, and
// every README reference: no date or commit hash outside its generated
// blocks (a figure with its provenance belongs in a block, made from the
// result it names; reference does not date).
func TestFrontDoor(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\n"); n > 300 {
		t.Errorf("README.md has %d lines, want at most 300", n)
	}
	root := filepath.Join("..", "..")
	docs, err := listFiles(root, ".", ".md")
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range docs {
		if path.Base(rel) != "README.md" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		blocks, err := parseBlocks(text)
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			continue
		}
		outside := replaceBodies(text, blocks, make([]string, len(blocks)))
		for i, line := range strings.Split(outside, "\n") {
			if d := dateOrHash(line); d != "" {
				t.Errorf("%s, line %d outside the generated blocks: %q has a date or commit hash (%s)", rel, i+1, line, d)
			}
		}
	}
}

// dateOrHash finds an ISO date, or a hexadecimal word of 7 to 40 digits
// with a letter and a digit in it (a short or full commit hash), in line.
func dateOrHash(line string) string {
	for _, w := range candidate.FindAllString(line, -1) {
		if strings.Contains(w, "-") || (strings.ContainsAny(w, "abcdef") && strings.ContainsAny(w, "0123456789")) {
			return w
		}
	}
	return ""
}

var candidate = regexp.MustCompile(`\b(20\d\d-\d\d-\d\d|[0-9a-f]{7,40})\b`)

func TestDateOrHash(t *testing.T) {
	for s, want := range map[string]string{
		"made on 2026-12-04": "2026-12-04", "commit dfc0644": "dfc0644", "at 0f2d1fb2 then": "0f2d1fb2",
		"deadbeef": "", "1234567": "", "fleet-1k": "", "KEP-4781": "", "v1.36.3": "", "a1b2c3": "",
	} {
		if got := dateOrHash(s); got != want {
			t.Errorf("dateOrHash(%q) = %q, want %q", s, got, want)
		}
	}
}

// TestFigureCalibrationBlock: a calibration block is the committed calibration's
// verdict, one line per row outside tolerance; it goes stale when a row's
// verdict changes, and names a missing file.
func TestFigureCalibrationBlock(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "results", "calibration")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"hollow.json", "containerd.json"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "results", "calibration", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	doc := filepath.Join(dir, "README.md")
	if err := os.WriteFile(doc, []byte("# c\n\n<!-- stormbench:figures results/calibration calibration -->\n<!-- /stormbench:figures -->\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := run(&out, &errOut, []string{"-root", root}); code != 0 {
		t.Fatalf("figures: exit %d: %s", code, errOut.String())
	}
	got, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`\*\*(\d+) rows outside tolerance of their reference\*\*`).FindSubmatch(got)
	if m == nil {
		t.Fatalf("block lacks the count of rows outside:\n%s", got)
	}
	if n, rows := string(m[1]), strings.Count(string(got), "| DIFFERS"); n != fmt.Sprint(rows) {
		t.Errorf("block says %s rows outside and lists %d:\n%s", n, rows, got)
	}
	for _, want := range []string{"- hollow: stormbench ", "- containerd: stormbench ", "real + "} {
		if !strings.Contains(string(got), want) {
			t.Errorf("block lacks %q:\n%s", want, got)
		}
	}
	// Another calibration under the same name: the block is stale.
	cont := filepath.Join(dir, "containerd.json")
	data, err := os.ReadFile(cont)
	if err != nil {
		t.Fatal(err)
	}
	tool := regexp.MustCompile(`"tool": ?"[^"]*"`)
	changed := tool.ReplaceAll(data, []byte(`"tool": "0000000"`))
	if bytes.Equal(changed, data) {
		t.Fatal("the committed containerd.json names no tool revision to change")
	}
	if err := os.WriteFile(cont, changed, 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if code := run(&out, &errOut, []string{"-root", root, "-check"}); code != 1 {
		t.Errorf("figures -check after a verdict changed: exit %d, want 1 (%s)", code, out.String())
	}
	if err := os.Remove(cont); err != nil {
		t.Fatal(err)
	}
	errOut.Reset()
	if code := run(&out, &errOut, []string{"-root", root, "-check"}); code != 2 || !strings.Contains(errOut.String(), "containerd.json") {
		t.Errorf("figures -check with containerd.json gone: exit %d, want 2 naming it: %s", code, errOut.String())
	}
}
