package report

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/stormbench/stormbench/bench/cluster"
	"github.com/stormbench/stormbench/bench/compare"
	"github.com/stormbench/stormbench/bench/result"
	"github.com/stormbench/stormbench/profiles"
)

// Options tune Build.
type Options struct {
	// Baseline names the variant the others are compared against; default
	// the first.
	Baseline string
	// Charts renders the SVG charts (needed by WriteHTML only).
	Charts bool
}

// Report is a result document turned into a report: run metadata, the key
// metrics compared across variants, charts, the kubelet request pattern
// and caveats.
type Report struct {
	// Title is the page title.
	Title string
	// Meta are (label, value) lines describing the run.
	Meta []MetaItem
	// Variants describe the variants, in run order.
	Variants []VariantInfo
	// Comparison holds the key metrics, variants against the baseline.
	Comparison *compare.Comparison
	// Flows splits the API excess requests per restart by who sent them
	// (compare.FlowMetric), variants against the baseline; nil when the
	// run has no flow figures.
	Flows *compare.Comparison
	// Highlights are the largest changes against the baseline, as sentences.
	Highlights []string
	// Coverage warns, per repetition, that its API figures rest on few
	// scrapes (LowCoverage); shown with the key metrics.
	Coverage []string
	// Sweep is the capacity sweep; nil unless the result holds sweep
	// variants ("<variant>/wave=<size>").
	Sweep *SweepSection
	// Sections hold the charts, by topic; empty unless Options.Charts.
	Sections []Section
	// Kubelet is the per-restart request table; Rows is empty when the run
	// had no clientLatency measurement.
	Kubelet KubeletTable
	// NotModelled lists what the simulation leaves out.
	NotModelled []string
	// Warnings are caveats about the figures: run errors, failed
	// measurements, measurement warnings.
	Warnings []string
}

// MetaItem is one line of run metadata.
type MetaItem struct {
	Label, Value string
}

// VariantInfo describes one variant of the run.
type VariantInfo struct {
	Name         string
	FeatureGates string
	Repetitions  int
	Restarts     int
	Complete     bool
}

// Section is a titled group of charts.
type Section struct {
	Title  string
	Intro  string
	Charts []Chart
}

// SweepSection is a report's capacity sweep: the figures per wave size,
// the largest safe wave, and charts against wave size.
type SweepSection struct {
	// Series hold one base variant each, in run order.
	Series []SweepSeries
	// Charts plot mutating p99 and peak request rate against wave size;
	// empty unless Options.Charts.
	Charts []Chart
}

// flowIntro says what the flow table splits.
const flowIntro = "Who sent the storm's API excess requests per restart, by the APF flow schema that classified them: the kubelets (real or simulated), each controller of kube-controller-manager by its service account, the scheduler, and the simulation's own (kwok, harness), which the key figure leaves out. Each flow is measured against its own requests in the baseline window."

// flowMetrics are the flow metrics of the flows any run of r measured, in
// flowOrder.
func flowMetrics(r *result.Result) []compare.Metric {
	seen := map[string]bool{}
	for i := range r.Variants {
		for f := range flowExcess(&r.Variants[i]) {
			seen[f] = true
		}
	}
	var out []compare.Metric
	for _, f := range flowOrder(seen) {
		out = append(out, compare.FlowMetric(f))
	}
	return out
}

// flowOrder lists the flows in cluster.Flows' order, then any other flow
// by name.
func flowOrder(flows map[string]bool) []string {
	var order []string
	for _, f := range cluster.Flows() {
		if flows[f] {
			order = append(order, f)
		}
	}
	for _, f := range slices.Sorted(maps.Keys(flows)) {
		if !slices.Contains(cluster.Flows(), f) {
			order = append(order, f)
		}
	}
	return order
}

// notModelled are the parts of a real kubelet restart the simulation leaves
// out; their API traffic and delays come on top of the figures.
var notModelled = []string{
	"Image-pull cancellation and re-pull: KWOK pods pull no images, so a restart that aborts in-flight pulls costs nothing here.",
	"Device-plugin re-registration: real device plugins re-register with a restarted kubelet and nodes re-advertise extended resources (a nodes/status update, with pods needing devices admitted only afterwards).",
	"Garbage-collection and eviction pauses: no image or container GC and no eviction manager run on simulated nodes, so post-restart housekeeping neither delays readiness nor adds deletes.",
}

// Build turns a result into a report.
func Build(in compare.Input, opts Options) (*Report, error) {
	r := in.Result
	prof, err := compare.RecordedProfile(in)
	if err != nil {
		return nil, fmt.Errorf("reporting: %w", err)
	}
	rep := &Report{NotModelled: notModelled}
	rep.Title = "stormbench report: run " + r.Run.ID
	if prof.Metadata.Name != "" {
		rep.Title = fmt.Sprintf("stormbench report: %s (run %s)", prof.Metadata.Name, r.Run.ID)
	}
	rep.Meta = runMeta(in, prof)
	groups := compare.GroupRuns([]compare.Input{in}, compare.GroupByVariant)
	for _, g := range groups {
		vi := VariantInfo{Name: g.Name, FeatureGates: gateList(g.FeatureGates), Repetitions: len(g.VariantRuns()), Complete: true}
		if g.KubernetesVersion != "" {
			vi.FeatureGates = "Kubernetes " + g.KubernetesVersion + ": " + vi.FeatureGates
		}
		for _, v := range g.VariantRuns() {
			vi.Restarts += v.Restarts
			vi.Complete = vi.Complete && v.Complete
		}
		rep.Variants = append(rep.Variants, vi)
	}
	if len(groups) > 0 {
		c, err := compare.Compare([]compare.Input{in}, compare.Options{GroupBy: compare.GroupByVariant, Baseline: opts.Baseline})
		if err != nil {
			return nil, err
		}
		rep.Comparison = c
		rep.Highlights = highlights(c)
		if ms := flowMetrics(r); len(ms) > 0 {
			if rep.Flows, err = compare.Compare([]compare.Input{in}, compare.Options{GroupBy: compare.GroupByVariant, Baseline: c.Baseline, Metrics: ms}); err != nil {
				return nil, err
			}
		}
		// The charts and the kubelet table follow the comparison's column
		// order, baseline first: its groups are these, reordered.
		groups = c.Groups
	}
	if t, ok := buildKubeletTable(groups); ok {
		rep.Kubelet = t
	}
	rep.Warnings = append(compare.InputWarnings(in), hostNotes(r)...)
	for _, g := range groups {
		for _, v := range g.VariantRuns() {
			if low := LowCoverage(v); low != "" {
				rep.Coverage = append(rep.Coverage, low)
			}
			for _, m := range v.Measurements {
				for _, w := range m.Warnings {
					rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s#%d: %s: %s", v.Variant, v.Repetition, m.Name, w))
				}
			}
		}
	}
	if series := Sweep(r); len(series) > 0 {
		rep.Sweep = &SweepSection{Series: series}
		if opts.Charts {
			if rep.Sweep.Charts, err = sweepCharts(series); err != nil {
				return nil, err
			}
		}
	}
	if opts.Charts && len(groups) > 0 {
		secs, err := buildSections(groups, func(v *result.VariantRun) []float64 { return waveStarts(prof, v) })
		if err != nil {
			return nil, err
		}
		rep.Sections = secs
	}
	return rep, nil
}

func gateList(g map[string]bool) string {
	if len(g) == 0 {
		return "defaults"
	}
	return strings.Join(gatePairs(g), ", ")
}

// gatePairs are the feature gates as "Name=true", by name.
func gatePairs(g map[string]bool) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(g)) {
		out = append(out, fmt.Sprintf("%s=%t", k, g[k]))
	}
	return out
}

func runMeta(in compare.Input, prof *profiles.Profile) []MetaItem {
	r := in.Result
	var meta []MetaItem
	add := func(l, v string) { meta = append(meta, MetaItem{l, v}) }
	status := "complete"
	if !r.Complete {
		status = "INCOMPLETE (the run stopped early; figures are partial)"
	}
	add("Result", fmt.Sprintf("%s, run %s, %s", in.Name, r.Run.ID, status))
	if prof.Metadata.Name != "" {
		p := prof.Metadata.Name
		if prof.Metadata.Description != "" {
			p += ": " + prof.Metadata.Description
		}
		add("Profile", p)
	}
	if k := prof.StormKind(); k != "" {
		add("Storm", k+" restart")
	}
	tool := "stormbench " + r.Run.ToolVersion
	if r.Run.GitRevision != "" && r.Run.GitRevision != "unknown" {
		tool += " (" + r.Run.GitRevision + ")"
	}
	add("Tool", tool)
	when := r.Run.Start.UTC().Format(time.RFC3339)
	if !r.Run.End.IsZero() {
		when += fmt.Sprintf(", %s", r.Run.End.Sub(r.Run.Start).Round(time.Second))
	}
	add("Started", when)
	cl := "external (--kubeconfig)"
	if r.Run.Cluster.Embedded {
		cl = "embedded kwokctl cluster"
	}
	var vers []string
	for _, k := range slices.Sorted(maps.Keys(r.Run.Cluster.Versions)) {
		vers = append(vers, k+" "+r.Run.Cluster.Versions[k])
	}
	if len(vers) > 0 {
		cl += ": " + strings.Join(vers, ", ")
	}
	// An upgrade's comparison: the storms of other versions ran on their
	// control planes, the fleet restored into each.
	var others []string
	for _, v := range r.Variants {
		if v.KubernetesVersion != "" && !slices.Contains(others, v.KubernetesVersion) {
			others = append(others, v.KubernetesVersion)
		}
	}
	if len(others) > 0 {
		cl += fmt.Sprintf("; the fleet made on %s and restored into the control plane of %s before each of those variants' storms", r.Run.Cluster.KubernetesVersion, strings.Join(others, ", "))
	}
	add("Cluster", cl)
	if p := provenance(r); p != "" {
		add("Machine", p)
	}
	s := r.Run.Cluster.Settings
	add("Settings", fmt.Sprintf("node-monitor-grace-period %s, node lease %s, node status every %s, endpointslice-updates-batch-period %s",
		time.Duration(s.NodeMonitorGracePeriod), time.Duration(s.NodeLeaseDuration), time.Duration(s.NodeStatusUpdateFrequency), time.Duration(s.EndpointSliceUpdatesBatchPeriod))+
		evictionRate(s))
	if note, ok := s.RelaxedHeartbeats(); ok {
		add("Heartbeats", note)
	}
	switch s.APF {
	case "realistic":
		add("APF", "realistic: controllers, scheduler, KWOK and stormbench under identities of their own, classified and queued as in a kubeadm cluster")
	case "exempt":
		add("APF", "exempt: every component ran as system:masters, which API Priority and Fairness never queues")
	}
	add("Fleet", fmt.Sprintf("%d nodes, %d pods, %d services, seed %d", r.Run.Fleet.Nodes, r.Run.Fleet.Pods, r.Run.Fleet.Services, r.Run.Seed))
	if notes := isolationNotes(r); len(notes) > 0 {
		add("Storms", strings.Join(notes, "; "))
	}
	return meta
}

// highlights lists the headline sentences of an A/B (compare.Headlines),
// then per compared variant the key metrics that changed by at least 10 %
// from the baseline, largest first, at most six.
func highlights(c *compare.Comparison) []string {
	out := compare.Headlines(c)
	for gi := 1; gi < len(c.Groups); gi++ {
		type hl struct {
			text string
			mag  float64
		}
		var hs []hl
		for _, r := range c.Rows {
			d := r.Cells[gi].Delta
			if d == nil || d.Text == "~" {
				continue
			}
			mag := math.Inf(1)
			if d.Change != nil {
				mag = math.Abs(*d.Change)
			}
			if mag < 0.10 {
				continue
			}
			hs = append(hs, hl{fmt.Sprintf("%s %s (%s → %s)", r.Metric.Label, d.Text, compare.FormatValue(r.Cells[0].Median, r.Metric.Unit), compare.FormatValue(r.Cells[gi].Median, r.Metric.Unit)), mag})
		}
		slices.SortStableFunc(hs, func(a, b hl) int { return cmp.Compare(b.mag, a.mag) })
		if len(hs) > 6 {
			hs = hs[:6]
		}
		if len(hs) == 0 {
			out = append(out, fmt.Sprintf("%s vs %s: no key metric changed by 10%% or more.", c.Groups[gi].Name, c.Baseline))
			continue
		}
		var parts []string
		for _, h := range hs {
			parts = append(parts, h.text)
		}
		caveat := ""
		if slices.ContainsFunc(c.Rows, func(r compare.Row) bool { d := r.Cells[gi].Delta; return d != nil && d.TooFew }) {
			caveat = " (too few repetitions to call these significant)"
		}
		out = append(out, fmt.Sprintf("%s vs %s%s: %s.", c.Groups[gi].Name, c.Baseline, caveat, strings.Join(parts, "; ")))
	}
	return out
}

// waveStarts returns the offsets from the storm start of the storm's
// second and later waves: the run's record of its schedule, or in files
// written before it was recorded, derived from the profile as bench/storm
// schedules them: waves of waves.size of the selected nodes (here: the
// restarts), waves.interval apart.
func waveStarts(prof *profiles.Profile, v *result.VariantRun) []float64 {
	if len(v.WaveStarts) > 0 {
		return v.WaveStarts[1:]
	}
	if prof.Storm == nil || prof.Storm.Waves.Interval.Duration <= 0 || prof.Storm.Waves.Size == "" || v.Restarts == 0 {
		return nil
	}
	n, pct, err := profiles.ParseCountOrPercent(prof.Storm.Waves.Size)
	if err != nil {
		return nil
	}
	if pct {
		n = max(1, (v.Restarts*n+99)/100)
	}
	n = min(n, v.Restarts)
	var out []float64
	interval := prof.Storm.Waves.Interval.Seconds()
	for k := 1; k < (v.Restarts+n-1)/n; k++ {
		out = append(out, float64(k)*interval)
	}
	return out
}

// evictionRate names the controller manager's --node-eviction-rate when the
// run knows it (embedded clusters): it bounds how many nodes a storm that
// outlasts the grace period loses their pods on.
func evictionRate(s result.Settings) string {
	if r, ok := s.Flags["kube-controller-manager"]["node-eviction-rate"]; ok {
		return ", node-eviction-rate " + r + " nodes/s"
	}
	return ""
}
