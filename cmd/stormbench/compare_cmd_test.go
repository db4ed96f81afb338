package main

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stormbench/stormbench/bench/compare"
	"github.com/stormbench/stormbench/bench/result"
)

func TestCompareCommand(t *testing.T) {
	dir := t.TempDir()
	garbage := writeFile(t, filepath.Join(dir, "garbage.json"), "not json", 0o644)
	tests := []cliCase{
		{"variants of one file", []string{abFixture}, exitOK, "-100% (n=1) ¹"},
		{"too few repetitions note", []string{abFixture}, exitOK, "too few repetitions"},
		{"markdown", []string{"-o", "markdown", abFixture}, exitOK, "| EndpointSlice writes | 157 | 0 | -100% (n=1) ¹ |"},
		{"format alias", []string{"--format", "md", abFixture}, exitOK, "|:---|---:|"},
		{"html", []string{"-o", "html", abFixture}, exitOK, "<!DOCTYPE html>"},
		{"baseline variant", []string{"--baseline-variant", "preserve", abFixture}, exitOK, "vs preserve"},
		{"metrics subset", []string{"--metrics", "endpointSlices.ready_flips,apiserver.requests", abFixture}, exitOK, "Endpoint ready→not-ready flips"},
		{"two files by file", []string{"--group-by", "file-variant", abFixture, regressedFixture(t, dir)}, exitOK, "regressed.json/legacy"},
		{"list metrics", []string{"--list-metrics"}, exitOK, "endpointSlices.slice_writes"},
		{"no files", nil, exitUsage, "at least one result file"},
		{"malformed file", []string{garbage}, exitUsage, "decoding result"},
		{"missing file", []string{filepath.Join(dir, "nope.json")}, exitUsage, "no such file"},
		{"unknown format", []string{"-o", "xml", abFixture}, exitUsage, "unknown output format"},
		{"unknown baseline", []string{"--baseline-variant", "nope", abFixture}, exitUsage, `no group "nope"`},
		{"unknown metric", []string{"--metrics", "x", abFixture}, exitUsage, `unknown metric "x"`},
		{"bad grouping", []string{"--group-by", "files", abFixture}, exitUsage, "unknown grouping"},
		{"help", []string{"--help"}, exitOK, "Mann-Whitney"},
		{"help names the correction", []string{"--help"}, exitOK, "Benjamini-Hochberg"},
		{"legend names the correction", []string{abFixture}, exitOK, "adjusted by Benjamini-Hochberg over the table's"},
	}
	// Levels out of (0, 1), NaN included, are refused before any file is read.
	for _, flag := range []string{"--alpha", "--confidence"} {
		for _, v := range []string{"NaN", "nan", "0", "1", "2", "-1", "+Inf"} {
			tests = append(tests, cliCase{flag + " " + v, []string{flag, v, abFixture}, exitUsage, flag + " "})
		}
	}
	tests = append(tests, cliCase{"NaN alpha says what is wanted", []string{"--alpha", "NaN", abFixture}, exitUsage, "--alpha NaN: must be a number between 0 and 1, both excluded"})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runCLIWant(t, tt.code, tt.want, append([]string{"compare"}, tt.args...)...)
		})
	}
}

func TestCompareCommandJSON(t *testing.T) {
	code, stdout, stderr := runCLI(t, "compare", "-o", "json", abFixture)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var c struct {
		Baseline   string `json:"baseline"`
		Correction string `json:"correction"`
		Tests      int    `json:"tests"`
		Rows       []struct {
			Metric struct {
				ID string `json:"id"`
			} `json:"metric"`
			Cells []struct {
				Median float64 `json:"median"`
				Delta  *struct {
					Text   string `json:"text"`
					TooFew bool   `json:"tooFewRepetitions"`
				} `json:"delta"`
			} `json:"cells"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(stdout), &c); err != nil {
		t.Fatal(err)
	}
	if c.Baseline != "legacy" || len(c.Rows) == 0 {
		t.Fatalf("baseline %q, %d rows", c.Baseline, len(c.Rows))
	}
	if c.Correction != compare.CorrectionBH || c.Tests == 0 {
		t.Errorf("correction %q over %d tests, want %s over the table's", c.Correction, c.Tests, compare.CorrectionBH)
	}
	for _, r := range c.Rows {
		if r.Metric.ID == result.MetricReadyFlips {
			if r.Cells[0].Median != 79 || r.Cells[1].Delta == nil || r.Cells[1].Delta.Text != "-100%" || !r.Cells[1].Delta.TooFew {
				t.Errorf("ready flips: %+v", r.Cells)
			}
			return
		}
	}
	t.Error("no ready flips row")
}
