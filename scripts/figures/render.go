package main

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/stormbench/stormbench/bench/calibrate"
	"github.com/stormbench/stormbench/bench/compare"
	"github.com/stormbench/stormbench/bench/report"
	"github.com/stormbench/stormbench/bench/result"
)

// render makes the body of block b of the document at doc (both paths from
// the repository's root).
func render(root, doc string, b block) (string, error) {
	src := filepath.Join(root, filepath.FromSlash(b.Source))
	if _, err := os.Stat(src); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("names %s, which does not exist", b.Source)
		}
		return "", err
	}
	switch b.Kind {
	case kindCatalogue:
		return renderCatalogue(root, doc, b.Source)
	case kindCalibration:
		return renderCalibration(src)
	case kindFile:
		data, err := os.ReadFile(src)
		if err != nil {
			return "", err
		}
		text := string(data)
		if !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		return "```text\n" + text + "```\n", nil
	}
	r, err := result.ReadFile(src)
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", b.Source, err)
	}
	switch b.Kind {
	case kindAB:
		return renderAB(doc, b, r)
	case kindMachine:
		return renderMachine(doc, b.Source, r), nil
	case kindSummary:
		var buf bytes.Buffer
		if err := report.WriteSummary(&buf, r); err != nil {
			return "", fmt.Errorf("summarising %s: %w", b.Source, err)
		}
		return sourceLine(doc, b.Source, r) + "\n```\n" + buf.String() + "```\n", nil
	}
	return "", fmt.Errorf("unknown kind %q", b.Kind)
}

// link is a markdown link from the document at doc to the file at path
// (both from the repository's root), with the path as its text.
func link(doc, path string) string {
	rel, err := filepath.Rel(filepath.Dir(filepath.FromSlash(doc)), filepath.FromSlash(path))
	if err != nil {
		rel = path
	}
	return fmt.Sprintf("[`%s`](%s)", path, filepath.ToSlash(rel))
}

// sourceLine says which file a block was made from and where that file was
// made: its run, commit, date and machine.
func sourceLine(doc, path string, r *result.Result) string {
	return fmt.Sprintf("From %s: run `%s`, %s, %s, machine %s.\n",
		link(doc, path), r.Run.ID, commitOf(r), r.Run.Start.UTC().Format("2006-01-02"), r.Run.Machine)
}

// commitOf is the stormbench commit a result was made by, as a phrase.
func commitOf(r *result.Result) string {
	if rev := r.Run.GitRevision; rev != "" && rev != "unknown" {
		return "stormbench " + rev
	}
	return "stormbench " + r.Run.ToolVersion + " (commit not recorded)"
}

// renderAB is a comparison of a result's variants, as compare makes it:
// the headline sentences, then a table of the chosen metrics (option
// metrics=ID,ID; default the key metrics) with each variant's median and
// its interval, and the change from the baseline with its interval.
func renderAB(doc string, b block, r *result.Result) (string, error) {
	var opts compare.Options
	if m := b.Options["metrics"]; m != "" {
		ms, err := compare.LookupMetrics(strings.Split(m, ",")...)
		if err != nil {
			return "", err
		}
		opts.Metrics = ms
	}
	c, err := compare.Compare([]compare.Input{{Name: b.Source, Result: r}}, opts)
	if err != nil {
		return "", err
	}
	var w strings.Builder
	p, err := compare.RecordedProfile(compare.Input{Name: b.Source, Result: r})
	if err != nil {
		return "", err
	}
	var ns []string
	for _, g := range c.Groups {
		ns = append(ns, fmt.Sprint(len(g.Runs)))
	}
	fmt.Fprintf(&w, "Profile `%s` (%s), n = %s storms.  \n", p.Metadata.Name, strings.TrimSuffix(p.Metadata.Description, "."), strings.Join(ns, " + "))
	w.WriteString(sourceLine(doc, b.Source, r))
	if hs := compare.Headlines(c); len(hs) > 0 {
		w.WriteString("\n")
		for _, h := range hs {
			fmt.Fprintf(&w, "- **%s**\n", report.EscapeMarkdown(h))
		}
	}
	// The table's cells, escaped: a figure, then each group's median and,
	// after the baseline's, its change.
	ci := compare.FormatLevel(c.Confidence) + " CI"
	if c.Paired {
		ci = "block by block, CI" // a paired interval's coverage is the blocks' (96.9 % for 6)
	}
	rows := [][]string{{"figure"}}
	for gi, g := range c.Groups {
		rows[0] = append(rows[0], fmt.Sprintf("%s (%s)", g.Name, report.RunsWord(len(g.Runs))))
		if gi > 0 {
			rows[0] = append(rows[0], fmt.Sprintf("change vs %s, %s", c.Baseline, ci))
		}
	}
	for _, row := range c.Rows {
		cells := []string{row.Metric.Label}
		for gi, cell := range row.Cells {
			cells = append(cells, report.CellText(cell, row.Metric.Unit))
			if gi > 0 {
				cells = append(cells, deltaText(cell.Delta))
			}
		}
		rows = append(rows, cells)
	}
	w.WriteString("\n")
	for i, cells := range rows {
		for j := range cells {
			cells[j] = report.EscapeMarkdown(cells[j])
		}
		fmt.Fprintf(&w, "| %s |\n", strings.Join(cells, " | "))
		if i == 0 {
			fmt.Fprintf(&w, "|:---|%s\n", strings.Repeat("---:|", len(cells)-1))
		}
	}
	if len(c.Notes) > 0 || len(c.Warnings) > 0 {
		w.WriteString("\n")
	}
	for i, n := range c.Notes {
		fmt.Fprintf(&w, "%s %s  \n", report.Superscript(i+1), report.EscapeMarkdown(n))
	}
	for _, wn := range c.Warnings {
		fmt.Fprintf(&w, "warning: %s  \n", report.EscapeMarkdown(wn))
	}
	return w.String(), nil
}

// deltaText is a change with its interval ("~" when not significant), and
// its p-value when it has one.
func deltaText(d *compare.Delta) string {
	if d == nil {
		return "-"
	}
	s := d.Text
	if d.CI != "" {
		s += " " + d.CI
	}
	if !d.TooFew {
		s += fmt.Sprintf(" (p = %.3f)", d.P)
	}
	return s + report.NoteMarks(d.Notes)
}

// renderMachine says where a result was made: the machine, the commit,
// the component versions, the control plane's CPU budget and how many of
// its storms were host-bound.
func renderMachine(doc, path string, r *result.Result) string {
	var vers []string
	for _, k := range slices.Sorted(maps.Keys(r.Run.Cluster.Versions)) {
		vers = append(vers, k+" "+r.Run.Cluster.Versions[k])
	}
	return fmt.Sprintf("%s was made by %s on %s: machine %s; components %s; control-plane CPU budget %s; host-bound: %s.\n",
		link(doc, path), commitOf(r), r.Run.Start.UTC().Format("2006-01-02"), r.Run.Machine, cmp.Or(strings.Join(vers, ", "), "not recorded"),
		compare.FormatBudget(r.Run.Cluster.ControlPlaneCPUs), hostBound(r))
}

// renderCalibration is the verdict of the calibration in folder dir: its
// hollow.json and containerd.json, combined as `stormbench calibrate
// combine` combines them.
func renderCalibration(dir string) (string, error) {
	var rs [2]*calibrate.Result
	for i, name := range []string{"hollow.json", "containerd.json"} {
		r, err := calibrate.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return "", err
		}
		rs[i] = r
	}
	c, err := calibrate.Combine(rs[0], rs[1])
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if err := calibrate.WriteOutsideMarkdown(&b, c); err != nil {
		return "", err
	}
	return b.String(), nil
}
