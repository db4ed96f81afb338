package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/stormbench/stormbench/bench/cluster"
	"github.com/stormbench/stormbench/bench/compare"
	"github.com/stormbench/stormbench/bench/measure"
	"github.com/stormbench/stormbench/bench/measure/apiserver"
	"github.com/stormbench/stormbench/bench/measure/churn"
	"github.com/stormbench/stormbench/bench/measure/clientlatency"
	"github.com/stormbench/stormbench/bench/measure/recovery"
	"github.com/stormbench/stormbench/bench/measure/self"
	"github.com/stormbench/stormbench/bench/result"
)

// WriteSummary writes the end-of-run summary: one column per variant
// repetition and one row per headline figure (defined in METRICS.md), then
// any errors and warnings. A figure a run did not measure shows as "-".
func WriteSummary(w io.Writer, r *result.Result) error {
	ew := &errWriter{w: w}
	status := "complete"
	if !r.Complete {
		status = "INCOMPLETE"
	}
	ew.printf("stormbench %s  run %s  %d nodes  %d pods  %d services  seed %d  %s\n",
		r.Run.ToolVersion, r.Run.ID, r.Run.Fleet.Nodes, r.Run.Fleet.Pods, r.Run.Fleet.Services, r.Run.Seed, status)
	if p := provenance(r); p != "" {
		ew.printf("machine: %s\n", p)
	}
	if note, ok := r.Run.Cluster.Settings.RelaxedHeartbeats(); ok {
		ew.printf("%s\n", note)
	}
	if r.Run.Cluster.Settings.APF == "exempt" {
		ew.printf("APF exempt: every component ran as system:masters, so no request was queued or rejected by API Priority and Fairness\n")
	}
	if len(r.Variants) == 0 {
		ew.printf("no variant ran\n")
	} else {
		if err := writeSummaryTable(ew, r); err != nil {
			return err
		}
		if err := writeSummaryStats(ew, r); err != nil {
			return err
		}
	}
	ew.each("%s\n", summaryNotes(r))
	return ew.err
}

// writeSummaryTable writes one column per variant repetition and one row
// per headline figure.
func writeSummaryTable(w io.Writer, r *result.Result) error {
	reps := false
	for _, v := range r.Variants {
		reps = reps || v.Repetition > 0
	}
	header := []string{""}
	for _, v := range r.Variants {
		name := v.Variant
		if reps {
			name += "#" + strconv.Itoa(v.Repetition)
		}
		header = append(header, name)
	}
	rows := [][]string{header}
	for _, row := range summaryTableRows(r) {
		cells := []string{row.label}
		for i := range r.Variants {
			cells = append(cells, row.cell(&r.Variants[i]))
		}
		rows = append(rows, cells)
	}
	if err := writeColumns(w, rows); err != nil {
		return fmt.Errorf("writing summary: %w", err)
	}
	return nil
}

// summaryNotes are the run's errors and warnings as the summary lists them
// after its table.
func summaryNotes(r *result.Result) []string {
	var notes []string
	notes = append(notes, isolationNotes(r)...)
	for _, e := range r.Errors {
		notes = append(notes, "error: "+e)
	}
	for i := range r.Variants {
		if low := LowCoverage(&r.Variants[i]); low != "" {
			notes = append(notes, "warning: "+low)
		}
	}
	for _, n := range hostNotes(r) {
		notes = append(notes, "warning: "+n)
	}
	for _, v := range r.Variants {
		tag := fmt.Sprintf("%s#%d", v.Variant, v.Repetition)
		if v.ResetSeconds > 0 && r.Run.Isolation == "" {
			notes = append(notes, fmt.Sprintf("%s: the fleet snapshot was restored before it (restore, fleet Ready and request rate steady: %s)", tag, fmtSeconds(v.ResetSeconds)))
		}
		for _, e := range v.Errors {
			notes = append(notes, fmt.Sprintf("error: %s: %s", tag, e))
		}
		for _, m := range v.Measurements {
			if m.Error != "" {
				notes = append(notes, fmt.Sprintf("error: %s: %s: %s", tag, m.Name, m.Error))
			}
			if n := len(m.Warnings); n > 0 {
				notes = append(notes, fmt.Sprintf("warning: %s: %s: %s", tag, m.Name, m.Warnings[0]))
				if n > 1 {
					notes = append(notes, fmt.Sprintf("warning: %s: %s: %d more warnings in the result file", tag, m.Name, n-1))
				}
			}
		}
	}
	return notes
}

// summaryStatMetrics are the figures the summary shows with their
// intervals over the repetitions.
var summaryStatMetrics = []string{
	result.MetricRequests, result.MetricExcessPerRestart, result.MetricRequestRatePeak, result.MetricMutatingP99,
	result.MetricSliceWrites, result.MetricNotReadySeconds, result.MetricOutageSeconds,
	result.MetricNodeReadyP50, result.MetricPodReadyP99, result.MetricFleetRecovered,
}

// writeSummaryStats writes, when a variant ran more than once, the
// medians of the key figures with their intervals and n, and the changes
// against the first variant; and for an A/B the headline sentences, which
// say when the runs are too few for an interval or a test.
func writeSummaryStats(w *errWriter, r *result.Result) error {
	ms, err := compare.LookupMetrics(summaryStatMetrics...)
	if err != nil {
		return err
	}
	c, err := compare.Compare([]compare.Input{{Name: r.Run.ID, Result: r}}, compare.Options{GroupBy: compare.GroupByVariant, Metrics: ms})
	if err != nil {
		return nil // no variant ran: the table above says so
	}
	reps := false
	for _, g := range c.Groups {
		reps = reps || len(g.Runs) > 1
	}
	if reps {
		w.printf("\n%s\n", intervalLegend(c))
		rows := newCompareTable(c, false).Table.texts()
		rows[0][0] = ""
		for gi, g := range c.Groups {
			rows[0][max(1, 2*gi)] = fmt.Sprintf("%s (n=%d)", g.Name, len(g.Runs)) // the baseline's column, then each group's value column
		}
		if err := writeColumns(w, rows); err != nil {
			return fmt.Errorf("writing summary: %w", err)
		}
		for i, n := range c.Notes {
			w.printf("%s %s\n", superscript(i+1), n)
		}
	}
	if hs := compare.Headlines(c); len(hs) > 0 {
		w.printf("\n")
		w.each("%s\n", hs)
	}
	return nil
}

// isolationNotes say in what order the storms ran and whether each
// started from the same fleet.
func isolationNotes(r *result.Result) []string {
	var out []string
	for _, note := range []string{orderNote(r), scheduleNote(r)} {
		if note != "" {
			out = append(out, note)
		}
	}
	switch r.Run.Isolation {
	case result.IsolationRestored:
		lo, hi := math.Inf(1), 0.0
		for _, v := range r.Variants {
			if v.ResetSeconds > 0 {
				lo, hi = min(lo, v.ResetSeconds), max(hi, v.ResetSeconds)
			}
		}
		took := ""
		if hi > 0 {
			took = fmt.Sprintf(" (restore, fleet Ready and request rate steady: %s to %s each)", fmtSeconds(lo), fmtSeconds(hi))
		}
		out = append(out, "isolated: the fleet snapshot was restored before every storm"+took)
	case result.IsolationNone:
		out = append(out, "not isolated: every storm started from the state the previous one left (an existing cluster, --no-restore or real kubelets)")
	}
	return out
}

type summaryRow struct {
	label string
	cell  func(v *result.VariantRun) string
}

var summaryRows = []summaryRow{
	{"restarts", func(v *result.VariantRun) string { return strconv.Itoa(v.Restarts) }},
	{"API requests (storm)", stormValue(apiserver.Name, apiserver.Requests, fmtCount)},
	{"API requests peak/s", stormValue(apiserver.Name, apiserver.RequestRatePeak, fmtRate)},
	{"API burst seconds", stormValue(apiserver.Name, apiserver.BurstSeconds, fmtSeconds)},
	{"API excess requests/restart", stormValue(apiserver.Name, apiserver.ExcessPerRestart, fmtRate)},
	// flowRowsAfter: one row per flow here (summaryTableRows).
	{"  the simulation's own: harness / KWOK", simulationOwn},
	{"  raw: all requests, the simulation's included", stormValue(apiserver.Name, apiserver.RawExcessPerRestart, fmtRate)},
	{"simulated kubelet requests/restart", kubeletRequests},
	{"429s", stormValue(apiserver.Name, apiserver.Throttled, fmtCount)},
	{"APF peak queued / worst wait p99", apfQueueing},
	{"p99 mutating storm/baseline", p99Pair(apiserver.ClassMutating)},
	{"p99 LIST storm/baseline", p99Pair(apiserver.ClassList)},
	{"kubelet LIST / WATCH per restart", relists},
	{"slice writes", stormValue(churn.Name, churn.SliceWrites, fmtCount)},
	{"ready flips to not-ready/ready", flips},
	{"Endpoints writes/restart (/flip)", downstream("endpoints", "")},
	{"workload status writes/restart (/flip)", downstream("deployments", "status", "replicasets", "status", "statefulsets", "status")},
	{"peak not-ready endpoints", stormValue(churn.Name, churn.SliceNotReadyPeak, fmtCount)},
	{"not-ready endpoint-seconds", stormValue(churn.Name, churn.SliceNotReadySeconds, fmtRate)},
	{"outage seconds (services)", outage},
	{"node recovery p50/p99/max", recoveryLatency(recovery.Node)},
	{"pod recovery p50/p99/max", recoveryLatency(recovery.Pod)},
	{"service recovery p50/p99/max", recoveryLatency(recovery.Service)},
	{"fleet recovered after", fleet},
	{"healthy nodes: late lease / NotReady; pods", cascade},
	{"apiserver scrapes landed, longest gap", scrapeCoverage},
	{"stormbench CPU ÷ apiserver CPU", toolCPU},
	{"stormbench CPU standing/1k nodes; per restart", toolCPUSplit},
	{"host CPU busy p50 / max; saturated seconds", hostCPU},
	{"stormbench RSS growth/restart", toolRSS},
}

// flowRowsAfter is the label of the row the per-flow rows follow.
const flowRowsAfter = "API excess requests/restart"

// summaryTableRows are summaryRows with, after the key excess figure, one
// row per flow the storm is charged with (cluster.Flows' order, then any
// other by name): the split of excess_requests_per_restart by who sent
// the requests. Flows under half a request per restart in every column
// share one row, so that the split still adds up.
func summaryTableRows(r *result.Result) []summaryRow {
	flows := map[string]bool{}
	big := map[string]bool{}
	for i := range r.Variants {
		for f, x := range flowExcess(&r.Variants[i]) {
			if cluster.IsSimulationFlow(f) {
				continue
			}
			flows[f] = true
			big[f] = big[f] || math.Abs(x) >= 0.5
		}
	}
	var flowRows []summaryRow
	var small []string
	for _, f := range flowOrder(flows) {
		if !big[f] {
			small = append(small, f)
			continue
		}
		flowRows = append(flowRows, summaryRow{"    " + f, flowCell(f)})
	}
	if len(small) > 0 {
		label := fmt.Sprintf("    %d flows under 0.5 each", len(small))
		if len(small) == 1 {
			label = "    " + small[0]
		}
		flowRows = append(flowRows, summaryRow{label, flowCell(small...)})
	}
	var out []summaryRow
	for _, row := range summaryRows {
		out = append(out, row)
		if row.label == flowRowsAfter && len(flowRows) > 0 {
			out = append(out, summaryRow{"  by flow:", func(*result.VariantRun) string { return "" }})
			out = append(out, flowRows...)
		}
	}
	return out
}

// flowExcess is a run's excess per restart by flow (the simulation's
// flows included), nil when it was not measured.
func flowExcess(v *result.VariantRun) map[string]float64 {
	m := v.Measurement(apiserver.Name)
	if m == nil {
		return nil
	}
	var out map[string]float64
	for _, x := range m.Values {
		if x.Name == apiserver.ExcessPerRestart && x.Window == result.WindowStorm && x.Labels[result.LabelFlow] != "" {
			if out == nil {
				out = map[string]float64{}
			}
			out[x.Labels[result.LabelFlow]] += x.Value
		}
	}
	return out
}

// flowCell is the sum of the flows' excess per restart; a run without
// the flow figures shows "-", and one without a flow 0 of it.
func flowCell(flows ...string) func(*result.VariantRun) string {
	return func(v *result.VariantRun) string {
		byFlow := flowExcess(v)
		if byFlow == nil {
			return missing
		}
		sum := 0.0
		for _, f := range flows {
			sum += byFlow[f]
		}
		return fmtRate(sum)
	}
}

// simulationOwn is the excess per restart of the harness's and KWOK's
// flows: what the key figure leaves out. KWOK's is its hand-back pod
// syncs and lease takeover, less the heartbeats it left to a simulated
// kubelet, so it can be negative.
func simulationOwn(v *result.VariantRun) string {
	byFlow := flowExcess(v)
	if byFlow == nil {
		return missing
	}
	cell := func(f string) string {
		x, ok := byFlow[f]
		if !ok {
			return missing
		}
		return fmtRate(x)
	}
	return cell(cluster.FlowHarness) + " / " + cell(cluster.FlowKwok)
}

// kubeletSent sums the requests the simulated kubelets sent
// (clientLatency, source=kubelet) of the verbs given, of any verb when
// none is; seen is false when no such figure was recorded.
func kubeletSent(v *result.VariantRun, verbs ...string) (n float64, seen bool) {
	m := v.Measurement(clientlatency.Name)
	if m == nil {
		return 0, false
	}
	for _, x := range m.Values {
		if x.Name == clientlatency.Requests && x.Labels[result.LabelSource] == clientlatency.SourceKubelet &&
			(len(verbs) == 0 || slices.Contains(verbs, x.Labels[result.LabelVerb])) {
			n, seen = n+x.Value, true
		}
	}
	return n, seen
}

// kubeletRequests is what the simulated kubelets sent per restart: the
// requests the model stands for.
func kubeletRequests(v *result.VariantRun) string {
	n, _ := kubeletSent(v)
	if v.Measurement(clientlatency.Name) == nil || v.Restarts == 0 {
		return missing
	}
	return fmtRate(n / float64(v.Restarts))
}

// relists is what the simulated kubelets' informers sent to sync, per
// restart: LISTs (WatchListClient off: a LIST then a WATCH per informer)
// and WATCHes (with it on, the watch-list with sendInitialEvents is the
// only request of an initial sync).
func relists(v *result.VariantRun) string {
	list, ok1 := kubeletSent(v, "LIST")
	watch, ok2 := kubeletSent(v, "WATCH")
	if !ok1 && !ok2 || v.Restarts == 0 {
		return missing
	}
	n := float64(v.Restarts)
	return fmtRate(list/n) + " / " + fmtRate(watch/n)
}

// toolCPU is stormbench's own CPU over kube-apiserver's in the storm
// window: the tool's cost next to what it measures.
func toolCPU(v *result.VariantRun) string {
	tool, ok1 := v.Measurement(self.Name).Value(self.CPUSeconds, result.WindowStorm)
	api, ok2 := v.Measurement(apiserver.Name).Value(apiserver.CPUSeconds, result.WindowStorm, result.LabelComponent, measure.ComponentAPIServer)
	if !ok1 || !ok2 || api <= 0 {
		return missing
	}
	return fmt.Sprintf("%.2f (%.1fs / %.1fs)", tool/api, tool, api)
}

// toolCPUSplit is stormbench's CPU split in two: its standing cost, per
// second of the baseline per 1,000 nodes, and the marginal cost of one
// restart, the storm's CPU less the standing rate over its length
// (self.selfCostSplit). Results before the split show "-".
func toolCPUSplit(v *result.VariantRun) string {
	m := v.Measurement(self.Name)
	standing, ok1 := m.Value(self.StandingCPU, result.WindowBaseline)
	perRestart, ok2 := m.Value(self.MarginalCPUPerRestart, result.WindowStorm)
	if !ok1 && !ok2 {
		return missing
	}
	cell := func(x float64, ok bool, unit string) string {
		if !ok {
			return missing
		}
		return strconv.FormatFloat(x*1000, 'f', 1, 64) + " " + unit
	}
	return cell(standing, ok1, "ms/s") + "; " + cell(perRestart, ok2, "ms")
}

// toolRSS is the growth of stormbench's RSS during the storm per restart.
var toolRSS = stormValue(self.Name, self.RSSGrowthPerRestart, func(x float64) string { return fmt.Sprintf("%.0f KiB", x/1024) })

const missing = "-"

// stormValue is a cell of the measurement's storm-window value of the name,
// formatted by f.
func stormValue(measurement, name string, f func(float64) string) func(*result.VariantRun) string {
	return func(v *result.VariantRun) string {
		x, ok := v.Measurement(measurement).Value(name, result.WindowStorm)
		if !ok {
			return missing
		}
		return f(x)
	}
}

func p99Pair(class string) func(*result.VariantRun) string {
	return func(v *result.VariantRun) string {
		m := v.Measurement(apiserver.Name)
		s := m.Histogram(apiserver.RequestDuration, result.WindowStorm, result.LabelClass, class)
		b := m.Histogram(apiserver.RequestDuration, result.WindowBaseline, result.LabelClass, class)
		return p99(s) + " / " + p99(b)
	}
}

func p99(h *result.Histogram) string {
	if h == nil || h.Summary.Count == 0 {
		return missing
	}
	return fmtSeconds(h.Summary.P99)
}

// apfQueueing is the most requests any flow schema had in APF's queues at
// a scrape during the storm, and the longest p99 queue wait of any flow
// schema, named: where a storm made API Priority and Fairness queue.
func apfQueueing(v *result.VariantRun) string {
	peak, ok := extractor(result.MetricFlowInqueueMax)(v)
	if !ok {
		return missing
	}
	m := v.Measurement(apiserver.Name)
	var worst *result.Histogram
	for i := range m.Histograms {
		h := &m.Histograms[i]
		// Under 5 ms (the wait histogram's first bucket) is APF's
		// dispatch without queueing: every request lands in the
		// histogram, most with no wait at all.
		if h.Name == apiserver.FlowWait && h.Window == result.WindowStorm && h.Summary.Count > 0 && h.Summary.P99 > 0.005 && (worst == nil || h.Summary.P99 > worst.Summary.P99) {
			worst = h
		}
	}
	if worst == nil {
		return fmtCount(peak) + " / -"
	}
	return fmtCount(peak) + " / " + fmtSeconds(worst.Summary.P99) + " (" + worst.Labels[result.LabelFlowSchema] + ")"
}

// downstream is the storm's excess PUTs of the named resource/subresource
// pairs per restart, and per pod that flipped to not ready: the writes a
// readiness flip causes beyond the EndpointSlice controller's (the v1
// Endpoints controller; the Deployment, ReplicaSet and StatefulSet
// controllers' status updates of ready replicas).
func downstream(pairs ...string) func(*result.VariantRun) string {
	return func(v *result.VariantRun) string {
		m := v.Measurement(apiserver.Name)
		total, seen := 0.0, false
		for i := 0; i+1 < len(pairs); i += 2 {
			labels := []string{result.LabelVerb, "PUT", result.LabelResource, pairs[i], result.LabelSubresource, pairs[i+1]}
			x, ok := m.Value(apiserver.RawExcessPerRestart, result.WindowStorm, labels...)
			if !ok {
				// A result before flows (issue 45) held them under the
				// key figure's name, which then counted every request.
				x, ok = m.Value(apiserver.ExcessPerRestart, result.WindowStorm, labels...)
			}
			if ok {
				total += x
				seen = true
			}
		}
		if _, ok := m.Value(apiserver.ExcessPerRestart, result.WindowStorm); !ok {
			return missing // no storm figures at all
		}
		if !seen {
			total = 0 // none in excess of the baseline
		}
		out := fmtRate(total)
		down, ok := v.Measurement(churn.Name).Value(churn.SliceReadyFlips, result.WindowStorm, result.LabelDirection, churn.DirectionReadyToNot)
		if ok && down > 0 && v.Restarts > 0 {
			out += " (" + strconv.FormatFloat(total*float64(v.Restarts)/down, 'f', 2, 64) + ")"
		}
		return out
	}
}

func flips(v *result.VariantRun) string {
	m := v.Measurement(churn.Name)
	down, ok1 := m.Value(churn.SliceReadyFlips, result.WindowStorm, result.LabelDirection, churn.DirectionReadyToNot)
	up, ok2 := m.Value(churn.SliceReadyFlips, result.WindowStorm, result.LabelDirection, churn.DirectionNotToReady)
	if !ok1 || !ok2 {
		return missing
	}
	out := fmtCount(down) + " / " + fmtCount(up)
	// Flips that a busy status manager wrote as one status never reached
	// the endpoints (kubelet.Counters.ReadyFlipsCoalesced); said when any.
	if n, ok := v.Measurement(self.Name).Value(self.ReadyFlipsCoalesced, result.WindowStorm); ok && n > 0 {
		out += " (" + fmtCount(n) + " coalesced)"
	}
	return out
}

func outage(v *result.VariantRun) string {
	m := v.Measurement(churn.Name)
	secs, ok := m.Value(churn.SliceOutageSeconds, result.WindowStorm)
	if !ok {
		return missing
	}
	n, _ := m.Value(churn.SliceServicesOutage, result.WindowStorm)
	return fmtRate(secs) + " (" + fmtCount(n) + ")"
}

func recoveryLatency(name string) func(*result.VariantRun) string {
	return func(v *result.VariantRun) string {
		h := v.Measurement(recovery.Name).Histogram(name, result.WindowStorm)
		if h == nil || h.Summary.Count == 0 {
			return missing
		}
		s := h.Summary
		return fmtSeconds(s.P50) + " / " + fmtSeconds(s.P99) + " / " + fmtSeconds(s.Max)
	}
}

func fleet(v *result.VariantRun) string {
	m := v.Measurement(recovery.Name)
	h := m.Histogram(recovery.FleetRecovered, result.WindowStorm)
	if h == nil || h.Summary.Count == 0 {
		if m != nil {
			return "not recovered"
		}
		return missing
	}
	return fmtSeconds(h.Summary.Max)
}

// cascade is the storm's collateral damage: of the nodes it did not
// restart, how many renewed their lease late and how many went NotReady,
// and how many pods went not ready with no restart of their node to
// explain it.
func cascade(v *result.VariantRun) string {
	m := v.Measurement(recovery.Name)
	late, ok := m.Value(recovery.HealthyLeaseLateNodes, result.WindowStorm)
	healthy, _ := m.Value(recovery.HealthyLeaseNodes, result.WindowStorm)
	if !ok {
		return missing
	}
	nodes, _ := m.Value(recovery.Unattributed, result.WindowStorm, result.LabelKind, "node")
	pods, _ := m.Value(recovery.Unattributed, result.WindowStorm, result.LabelKind, "pod")
	return fmt.Sprintf("%s of %s / %s; %s", fmtCount(late), fmtCount(healthy), fmtCount(nodes), fmtCount(pods))
}
