package calibrate

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/stormbench/stormbench/bench/measure/recovery"
	"github.com/stormbench/stormbench/bench/realnode"
	"github.com/stormbench/stormbench/profiles"
)

// The rows of one case: the requests and readiness flips of both sides
// counted per restart, beside what a restart cost.

// rows builds a case's fidelity table from the audit log's requests and
// the harness's Ready timeline.
func (c *calibration) rows(cs Case, reqs []Request, t0, end time.Time, simCPU float64, real []realnode.Usage) []Row {
	k := float64(c.o.Nodes)
	counts, times := c.countRequests(reqs, t0, end)
	var rows []Row
	for _, key := range slices.Sorted(maps.Keys(counts)) {
		if !strings.HasPrefix(key, "\x00") {
			rows = append(rows, c.countRow(key, counts[key], ""))
		}
	}
	for _, info := range []struct{ key, metric, note string }{
		{resourcesOnlyKey, MetricResourcesOnly, "the pod cgroup's unlimited memory.limit_in_bytes reported as a limit; a 1.36 kubelet runs on cgroup v1 only with failCgroupV1: false"},
		{cgroupV1Key, MetricCgroupV1Events, "a kubelet started on cgroup v1 warns at every start (kubelet_linux.go cgroupVersionCheck); a 1.36 kubelet runs on cgroup v1 only with failCgroupV1: false"},
	} {
		if byNode, ok := counts[info.key]; ok {
			rv, sv := c.perNode(byNode)
			rows = append(rows, Row{Metric: info.metric, Unit: "/restart", Real: sum(rv) / k, Simulated: sum(sv) / k, Agree: true, Informational: true, Note: info.note})
		}
	}
	rows = append(rows, c.countRow(MetricSliceWrites, counts[slicesKey], "by kube-controller-manager, of the node's Service"))
	rows = append(rows, c.flipRows(t0, end)...)
	rows = append(rows, c.startRows(cs, times, func(node string) time.Time {
		from, _ := c.nodeWindow(node, t0, end)
		return from.Add(cs.Downtime)
	})...)
	return append(rows, costRows(real, simCPU, k)...)
}

// The keys of countRequests' counts that are not a request row of their
// own: each begins with a NUL.
const slicesKey, resourcesOnlyKey, cgroupV1Key = "\x00slices", "\x00resources-only", "\x00cgroup-v1"

// countRequests counts the case's requests between t0 and end by row key
// and node, each node's in its own window (nodeWindow): each node restarts
// once in a case, so a node's count is one restart's, and the row's figure
// their mean. times are the times of
// each node's kubelet requests that are neither lease renewals nor events,
// in the audit log's order.
func (c *calibration) countRequests(reqs []Request, t0, end time.Time) (counts map[string]map[string]float64, times map[string][]time.Time) {
	counts = map[string]map[string]float64{} // key → node → count
	add := func(key, node string) {
		m, ok := counts[key]
		if !ok {
			m = map[string]float64{}
			counts[key] = m
		}
		m[node]++
	}
	times = map[string][]time.Time{}
	for _, r := range reqs {
		if r.Time.Before(t0) || !r.Time.Before(end) {
			continue
		}
		// KWOK heartbeats a simulated node once it is handed back: its
		// lease renewals and node status writes are requests sent on the
		// simulated kubelet's behalf, and count on that side (a real
		// kubelet renews its lease every leaseDuration/4 all along).
		// Before the node went down (its relabel, which reaches the API
		// server a second or so after t0 when the harness restarts many
		// nodes at once) KWOK is the node's kubelet before its restart, as
		// a real kubelet is until it is killed at its own Down, a few
		// milliseconds after t0: that renewal is neither side's restart.
		// Counting it gave preserve's simulated side a fourth lease update
		// in every restart whose t0 fell just before KWOK's renewals.
		if r.KWOK() && (r.Resource == "leases" || (r.Resource == "nodes" && r.Subresource == "status")) && c.sim.has(r.Name) {
			if down, ok := c.downs[r.Name]; (!ok || !r.Time.Before(down)) && c.inWindow(r.Name, r.Time, t0, end) {
				add(kubeletPrefix+r.Key(), r.Name)
			}
			continue
		}
		if node := r.Node(); node != "" {
			if !c.real.has(node) && !c.sim.has(node) || !c.inWindow(node, r.Time, t0, end) {
				continue
			}
			switch {
			case r.ResourcesOnly:
				add(resourcesOnlyKey, node)
			case r.Reason == cgroupV1Reason:
				add(cgroupV1Key, node)
			default:
				add(kubeletPrefix+r.Key(), node)
				// Lease renewals and events go on all the time (events
				// asynchronously); the start-up burst is the rest.
				if r.Resource != "leases" && r.Resource != "events" {
					times[node] = append(times[node], r.Time)
				}
			}
			continue
		}
		ctrl := r.Controller()
		if ctrl == "" || !strings.Contains(writeVerbsForAttribute, r.Verb) {
			continue
		}
		node, ok := c.real.owner(r.Name)
		if !ok {
			if node, ok = c.sim.owner(r.Name); !ok {
				continue
			}
		}
		if !c.inWindow(node, r.Time, t0, end) {
			continue
		}
		add(ctrl+": "+r.Key(), node)
		if r.Resource == "endpointslices" {
			add(slicesKey, node)
		}
	}
	return counts, times
}

// perNode returns each side's per-restart values of a key.
func (c *calibration) perNode(byNode map[string]float64) (real, sim []float64) {
	for _, n := range c.real.nodes {
		real = append(real, byNode[n])
	}
	for _, n := range c.sim.nodes {
		sim = append(sim, byNode[n])
	}
	return real, sim
}

func sum(v []float64) (s float64) {
	for _, x := range v {
		s += x
	}
	return s
}

// countRow is a count's row: each side's mean per restart, with its spread.
func (c *calibration) countRow(metric string, byNode map[string]float64, note string) Row {
	rv, sv := c.perNode(byNode)
	r := Row{Metric: metric, Unit: "/restart", Real: round3(mean(rv)), Simulated: round3(mean(sv)), RealSpread: spreadOf(rv), SimulatedSpread: spreadOf(sv), Note: note}
	c.o.Tolerance.judge(&r) // by both intervals: agreeSpread
	return r
}

// flipRows are the rows of what the harness's watch saw between t0 and
// end: pods' Ready→NotReady flips, nodes' Ready transitions, the real
// kubelets' NotReady flashes at start, and the pods' not-ready periods.
func (c *calibration) flipRows(t0, end time.Time) []Row {
	k := float64(c.o.Nodes)
	podFlips, nodeFlips := c.tracker.Transitions(t0, end)
	realPods, simPods := c.bySide(c.inWindows(podFlips, t0, end))
	realNodes, simNodes := c.bySide(c.inWindows(nodeFlips, t0, end))
	flipsByNode, transitionsByNode := map[string]float64{}, map[string]float64{}
	for _, f := range append(realPods, simPods...) {
		if !f.Ready {
			flipsByNode[f.Node]++
		}
	}
	for _, f := range append(realNodes, simNodes...) {
		transitionsByNode[f.Node]++
	}
	rows := []Row{
		c.countRow(MetricReadyFlips, flipsByNode, "as the harness's watch saw them"),
		c.countRow(MetricNodeTransitions, transitionsByNode, ""),
	}
	if rf, sf := plegStartFlashes(realNodes), plegStartFlashes(simNodes); rf > 0 || sf > 0 {
		rows = append(rows, Row{Metric: MetricStartFlashes, Unit: "/restart", Real: round3(float64(rf) / k), Simulated: round3(float64(sf) / k),
			Agree: true, Informational: true,
			Note: "a race in the real kubelet: its first node status beat its first PLEG relist; the node-lifecycle controller's taints and events follow"})
	}
	endOf := func(node string) time.Time {
		_, to := c.nodeWindow(node, t0, end)
		return to
	}
	rd, sd := notReadyDurations(realPods, endOf), notReadyDurations(simPods, endOf)
	quantileRow := func(metric string, q float64, note string) Row {
		return c.timingRow(metric, RuleQuantile, spanNotReady, quantile(rd, q), quantile(sd, q), quantileSpread(rd, q), quantileSpread(sd, q), note)
	}
	maxRow := quantileRow(MetricNotReadyMax, 1, "reported, not checked: a maximum has no confidence interval; the KS and p90 rows judge the tail")
	maxRow.Informational, maxRow.Agree = true, true
	return append(rows,
		quantileRow(MetricNotReadyP50, 0.5, fmt.Sprintf("%d vs %d not-ready periods", len(rd), len(sd))),
		quantileRow(MetricNotReadyP90, 0.9, "distribution-free 95 % interval of the p90 (29 periods at least)"),
		c.timingRow(MetricNotReadyKS, RuleKS, spanNotReady, meanSeconds(rd), meanSeconds(sd), periodsSpread(rd), periodsSpread(sd),
			"the periods' means; judged by a two-sample Kolmogorov–Smirnov test at 5 % after the model's periods are moved by at most the tolerance"),
		maxRow)
}

// spanNotReady is what the not-ready rows measure: one pod's not-ready
// period. Both ends are the harness's clock (recovery.Tracker reads
// it as its informer delivers the pod's update), so a period carries the
// difference of two watch delays, not their sum: the API server's watch
// fan-out and the informer's handler, a few milliseconds on an idle host
// and more on a saturated one. Not measured here; each end is taken as
// 0.05 s, which makes the rows' floor 0.1 s. (The pod's Ready condition's
// lastTransitionTime would be the kubelet's own, but metav1.Time keeps
// whole seconds: 1 s a side.)
var spanNotReady = &Span{
	From:           "the pod's Ready→NotReady, as the harness's watch delivered it (harness clock)",
	FromResolution: 0.05,
	To:             "its NotReady→Ready, as the harness's watch delivered it, or the case's end (harness clock)",
	ToResolution:   0.05,
}

// meanSeconds is the mean of durations in seconds, 0 for none.
func meanSeconds(d []time.Duration) float64 {
	if len(d) == 0 {
		return 0
	}
	var s time.Duration
	for _, x := range d {
		s += x
	}
	return s.Seconds() / float64(len(d))
}

// periodsSpread is the spread of the not-ready periods with their values,
// sorted, for the KS row: their number, range and the t interval of their
// mean.
func periodsSpread(sorted []time.Duration) *Spread {
	s := spreadOf(mapped(sorted, time.Duration.Seconds))
	if s != nil {
		s.Of = "periods"
	}
	return s
}

// inWindows keeps the flips in their node's window (nodeWindow).
func (c *calibration) inWindows(flips []recovery.Transition, t0, end time.Time) []recovery.Transition {
	var out []recovery.Transition
	for _, f := range flips {
		if c.inWindow(f.Node, f.At, t0, end) {
			out = append(out, f)
		}
	}
	return out
}

// bySide splits flips into the real nodes' and the simulated ones'.
func (c *calibration) bySide(flips []recovery.Transition) (real, sim []recovery.Transition) {
	for _, f := range flips {
		if c.real.has(f.Node) {
			real = append(real, f)
		} else if c.sim.has(f.Node) {
			sim = append(sim, f)
		}
	}
	return real, sim
}

// startRows are the times from each node's kubelet start (spanLastRequest)
// to its last request, and, reported only, to its first: the real
// kubelet's process start-up before it sends anything, which the model
// does not have. Every restart has a value: a node that sent nothing but
// leases and events in the window (a runtime restart the kubelet rode out)
// has 0, as a node whose request came at its start. nominal is a node's
// restart plus the downtime: where a runtime case counts from, and any
// node whose restart recorded no kubelet start.
func (c *calibration) startRows(cs Case, times map[string][]time.Time, nominal func(node string) time.Time) []Row {
	k := float64(c.o.Nodes)
	since := func(nodes []string, last bool) []float64 {
		out := make([]float64, 0, len(nodes))
		for _, n := range nodes {
			start := nominal(n)
			if s, ok := c.starts[n]; ok && !s.IsZero() && cs.Kind != profiles.StormRuntime {
				start = s
			}
			var at time.Time
			for _, t := range times[n] {
				if t.Before(start) {
					continue
				}
				if at.IsZero() || (last && t.After(at)) || (!last && t.Before(at)) {
					at = t
				}
			}
			d := time.Duration(0)
			if !at.IsZero() {
				d = at.Sub(start)
			}
			out = append(out, d.Seconds())
		}
		return out
	}
	rs, ss := since(c.real.nodes, true), since(c.sim.nodes, true)
	lastRow := c.timingRow(MetricLastRequest, RuleShift, spanLastRequest, sum(rs)/k, sum(ss)/k, spreadOf(rs), spreadOf(ss), "mean over restarts, 0 for a node that sent none; leases and events left out")
	rf, sf := since(c.real.nodes, false), since(c.sim.nodes, false)
	firstRow := c.timingRow(MetricFirstRequest, RuleShift, spanLastRequest, sum(rf)/k, sum(sf)/k, spreadOf(rf), spreadOf(sf),
		"reported, not checked: the part of the last request's time before the kubelet's first request (the real kubelet's process start-up)")
	firstRow.Informational, firstRow.Agree = true, true
	return []Row{lastRow, firstRow}
}

// spanLastRequest is what "kubelet start → last request" measures, per
// restart.
//
// From: the node's kubelet start as its restart recorded it
// (storm.Outcome.KubeletStart, the harness's clock). For a real node that
// is when realnode's restart returned, right after it exec'd the kubelet
// (Node.StartKubelet: cmd.Start, which returns once the process runs;
// after a reboot, after containerd is back first); for a simulated one
// when the model's boot began (kubelet.Simulator.boot). Both are read
// within a few milliseconds of the event; taken as 0.01 s. A runtime
// case has no kubelet start: both sides count from t0 + downtime, when
// the runtime came back (the real side's within the time to start it).
// Tables before issue 46 counted every node from t0 + downtime, so the
// real kubelet's time to stop (SIGTERM to exit) was in its figure.
//
// To: the API server's requestReceivedTimestamp of the node's last request
// that is neither a lease renewal nor an event (audit.go), a
// metav1.MicroTime: 1 µs.
var spanLastRequest = &Span{
	From:           "the node's kubelet start: the harness's clock as it exec'd the real kubelet or the model's boot began (t0 + downtime in a runtime case)",
	FromResolution: 0.01,
	To:             "the node's last request other than leases and events: the API server's requestReceivedTimestamp (audit log, µs)",
	ToResolution:   1e-6,
}

// costRows are the informational rows of what a restart cost: the real
// kubelets' CPU and peak RSS against stormbench's own CPU over the window
// (simCPU) per simulated restart (k).
func costRows(real []realnode.Usage, simCPU, k float64) []Row {
	var cpu, rss float64
	for _, u := range real {
		cpu += u.CPUSeconds
		rss = math.Max(rss, float64(u.PeakRSSBytes)/(1<<20))
	}
	if len(real) > 0 {
		cpu /= float64(len(real))
	}
	return []Row{
		{Metric: MetricKubeletCPU, Unit: "s", Real: round3(cpu), Simulated: round3(simCPU / k), Agree: true, Informational: true,
			Note: "real: the kubelet process since it started (the whole window for a runtime case); simulated: stormbench's own CPU over the window ÷ K"},
		{Metric: MetricKubeletPeakRSS, Unit: "MiB", Real: math.Round(rss), Agree: true, Informational: true,
			Note: "real: the kubelet's VmHWM; simulated: a restart holds no process of its own"},
	}
}

// timingRow is a timing's row (seconds): what it measures (span), each
// side's values, judged by rule (judge.go).
func (c *calibration) timingRow(metric, rule string, span *Span, real, sim float64, realSpread, simSpread *Spread, note string) Row {
	r := Row{Metric: metric, Unit: "s", Real: round3(real), Simulated: round3(sim), RealSpread: realSpread, SimulatedSpread: simSpread, Rule: rule, Span: span, Note: note}
	c.o.Tolerance.judge(&r)
	return r
}
