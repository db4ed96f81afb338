package calibrate

import (
	"fmt"
	"html"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// verdict is a row's mark in the tables.
func verdict(r Row) string {
	switch {
	case r.Informational:
		return "info"
	case r.HostBound:
		return "host-bound"
	case r.Agree:
		return "ok"
	}
	return "DIFFERS"
}

// verdictCell is a row's verdict with its two-sample test, if it has one:
// "ok (KS D 0.12, p 0.81, shift +0.2 s of ±0.3)".
func verdictCell(r Row) string { return verdict(r) + testNote(r) }

// testNote is a checked row's two-sample test or shift in parentheses,
// after its verdict; "" without one.
func testNote(r Row) string {
	switch {
	case r.Informational:
	case r.Test != nil:
		return " (" + r.Test.String() + ")"
	case r.Shift != nil:
		return " (" + r.Shift.String() + ")"
	}
	return ""
}

func fmtNum(v float64) string {
	if v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

// fmtSide is a side's figure with its 95 % interval when it is not a
// point, "3.2 [2.6–3.8]", and the number of values when they are not
// restarts ("…, 22 periods"). A file written before intervals shows the
// range of its per-restart values instead: "3 (2–4)".
func fmtSide(v float64, s *Spread) string {
	switch {
	case s == nil:
		return fmtNum(v)
	case s.CI95 != nil:
		out := fmtNum(v)
		if s.CI95.Unbounded {
			out += " [too few]"
		} else if s.CI95.Lo != s.CI95.Hi {
			out += fmt.Sprintf(" [%s–%s]", fmtNum(s.CI95.Lo), fmtNum(s.CI95.Hi))
		}
		if s.Of != "" {
			out += fmt.Sprintf(", %d %s", s.N, s.Of)
		}
		return out
	case s.Min == s.Max:
		return fmtNum(v)
	}
	return fmt.Sprintf("%s (%s–%s)", fmtNum(v), fmtNum(s.Min), fmtNum(s.Max))
}

// judgedBy says how the rows were judged, for the tables' legends.
func judgedBy(cases []CaseResult) string {
	rules, intervals := false, false
	for _, c := range cases {
		for _, r := range c.Rows {
			rules = rules || r.Rule != ""
			intervals = intervals || (r.RealSpread != nil && r.RealSpread.CI95 != nil) || (r.SimulatedSpread != nil && r.SimulatedSpread.CI95 != nil)
		}
	}
	switch {
	case rules:
		return "In brackets, a figure's interval where it is not a point: for a count or a time to the last request, Student's t 95 % interval of the mean of the n per-restart values (n is the case's restarts); for a quantile of the not-ready periods, the distribution-free 95 % interval between two order statistics of the periods, whose number follows (\"too few\" below 6 periods for the median, 29 for the p90: any value is compatible); for the KS row, the t interval of the periods' mean. A count agrees when the gap between the two sides' intervals, 0 where they overlap, is within the tolerance of the real figure. A timing's tolerance is ±max(10 %, the resolution of the row's two ends, at most the absolute figure given): the time to the last request agrees when the 95 % interval of the Hodges–Lehmann shift of the model's per-restart values from the real ones (the median of their pairwise differences; the tolerance's 10 % of the real median) reaches into it, a quantile when the gap between its intervals is within it, and the not-ready periods as a distribution when a two-sample Kolmogorov–Smirnov test at 5 % cannot tell the real periods from the model's moved by at most the tolerance. The longest period is reported, not checked."
	case intervals:
		return "In brackets, a figure's interval where it is not a point: for a count or a time to the last request, Student's t 95 % interval of the mean of the n per-restart values (n is the case's restarts); for the median not-ready period, the distribution-free 95 % interval between two order statistics of the periods, whose number follows (\"too few\" below 6: any value is compatible); for the longest, the periods' range (a maximum has no confidence interval; \"too few\" below 6 periods too). A row agrees when the gap between the two sides' intervals, 0 where they overlap, is within the tolerance of the real figure."
	}
	return "Where the per-restart values differ, their range follows in parentheses, and a row is judged by the gap between the two ranges."
}

func fmtRatio(r Row) string {
	q := r.Ratio()
	switch {
	case math.IsInf(q, 1):
		return "∞"
	case r.Real == 0 && r.Simulated == 0:
		return "–"
	}
	return fmt.Sprintf("%.2f", q)
}

// WriteText writes the fidelity tables for a terminal.
func WriteText(w io.Writer, r *Result) error {
	kind := "hollow kubelet"
	if r.Backend == BackendContainerd {
		kind = "kubelet on containerd"
	}
	fmt.Fprintf(w, "Calibration: %d real (%s %s) vs %d simulated nodes%s, %d pods each, %s every %s\n",
		r.Nodes, kind, r.KubeVersion, r.Nodes, r.roundsNote(), r.PodsPerNode, probesOf(r.Cases), r.ProbePeriod)
	if l := r.apiLimits(); l != "" {
		fmt.Fprintf(w, "Both sides' kubelets: %s\n", l)
	}
	for _, c := range r.Cases {
		fmt.Fprintf(w, "\n== %s (%s, down %s; restarts real %d, simulated %d)\n", c.Name, c.Kind, c.Downtime, c.Restarts.Real, c.Restarts.Simulated)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "METRIC\tUNIT\tREAL\tSIMULATED\tSIM/REAL\t")
		for _, row := range c.Rows {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", row.Metric, row.Unit, fmtSide(row.Real, row.RealSpread), fmtSide(row.Simulated, row.SimulatedSpread), fmtRatio(row), verdictCell(row))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if c.Host != nil {
			fmt.Fprintf(w, "  %s\n", c.Host)
		}
		for _, e := range c.Errors {
			fmt.Fprintf(w, "  failed restart: %s\n", e)
		}
	}
	d := r.Disagreements()
	fmt.Fprintf(w, "\n%d rows outside tolerance (requests ±max(%g, %g%%), timings ±max(the row's resolution ≤ %g s, %g %%)). %s\n",
		len(d), r.Tolerance.RequestsAbsolute, 100*r.Tolerance.RequestsRelative, r.Tolerance.SecondsAbsolute, 100*r.Tolerance.SecondsRelative, judgedBy(r.Cases))
	return nil
}

// WriteMarkdown writes the fidelity tables as markdown (results/calibration).
func WriteMarkdown(w io.Writer, r *Result) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Calibration: simulated kubelet against the real one\n\n")
	fmt.Fprintf(&b, "%d real nodes (%s) and %d simulated nodes%s, %d pods each with %s (readiness and liveness) every %s. Simulated initDuration %s.\n\n",
		r.Nodes, r.RealDescription(), r.Nodes, r.roundsNote(), r.PodsPerNode, probesOf(r.Cases), r.ProbePeriod, r.InitDuration)
	if len(r.PodFeatures) > 0 {
		fmt.Fprintf(&b, "The pods also carry: %s.\n\n", strings.Join(r.PodFeatures, ", "))
	}
	if l := r.apiLimits(); l != "" {
		fmt.Fprintf(&b, "Both sides' kubelets run with %s.\n\n", l)
	}
	if r.Stagger != "" && r.Stagger != "0s" {
		fmt.Fprintf(&b, "Each case restarts the pairs of nodes (the i-th real and the i-th simulated) %s apart, in an order drawn for the case, and watches each node for the case's downtime and observation time from its own restart.\n\n", r.Stagger)
	}
	if r.Bystanders > 0 {
		fmt.Fprintf(&b, "Beside them, %d healthy KWOK nodes that no case restarts; the controller manager's --node-eviction-rate is %g/s.\n\n", r.Bystanders, r.NodeEvictionRate)
	}
	if r.Command != "" {
		fmt.Fprintf(&b, "Made with `%s` (%s, %s).\n\n", r.Command, r.Start.Format("2006-01-02 15:04 MST"), r.runTime())
	}
	if len(r.Rounds) > 1 {
		b.WriteString("Its rounds:\n\n")
		for i, rd := range r.Rounds {
			fmt.Fprintf(&b, "%d. `%s` (stormbench %s, %s, %s)\n", i+1, rd.Command, rd.Tool, rd.Start.Format("2006-01-02 15:04 MST"), rd.End.Sub(rd.Start).Round(time.Second))
		}
		b.WriteString("\n")
	}
	if r.Machine != nil {
		fmt.Fprintf(&b, "Machine: %s.\n\n", r.Machine)
	}
	if r.ModelFingerprint != "" {
		fmt.Fprintf(&b, "Model fingerprint %s (SHA-256 of %s).\n\n", r.ModelFingerprint, r.modelGoldens())
	}
	fmt.Fprintf(&b, "Tolerance: requests ±max(%g, %g %%) per restart, timings ±max(the row's resolution ≤ %g s, %g %%). Figures are per restart (sum over the K nodes ÷ K) unless the unit says seconds. %s\n",
		r.Tolerance.RequestsAbsolute, 100*r.Tolerance.RequestsRelative, r.Tolerance.SecondsAbsolute, 100*r.Tolerance.SecondsRelative, judgedBy(r.Cases))
	if !r.Complete {
		fmt.Fprintf(&b, "\n**Incomplete**: %s\n", strings.Join(r.Errors, "; "))
	}
	for _, c := range r.Cases {
		fmt.Fprintf(&b, "\n## %s\n\n%s, down %s, watched %s after; restarts: real %d, simulated %d.\n\n", c.Name, c.Kind, c.Downtime, c.Observe, c.Restarts.Real, c.Restarts.Simulated)
		b.WriteString("| metric | unit | real | simulated | sim/real | |\n|---|---|--:|--:|--:|---|\n")
		for _, row := range c.Rows {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", row.Metric, row.Unit, fmtSide(row.Real, row.RealSpread), fmtSide(row.Simulated, row.SimulatedSpread), fmtRatio(row), verdictCell(row))
		}
		if c.Host != nil {
			fmt.Fprintf(&b, "\n%s.\n", upperFirst(c.Host.String()))
		}
		for _, e := range c.Errors {
			fmt.Fprintf(&b, "\nFailed restart: %s\n", e)
		}
	}
	d := r.Disagreements()
	fmt.Fprintf(&b, "\n%d rows outside tolerance.\n", len(d))
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteHTML writes a self-contained HTML page of the fidelity tables.
func WriteHTML(w io.Writer, r *Result) error {
	var b strings.Builder
	e := html.EscapeString
	b.WriteString(`<!doctype html><html><head><meta charset="utf-8"><title>stormbench calibration</title><style>
body{font-family:system-ui,sans-serif;margin:2em;max-width:70em;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:.25em .6em}td.n{text-align:right;font-variant-numeric:tabular-nums}
tr.DIFFERS td{background:#fde2e2}tr.info td{color:#666}th{background:#f3f3f3}
</style></head><body>`)
	fmt.Fprintf(&b, "<h1>Calibration: simulated kubelet against the real one</h1><p>%d real nodes (%s) and %d simulated nodes%s, %d pods each, %s every %s.</p>",
		r.Nodes, e(r.RealDescription()), r.Nodes, e(r.roundsNote()), r.PodsPerNode, probesOf(r.Cases), e(r.ProbePeriod))
	if r.Command != "" {
		fmt.Fprintf(&b, "<p>Made with <code>%s</code>.</p>", e(r.Command))
	}
	fmt.Fprintf(&b, "<p>%s</p>", e(judgedBy(r.Cases)))
	for _, c := range r.Cases {
		fmt.Fprintf(&b, "<h2>%s</h2><p>%s, down %s; restarts: real %d, simulated %d.</p>", e(c.Name), e(c.Kind), c.Downtime, c.Restarts.Real, c.Restarts.Simulated)
		b.WriteString("<table><tr><th>metric</th><th>unit</th><th>real</th><th>simulated</th><th>sim/real</th><th></th></tr>")
		for _, row := range c.Rows {
			v := verdict(row)
			fmt.Fprintf(&b, `<tr class="%s"><td>%s</td><td>%s</td><td class="n">%s</td><td class="n">%s</td><td class="n">%s</td><td>%s</td></tr>`,
				v, e(row.Metric), e(row.Unit), fmtSide(row.Real, row.RealSpread), fmtSide(row.Simulated, row.SimulatedSpread), e(fmtRatio(row)), e(verdictCell(row)))
		}
		b.WriteString("</table>")
		if c.Host != nil {
			fmt.Fprintf(&b, "<p>%s.</p>", e(upperFirst(c.Host.String())))
		}
		for _, er := range c.Errors {
			fmt.Fprintf(&b, "<p>Failed restart: %s</p>", e(er))
		}
	}
	fmt.Fprintf(&b, "<p>%d rows outside tolerance.</p></body></html>\n", len(r.Disagreements()))
	_, err := io.WriteString(w, b.String())
	return err
}

// upperFirst is s with its first letter upper-case.
func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// apiLimits describes kubelet client limits other than the defaults, or
// is empty.
func (r *Result) apiLimits() string {
	var parts []string
	if r.KubeAPIQPS > 0 {
		parts = append(parts, fmt.Sprintf("kubeAPIQPS %d", r.KubeAPIQPS))
	}
	if r.KubeAPIBurst > 0 {
		parts = append(parts, fmt.Sprintf("kubeAPIBurst %d", r.KubeAPIBurst))
	}
	return strings.Join(parts, ", ")
}

// probesOf says which probe handlers the cases' pods had: "exec probes"
// for the exec cases alone, otherwise every handler used, the case
// names saying which ("exec, http and tcp probes (by case: +http, +tcp)").
func probesOf(cases []CaseResult) string {
	var kinds []string
	for _, c := range cases {
		if p := c.probeOf(); !slices.Contains(kinds, p) {
			kinds = append(kinds, p)
		}
	}
	switch len(kinds) {
	case 0:
		return "exec probes"
	case 1:
		return kinds[0] + " probes"
	}
	list := strings.Join(kinds[:len(kinds)-1], ", ") + " and " + kinds[len(kinds)-1]
	var suffixes []string
	for _, k := range kinds {
		if k != ProbeExec {
			suffixes = append(suffixes, "+"+k)
		}
	}
	return list + " probes (by case: " + strings.Join(suffixes, ", ") + ")"
}
