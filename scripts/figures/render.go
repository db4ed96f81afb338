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

// renderAB is a comparison of a result's variants as `stormbench compare
// -o markdown` writes it, without its title, and with the recorded
// profile's line and the line naming the result for its list of inputs:
// the metrics are the option metrics=ID,ID, by default the key metrics.
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
	p, err := compare.RecordedProfile(compare.Input{Name: b.Source, Result: r})
	if err != nil {
		return "", err
	}
	c.Inputs = nil // the source line names the file
	var w strings.Builder
	fmt.Fprintf(&w, "Profile `%s` (%s).  \n", p.Metadata.Name, strings.TrimSuffix(p.Metadata.Description, "."))
	w.WriteString(sourceLine(doc, b.Source, r) + "\n")
	err = report.WriteComparisonMarkdown(&w, c, 0, true)
	return w.String(), err
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
