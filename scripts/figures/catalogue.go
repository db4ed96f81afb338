package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/stormbench/stormbench/bench/calibrate"
	"github.com/stormbench/stormbench/bench/compare"
	"github.com/stormbench/stormbench/bench/kubeversion"
	"github.com/stormbench/stormbench/bench/measure/host"
	"github.com/stormbench/stormbench/bench/report"
	"github.com/stormbench/stormbench/bench/result"
	"github.com/stormbench/stormbench/scripts/reach/reachfile"
)

// renderCatalogue lists every JSON document under dir (a folder from the
// repository's root): what it is, its profile, the commit and date it was
// made at, its machine, its n, whether it was host-bound, the files beside
// it and the documents that quote it (outside generated blocks).
func renderCatalogue(root, doc, dir string) (string, error) {
	files, err := listFiles(root, dir, ".json")
	if err != nil {
		return "", fmt.Errorf("listing %s: %w", dir, err)
	}
	slices.Sort(files)
	quotes, err := quotations(root)
	if err != nil {
		return "", err
	}
	var w strings.Builder
	w.WriteString("| file | what it is | profile | made by | date | machine | n | host-bound | beside it | quoted in |\n")
	w.WriteString("|:---|:---|:---|:---|:---|:---|:---|:---|:---|:---|\n")
	for _, f := range files {
		e, err := describe(root, f)
		if err != nil {
			return "", err
		}
		// A result is quoted when a document names it or a file made
		// from it (its report beside it); its own report naming it is
		// not a quotation.
		names, stem, exts := []string{f}, strings.TrimSuffix(f, ".json"), beside(root, f)
		for _, ext := range exts {
			names = append(names, stem+ext)
		}
		var quoted []string
		for _, q := range quotes {
			if strings.TrimSuffix(q.path, ".md") != stem && q.quotes(names...) {
				quoted = append(quoted, link(doc, q.path))
			}
		}
		if e.commit == "" || e.commit == "unknown" {
			e.commit = "not recorded"
		}
		cells := []string{e.what, e.profile, e.commit, e.date, e.machine, e.n, e.hostBound, cmp.Or(strings.Join(exts, ", "), "-")}
		for i := range cells {
			cells[i] = report.EscapeMarkdown(cells[i])
		}
		fmt.Fprintf(&w, "| %s | %s | %s |\n", link(doc, f), strings.Join(cells, " | "), cmp.Or(strings.Join(quoted, ", "), "nowhere"))
	}
	return w.String(), nil
}

// entry is one catalogue row, as text; an empty or "unknown" commit is
// shown as not recorded.
type entry struct {
	what, profile, commit, date, machine, n, hostBound string
}

// describe reads the document at f: a run's result, or a calibration
// (stormbench calibrate --result) or a reach (scripts/reach), which are
// other kinds of document.
func describe(root, f string) (entry, error) {
	path := filepath.Join(root, filepath.FromSlash(f))
	data, err := os.ReadFile(path)
	if err != nil {
		return entry{}, err
	}
	var probe struct {
		Kind string `json:"kind"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return entry{}, fmt.Errorf("reading %s: %w", f, err)
	}
	switch probe.Kind {
	case "CalibrationResult":
		return describeCalibration(f, data)
	case reachfile.Kind:
		return describeReach(f, data)
	}
	r, err := result.ReadFile(path)
	if err != nil {
		return entry{}, fmt.Errorf("reading %s: %w", f, err)
	}
	p, err := compare.RecordedProfile(compare.Input{Name: f, Result: r})
	if err != nil {
		return entry{}, err
	}
	e := entry{
		what:    strings.TrimSuffix(p.Metadata.Description, "."),
		profile: p.Metadata.Name,
		commit:  r.Run.GitRevision,
		date:    r.Run.Start.UTC().Format("2006-01-02"),
		machine: r.Run.Machine.String(),
	}
	if !r.Complete {
		e.what += " (INCOMPLETE)"
	}
	// n: the storms per variant, in the order the variants first ran.
	var ns []string
	count := map[string]int{}
	for _, v := range r.Variants {
		if count[v.Variant]++; count[v.Variant] == 1 {
			ns = append(ns, v.Variant)
		}
	}
	for i, n := range ns {
		ns[i] = fmt.Sprintf("%s %d", n, count[n])
	}
	e.n = strings.Join(ns, ", ")
	e.hostBound = hostBound(r)
	return e, nil
}

// hostBound says whether the host, not only the control plane, limited
// the run's storms (result.VariantRun.HostBound): "no", "2 of 10 storms",
// or "not measured" when no storm had the host measurement.
func hostBound(r *result.Result) string {
	measured, bound := false, 0
	for i := range r.Variants {
		v := &r.Variants[i]
		if v.Measurement(host.Name) != nil {
			measured = true
		}
		if v.HostBound {
			bound++
		}
	}
	switch {
	case !measured:
		return "not measured"
	case bound == 0:
		return "no"
	}
	return fmt.Sprintf("%d of %d storms", bound, len(r.Variants))
}

// describeCalibration describes a calibration document (calibrate.Result).
func describeCalibration(f string, data []byte) (entry, error) {
	var c calibrate.Result
	if err := json.Unmarshal(data, &c); err != nil {
		return entry{}, fmt.Errorf("reading %s: %w", f, err)
	}
	// The default version's tables name none; another's names it.
	version := ""
	if c.KubeVersion != "" && c.KubeVersion != kubeversion.Default.String() {
		version = ", Kubernetes " + c.KubeVersion
	}
	cases := fmt.Sprintf("%d cases", len(c.Cases))
	if len(c.Cases) == 1 {
		cases = "1 case"
	}
	e := entry{
		what:      fmt.Sprintf("calibration against real kubelets (%s backend%s), %s", cmp.Or(c.Backend, calibrate.BackendHollow), version, cases),
		profile:   "-",
		commit:    c.Tool,
		date:      c.Start.UTC().Format("2006-01-02"),
		machine:   c.Machine.String(),
		n:         fmt.Sprintf("%d real + %d simulated nodes", len(c.RealNodes), len(c.SimulatedNodes)),
		hostBound: "-",
	}
	if len(c.Rounds) > 1 {
		e.n = fmt.Sprintf("%d rounds of %d real + %d simulated nodes", len(c.Rounds), c.Nodes, c.Nodes)
	}
	if !c.Complete {
		e.what += " (INCOMPLETE)"
	}
	return e, nil
}

// beside lists the files beside f with the same name and another
// extension (its report, chart, profile), as extensions.
func beside(root, f string) []string {
	stem := strings.TrimSuffix(f, ".json")
	m, _ := filepath.Glob(filepath.Join(root, filepath.FromSlash(stem)) + ".*")
	var out []string
	for _, p := range m {
		ext := strings.TrimPrefix(filepath.Base(p), filepath.Base(stem))
		if ext != ".json" {
			out = append(out, ext)
		}
	}
	return out
}

// quotation is a markdown document's text outside its generated blocks.
type quotation struct {
	path string // from the repository's root
	text string
}

// quotes reports whether the document names one of files (paths from the
// repository's root): by its path, or by its path from the document's
// folder, alone or with its siblings (name.*, name.{json,md}), not as the
// tail of a longer path or name.
func (q quotation) quotes(files ...string) bool {
	var names []string
	for _, f := range files {
		paths := []string{f}
		if rel, err := filepath.Rel(filepath.Dir(q.path), f); err == nil && !strings.HasPrefix(rel, "..") {
			paths = append(paths, filepath.ToSlash(rel))
		}
		// A file is also named with its siblings: "fleet-1k.*",
		// "busy-status-hollow.{json,md}".
		for _, p := range paths {
			stem := strings.TrimSuffix(p, filepath.Ext(p))
			names = append(names, regexp.QuoteMeta(p), regexp.QuoteMeta(stem+".*"), regexp.QuoteMeta(stem+".{"))
		}
	}
	return regexp.MustCompile(`(?:^|[^a-zA-Z0-9._/-])(?:` + strings.Join(names, "|") + `)`).MatchString(q.text)
}

// quotations reads every markdown document of the repository, less its
// generated blocks.
func quotations(root string) ([]quotation, error) {
	docs, err := listFiles(root, ".", ".md")
	if err != nil {
		return nil, err
	}
	var out []quotation
	for _, d := range docs {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(d)))
		if err != nil {
			return nil, err
		}
		text := string(data)
		if bs, err := parseBlocks(text); err == nil {
			empty := make([]string, len(bs))
			text = replaceBodies(text, bs, empty)
		}
		out = append(out, quotation{path: d, text: text})
	}
	return out, nil
}

// listFiles lists the files named *ext under the folder dir of root, as
// paths from root, leaving out .git, bin and testdata folders.
func listFiles(root, dir, ext string) ([]string, error) {
	start := filepath.Join(root, filepath.FromSlash(dir))
	var out []string
	err := filepath.WalkDir(start, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != start && (strings.HasPrefix(d.Name(), ".") || d.Name() == "bin" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ext) {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	return out, err
}

// describeReach describes the reach of a machine (scripts/reach): the
// largest fleet of its profile's shape whose storm was not host-bound.
func describeReach(f string, data []byte) (entry, error) {
	var r reachfile.Reach
	if err := json.Unmarshal(data, &r); err != nil {
		return entry{}, fmt.Errorf("reading %s: %w", f, err)
	}
	failed := 0
	for _, t := range r.Trials {
		if !t.Passed {
			failed++
		}
	}
	e := entry{
		what:      fmt.Sprintf("the reach of this machine: the largest fleet whose storm completed and was not host-bound, %d nodes", r.Largest),
		profile:   strings.TrimSuffix(filepath.Base(r.Profile), ".yaml"),
		commit:    r.Tool,
		date:      r.Start.UTC().Format("2006-01-02"),
		machine:   r.Machine.String(),
		n:         fmt.Sprintf("%d sizes", len(r.Trials)),
		hostBound: fmt.Sprintf("%d of %d sizes failed", failed, len(r.Trials)),
	}
	if r.SmallestFailed > 0 {
		e.what += fmt.Sprintf(" (%d failed)", r.SmallestFailed)
	}
	if r.Max > 0 {
		e.n += fmt.Sprintf(" in %d–%d, to %.0f %%", r.Min, r.Max, 100*r.Resolution)
	}
	return e, nil
}
