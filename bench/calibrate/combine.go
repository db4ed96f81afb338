package calibrate

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
)

// Combined is one fidelity table for the simulated kubelet against both
// real backends, built from a hollow and a containerd calibration.
//
// The containerd column is the reference for the cases a fake runtime
// cannot show (runtime restarts and reboots: containers that survive in
// their shims, or die with the node); the hollow column is the cheap
// reference for everything else. A row also says whether the two real
// backends agree with each other, within the reference's tolerance.
type Combined struct {
	Hollow     *Result        `json:"hollow"`
	Containerd *Result        `json:"containerd"`
	Cases      []CombinedCase `json:"cases"`
}

// CombinedCase is one case's combined table.
type CombinedCase struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	// Reference is the backend whose verdicts the case takes.
	Reference string        `json:"reference"`
	Rows      []CombinedRow `json:"rows"`
	// Errors are the failed restarts of either run.
	Errors []string `json:"errors,omitempty"`
}

// CombinedRow is one metric of a case against both backends. A backend
// that did not run the case has a nil column.
type CombinedRow struct {
	Metric string `json:"metric"`
	Unit   string `json:"unit"`
	// Simulated is the simulated side of the judging backend's run, and
	// SimulatedSpread its per-restart range.
	Simulated       float64 `json:"simulated"`
	SimulatedSpread *Spread `json:"simulatedSpread,omitempty"`
	Hollow          *Row    `json:"hollow,omitempty"`
	Containerd      *Row    `json:"containerd,omitempty"`
	// Verdict is the judging row's: ok, DIFFERS or info.
	Verdict string `json:"verdict"`
	// Judge is the backend whose row gave the verdict: the case's
	// reference, or containerd where the real backends disagree.
	Judge string `json:"judge,omitempty"`
	// RealSidesDiffer says hollow and containerd disagree beyond the
	// reference's tolerance.
	RealSidesDiffer bool `json:"realSidesDiffer,omitempty"`
}

// referenceFor says which backend a case of the given kind is judged by.
func referenceFor(kind string) string {
	if kind == "runtime" || kind == "reboot" {
		return BackendContainerd
	}
	return BackendHollow
}

// Combine builds the combined table. hollow and containerd must be
// calibrations of those backends of one kubelet version; either may lack
// cases the other has.
func Combine(hollow, containerd *Result) (*Combined, error) {
	errs := appendUnless(nil, backendOf(hollow) == BackendHollow, "the first result is a %s calibration, want hollow", backendOf(hollow))
	errs = appendUnless(errs, backendOf(containerd) == BackendContainerd, "the second result is a %s calibration, want containerd", backendOf(containerd))
	errs = appendUnless(errs, hollow.KubeVersion == containerd.KubeVersion, "kubelet versions differ: hollow %s, containerd %s", hollow.KubeVersion, containerd.KubeVersion)
	errs = appendUnless(errs, hollow.apiLimits() == containerd.apiLimits(), "kubelet client limits differ: hollow %q, containerd %q", hollow.apiLimits(), containerd.apiLimits())
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	out := &Combined{Hollow: hollow, Containerd: containerd}
	for _, name := range caseNames(hollow, containerd) {
		out.Cases = append(out.Cases, combineCase(name, hollow, containerd))
	}
	return out, nil
}

// caseByName returns r's case of that name, nil if it has none.
func caseByName(r *Result, name string) *CaseResult {
	if i := slices.IndexFunc(r.Cases, func(c CaseResult) bool { return c.Name == name }); i >= 0 {
		return &r.Cases[i]
	}
	return nil
}

// caseNames are the cases of either result in the order of the
// calibration's case list, then any the list no longer has.
func caseNames(hollow, containerd *Result) []string {
	var names []string
	for _, c := range Cases() {
		if caseByName(hollow, c.Name) != nil || caseByName(containerd, c.Name) != nil {
			names = append(names, c.Name)
		}
	}
	for _, c := range slices.Concat(hollow.Cases, containerd.Cases) {
		names = appendNew(names, c.Name)
	}
	return names
}

// combineCase puts one case's rows of both backends side by side and
// judges each by the case's reference backend, or by containerd where the
// two real backends disagree.
func combineCase(name string, hollow, containerd *Result) CombinedCase {
	h, c := caseByName(hollow, name), caseByName(containerd, name)
	first := cmp.Or(h, c)
	cc := CombinedCase{Name: name, Kind: first.Kind, Reference: referenceFor(first.Kind)}
	ref, other, tol := h, c, hollow.Tolerance
	if cc.Reference == BackendContainerd {
		ref, other, tol = c, h, containerd.Tolerance
	}
	if ref == nil {
		// Judge by the backend that ran it.
		ref, other = other, nil
		cc.Reference = BackendHollow
		if ref == c {
			cc.Reference = BackendContainerd
		}
	}
	for _, side := range []struct {
		name string
		c    *CaseResult
	}{{BackendHollow, h}, {BackendContainerd, c}} {
		if side.c != nil {
			for _, e := range side.c.Errors {
				cc.Errors = append(cc.Errors, side.name+": "+e)
			}
		}
	}
	for _, m := range rowMetrics(ref, other) {
		cc.Rows = append(cc.Rows, combineRow(m, h, c, ref, tol, cc.Reference))
	}
	return cc
}

// rowMetrics are the reference's rows in its order, then the other's
// extra rows.
func rowMetrics(ref, other *CaseResult) []Row {
	metrics := []Row{}
	have := map[string]bool{}
	for _, cr := range []*CaseResult{ref, other} {
		if cr == nil {
			continue
		}
		for _, r := range cr.Rows {
			if !have[r.Metric] {
				metrics, have[r.Metric] = append(metrics, r), true
			}
		}
	}
	return metrics
}

// rowOf is cr's row of m's metric. A backend that ran the case and has no
// row for a request saw none on either side: its row is 0 against 0. nil
// when the backend did not run the case.
func rowOf(cr *CaseResult, m Row) *Row {
	if cr == nil {
		return nil
	}
	if r := caseRow(cr, m.Metric); r != nil {
		return r
	}
	return &Row{Metric: m.Metric, Unit: m.Unit, Agree: true, Informational: m.Informational}
}

// startTimed says whether a row times the kubelet from its exec, which
// the hollow kubelet cannot show: its stub container manager and fake
// cAdvisor skip cadvisor.New's and NewContainerManager's host probing
// (cmd/kubelet/app/server.go run), so it sends its first request about a
// fifth of a second sooner than a kubelet on a real node. Such a row is
// judged by containerd wherever it ran the case.
func startTimed(metric string) bool { return metric == MetricLastRequest }

// combineRow is m's row of both backends (h, c), judged by ref's.
func combineRow(m Row, h, c, ref *CaseResult, tol Tolerance, reference string) CombinedRow {
	row := CombinedRow{Metric: m.Metric, Unit: m.Unit, Hollow: rowOf(h, m), Containerd: rowOf(c, m)}
	r := rowOf(ref, m)
	row.Simulated, row.SimulatedSpread, row.Verdict = r.Simulated, r.SimulatedSpread, verdict(*r)
	if row.Hollow != nil && row.Containerd != nil && !m.Informational {
		// The two real sides, judged by the row's own rule: containerd
		// in the real side's place, hollow in the model's.
		sides := Row{Metric: m.Metric, Unit: m.Unit, Real: row.Containerd.Real, Simulated: row.Hollow.Real,
			RealSpread: row.Containerd.RealSpread, SimulatedSpread: row.Hollow.RealSpread, Rule: m.Rule, Span: m.Span}
		tol.judge(&sides)
		row.RealSidesDiffer = !sides.Agree
		// Where the two real backends disagree, the real kubelet on a
		// real runtime is the arbiter: hollow is only its cheap stand-in
		// (it has no DRA driver, and its fake runtime emits other events).
		if row.RealSidesDiffer || startTimed(m.Metric) {
			row.Simulated, row.SimulatedSpread, row.Verdict, row.Judge = row.Containerd.Simulated, row.Containerd.SimulatedSpread, verdict(*row.Containerd), BackendContainerd
		}
	}
	row.Judge = cmp.Or(row.Judge, reference)
	return row
}

func backendOf(r *Result) string { return cmp.Or(r.Backend, BackendHollow) }

// Disagreements lists "case: metric" of every row whose reference verdict
// is DIFFERS, and the cases with failed restarts.
func (c *Combined) Disagreements() []string {
	var out []string
	for _, cc := range c.Cases {
		if len(cc.Errors) > 0 {
			out = append(out, cc.Name+": failed restarts")
		}
		for _, r := range cc.Rows {
			if r.Verdict == "DIFFERS" {
				out = append(out, cc.Name+": "+r.Metric)
			}
		}
	}
	return out
}

// RealSidesDiffer counts the rows where hollow and containerd disagree.
func (c *Combined) RealSidesDiffer() int {
	n := 0
	for _, cc := range c.Cases {
		for _, r := range cc.Rows {
			if r.RealSidesDiffer {
				n++
			}
		}
	}
	return n
}

func realCell(r *Row) string {
	if r == nil {
		return "–"
	}
	return fmtSide(r.Real, r.RealSpread)
}

func ratioCell(sim float64, r *Row) string {
	if r == nil {
		return "–"
	}
	return fmtRatio(Row{Real: r.Real, Simulated: sim})
}

func refRow(cc CombinedCase, r CombinedRow) *Row {
	if cmp.Or(r.Judge, cc.Reference) == BackendContainerd {
		return r.Containerd
	}
	return r.Hollow
}

// combinedVerdict is a row's verdict with the judging row's two-sample
// test, if it has one.
func combinedVerdict(cc CombinedCase, r CombinedRow) string {
	if ref := refRow(cc, r); ref != nil && r.Verdict != "info" {
		return r.Verdict + testNote(*ref)
	}
	return r.Verdict
}

func realSides(r CombinedRow) string {
	if r.RealSidesDiffer {
		return "hollow≠containerd: judged by containerd"
	}
	return ""
}

func (c *Combined) header() string {
	return fmt.Sprintf("%d+%d real nodes (hollow kubelets%s; the %s kubelet on containerd%s) against as many simulated ones, %d pods each, %s every %s",
		c.Hollow.Nodes, c.Containerd.Nodes, c.Hollow.roundsNote(), c.Containerd.KubeVersion, c.Containerd.roundsNote(), c.Containerd.PodsPerNode, probesOf(append(slices.Clone(c.Hollow.Cases), c.Containerd.Cases...)), c.Containerd.ProbePeriod)
}

// WriteCombinedText writes the combined table for a terminal.
func WriteCombinedText(w io.Writer, c *Combined) error {
	fmt.Fprintf(w, "Calibration, both backends: %s\n", c.header())
	for _, cc := range c.Cases {
		fmt.Fprintf(w, "\n== %s (%s; reference: %s)\n", cc.Name, cc.Kind, cc.Reference)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "METRIC\tUNIT\tSIMULATED\tHOLLOW\tCONTAINERD\tSIM/REF\t\t")
		for _, r := range cc.Rows {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Metric, r.Unit, fmtSide(r.Simulated, r.SimulatedSpread), realCell(r.Hollow), realCell(r.Containerd),
				ratioCell(r.Simulated, refRow(cc, r)), combinedVerdict(cc, r), realSides(r))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		for _, e := range cc.Errors {
			fmt.Fprintf(w, "  failed restart: %s\n", e)
		}
	}
	fmt.Fprintf(w, "\n%d rows outside tolerance of their reference; %d rows where hollow and containerd disagree\n", len(c.Disagreements()), c.RealSidesDiffer())
	return nil
}

// WriteCombinedMarkdown writes the combined table as markdown.
func WriteCombinedMarkdown(w io.Writer, c *Combined) error {
	var b strings.Builder
	b.WriteString("# Calibration: simulated kubelet against hollow and containerd-backed kubelets\n\n")
	fmt.Fprintf(&b, "%s.\n\n", c.header())
	fmt.Fprintf(&b, "Each case is judged against its reference column: containerd for runtime restarts and reboots (what a fake runtime cannot show), hollow for the rest. *hollow≠containerd* marks rows where the two real backends disagree beyond the tolerance (requests ±max(%g, %g %%), timings ±max(the row's resolution ≤ %g s, %g %%)); those rows are judged by containerd, the real kubelet on a real runtime. The simulated column and sim/ref are the judging run's. %s\n\n",
		c.Containerd.Tolerance.RequestsAbsolute, 100*c.Containerd.Tolerance.RequestsRelative, c.Containerd.Tolerance.SecondsAbsolute, 100*c.Containerd.Tolerance.SecondsRelative, judgedBy(append(slices.Clone(c.Hollow.Cases), c.Containerd.Cases...)))
	for _, r := range []*Result{c.Hollow, c.Containerd} {
		if r.Command != "" {
			fmt.Fprintf(&b, "- %s: `%s` (%s, %s)", backendOf(r), r.Command, r.Start.Format("2006-01-02 15:04 MST"), r.runTime())
			if r.ModelFingerprint != "" {
				fmt.Fprintf(&b, "; model fingerprint %.12s", r.ModelFingerprint)
			}
			if r.Machine != nil {
				fmt.Fprintf(&b, "; machine: %s", r.Machine)
			}
			b.WriteString("\n")
		}
	}
	for _, cc := range c.Cases {
		fmt.Fprintf(&b, "\n## %s\n\n%s; reference: %s.\n\n", cc.Name, cc.Kind, cc.Reference)
		b.WriteString("| metric | unit | simulated | hollow | containerd | sim/ref | | real sides |\n|---|---|--:|--:|--:|--:|---|---|\n")
		for _, r := range cc.Rows {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", r.Metric, r.Unit, fmtSide(r.Simulated, r.SimulatedSpread), realCell(r.Hollow), realCell(r.Containerd),
				ratioCell(r.Simulated, refRow(cc, r)), combinedVerdict(cc, r), realSides(r))
		}
		for _, e := range cc.Errors {
			fmt.Fprintf(&b, "\nFailed restart: %s\n", e)
		}
	}
	fmt.Fprintf(&b, "\n%d rows outside tolerance of their reference; %d rows where hollow and containerd disagree.\n", len(c.Disagreements()), c.RealSidesDiffer())
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteOutsideMarkdown writes what a reader of the calibration needs first:
// which two runs the table is of (commit, date, machine, model, n), and
// every row outside tolerance of its judge, as a markdown table. It is the
// generated verdict of results/calibration/README.md.
func WriteOutsideMarkdown(w io.Writer, c *Combined) error {
	var b strings.Builder
	for _, r := range []*Result{c.Hollow, c.Containerd} {
		fmt.Fprintf(&b, "- %s: stormbench %s, %s, %s, %d real + %d simulated nodes%s, %d pods each; model %.12s; machine %s\n",
			backendOf(r), cmp.Or(r.Tool, "(commit not recorded)"), r.Start.UTC().Format("2006-01-02"), r.runTime(), r.Nodes, r.Nodes, r.roundsNote(), r.PodsPerNode, cmp.Or(r.ModelFingerprint, "not recorded"), r.Machine)
	}
	d := c.Disagreements()
	fmt.Fprintf(&b, "\n**%d rows outside tolerance of their reference**; %d rows where hollow and containerd disagree.\n", len(d), c.RealSidesDiffer())
	if len(d) == 0 {
		_, err := io.WriteString(w, b.String())
		return err
	}
	b.WriteString("\n| case | row | judged by | real | simulated | verdict |\n|---|---|---|--:|--:|---|\n")
	for _, cc := range c.Cases {
		for _, e := range cc.Errors {
			fmt.Fprintf(&b, "| %s | failed restart | – | – | – | %s |\n", cc.Name, e)
		}
		for _, r := range cc.Rows {
			if r.Verdict != "DIFFERS" {
				continue
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", cc.Name, r.Metric, cmp.Or(r.Judge, cc.Reference), realCell(refRow(cc, r)), fmtSide(r.Simulated, r.SimulatedSpread), combinedVerdict(cc, r))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteCombinedHTML writes the combined table as a self-contained page.
func WriteCombinedHTML(w io.Writer, c *Combined) error {
	var b strings.Builder
	e := html.EscapeString
	b.WriteString(`<!doctype html><html><head><meta charset="utf-8"><title>stormbench calibration: both backends</title><style>
body{font-family:system-ui,sans-serif;margin:2em;max-width:80em;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:.25em .6em}td.n{text-align:right;font-variant-numeric:tabular-nums}
tr.DIFFERS td{background:#fde2e2}tr.info td{color:#666}th{background:#f3f3f3}td.ref{font-weight:bold}td.split{background:#fff4d6}
</style></head><body>`)
	fmt.Fprintf(&b, "<h1>Calibration: simulated kubelet against hollow and containerd-backed kubelets</h1><p>%s. Each case is judged against its reference column (bold): containerd for runtime restarts and reboots, hollow for the rest. Yellow: the two real backends disagree, and containerd judges the row.</p><p>%s</p>", e(c.header()), e(judgedBy(append(slices.Clone(c.Hollow.Cases), c.Containerd.Cases...))))
	for _, cc := range c.Cases {
		fmt.Fprintf(&b, "<h2>%s</h2><p>%s; reference: %s.</p>", e(cc.Name), e(cc.Kind), e(cc.Reference))
		b.WriteString("<table><tr><th>metric</th><th>unit</th><th>simulated</th><th>hollow</th><th>containerd</th><th>sim/ref</th><th></th><th>real sides</th></tr>")
		for _, r := range cc.Rows {
			cls := func(backend string) string {
				var c []string
				if backend == r.Judge {
					c = append(c, "ref")
				}
				if r.RealSidesDiffer {
					c = append(c, "split")
				}
				return strings.Join(append(c, "n"), " ")
			}
			fmt.Fprintf(&b, `<tr class="%s"><td>%s</td><td>%s</td><td class="n">%s</td><td class="%s">%s</td><td class="%s">%s</td><td class="n">%s</td><td>%s</td><td>%s</td></tr>`,
				e(r.Verdict), e(r.Metric), e(r.Unit), fmtSide(r.Simulated, r.SimulatedSpread), cls(BackendHollow), realCell(r.Hollow), cls(BackendContainerd), realCell(r.Containerd),
				e(ratioCell(r.Simulated, refRow(cc, r))), e(combinedVerdict(cc, r)), e(realSides(r)))
		}
		b.WriteString("</table>")
		for _, er := range cc.Errors {
			fmt.Fprintf(&b, "<p>Failed restart: %s</p>", e(er))
		}
	}
	fmt.Fprintf(&b, "<p>%d rows outside tolerance of their reference; %d rows where hollow and containerd disagree.</p></body></html>\n", len(c.Disagreements()), c.RealSidesDiffer())
	_, err := io.WriteString(w, b.String())
	return err
}

// ReadFile reads and validates a calibration result document.
func ReadFile(path string) (*Result, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var r Result
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("%s: not a calibration result: %w", path, err)
	}
	if err := r.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &r, nil
}
