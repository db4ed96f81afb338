package calibrate

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/stormbench/stormbench/bench/measure"
	"github.com/stormbench/stormbench/bench/realnode"
)

// The rows of one case: the requests and readiness flips of both sides
// counted per restart, beside what a restart cost.

// rows builds a case's fidelity table from the audit log's requests and
// the harness's Ready timeline.
func (c *calibration) rows(cs Case, reqs []Request, t0, end time.Time, simCPU float64, real []realnode.Usage) []Row {
	k := float64(c.o.Nodes)
	counts, last := c.countRequests(reqs, t0, end)
	var rows []Row
	keys := make([]string, 0, len(counts))
	for key := range counts {
		if key != slicesKey && key != resourcesOnlyKey && key != cgroupV1Key {
			keys = append(keys, key)
		}
	}
	sort.Strings(keys)
	for _, key := range keys {
		rows = append(rows, c.countRow(key, counts[key], ""))
	}
	if ro, ok := counts[resourcesOnlyKey]; ok {
		rv, sv := c.perNode(ro)
		rows = append(rows, Row{Metric: MetricResourcesOnly, Unit: "/restart", Real: sum(rv) / k, Simulated: sum(sv) / k,
			Agree: true, Informational: true,
			Note: "the pod cgroup's unlimited memory.limit_in_bytes reported as a limit; a 1.36 kubelet runs on cgroup v1 only with failCgroupV1: false"})
	}
	if cg, ok := counts[cgroupV1Key]; ok {
		rv, sv := c.perNode(cg)
		rows = append(rows, Row{Metric: MetricCgroupV1Events, Unit: "/restart", Real: sum(rv) / k, Simulated: sum(sv) / k,
			Agree: true, Informational: true,
			Note: "a kubelet started on cgroup v1 warns at every start (kubelet_linux.go cgroupVersionCheck); a 1.36 kubelet runs on cgroup v1 only with failCgroupV1: false"})
	}
	rows = append(rows, c.countRow(MetricSliceWrites, counts[slicesKey], "by kube-controller-manager, of the node's Service"))
	rows = append(rows, c.flipRows(t0, end)...)
	rows = append(rows, c.lastRequestRow(last, t0.Add(cs.Downtime)))
	return append(rows, costRows(real, simCPU, k)...)
}

// The keys of countRequests' counts that are not a request row of their
// own.
const slicesKey, resourcesOnlyKey, cgroupV1Key = "\x00slices", "\x00resources-only", "\x00cgroup-v1"

// countRequests counts the case's requests between t0 and end by row key
// and node: each node restarts once in a case, so a node's count is one
// restart's, and the row's figure their mean. last is each node's last
// kubelet request that is neither a lease renewal nor an event.
func (c *calibration) countRequests(reqs []Request, t0, end time.Time) (counts map[string]map[string]float64, last map[string]time.Time) {
	counts = map[string]map[string]float64{} // key → node → count
	add := func(key, node string) {
		m, ok := counts[key]
		if !ok {
			m = map[string]float64{}
			counts[key] = m
		}
		m[node]++
	}
	last = map[string]time.Time{}
	for _, r := range reqs {
		if r.Time.Before(t0) || !r.Time.Before(end) {
			continue
		}
		// KWOK heartbeats a simulated node once it is handed back: its
		// lease renewals and node status writes are requests sent on the
		// simulated kubelet's behalf, and count on that side (a real
		// kubelet renews its lease every leaseDuration/4 all along).
		if r.KWOK() && (r.Resource == "leases" || (r.Resource == "nodes" && r.Subresource == "status")) && c.sim.has(r.Name) {
			add(kubeletPrefix+r.Key(), r.Name)
			continue
		}
		if node := r.Node(); node != "" {
			if !c.real.has(node) && !c.sim.has(node) {
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
				if r.Resource != "leases" && r.Resource != "events" && r.Time.After(last[node]) {
					last[node] = r.Time
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
		add(ctrl+": "+r.Key(), node)
		if r.Resource == "endpointslices" {
			add(slicesKey, node)
		}
	}
	return counts, last
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
	k := float64(c.o.Nodes)
	rv, sv := c.perNode(byNode)
	return c.spreadRow(metric, "/restart", sum(rv)/k, sum(sv)/k, spreadOf(rv), spreadOf(sv), note)
}

// flipRows are the rows of what the harness's watch saw between t0 and
// end: pods' Ready→NotReady flips, nodes' Ready transitions, the real
// kubelets' NotReady flashes at start, and the pods' not-ready periods.
func (c *calibration) flipRows(t0, end time.Time) []Row {
	k := float64(c.o.Nodes)
	podFlips, nodeFlips := c.tracker.Transitions(t0, end)
	realPods, simPods := c.bySide(podFlips)
	realNodes, simNodes := c.bySide(nodeFlips)
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
	rd, sd := notReadyDurations(realPods, end), notReadyDurations(simPods, end)
	return append(rows,
		c.spreadRow(MetricNotReadyP50, "s", quantile(rd, 0.5), quantile(sd, 0.5), quantileSpread(rd, 0.5), quantileSpread(sd, 0.5), fmt.Sprintf("%d vs %d not-ready periods", len(rd), len(sd))),
		c.spreadRow(MetricNotReadyMax, "s", quantile(rd, 1), quantile(sd, 1), quantileSpread(rd, 1), quantileSpread(sd, 1), ""))
}

// bySide splits flips into the real nodes' and the simulated ones'.
func (c *calibration) bySide(flips []measure.Transition) (real, sim []measure.Transition) {
	for _, f := range flips {
		if c.real.has(f.Node) {
			real = append(real, f)
		} else if c.sim.has(f.Node) {
			sim = append(sim, f)
		}
	}
	return real, sim
}

// lastRequestRow is the time from the kubelet's start (start) to each
// node's last request. Every restart has a value: a node that sent
// nothing but leases and events in the window (a runtime restart the
// kubelet rode out) has 0, as a node whose last request came at its start.
func (c *calibration) lastRequestRow(last map[string]time.Time, start time.Time) Row {
	k := float64(c.o.Nodes)
	since := func(nodes []string) []float64 {
		out := make([]float64, 0, len(nodes))
		for _, n := range nodes {
			d := time.Duration(0)
			if t, ok := last[n]; ok && !t.Before(start) {
				d = t.Sub(start)
			}
			out = append(out, d.Seconds())
		}
		return out
	}
	rs, ss := since(c.real.nodes), since(c.sim.nodes)
	return c.spreadRow(MetricLastRequest, "s", sum(rs)/k, sum(ss)/k, spreadOf(rs), spreadOf(ss), "mean over restarts, 0 for a node that sent none; leases and events left out")
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

func (c *calibration) row(metric, unit string, real, sim float64, note string) Row {
	real, sim = round3(real), round3(sim)
	return Row{Metric: metric, Unit: unit, Real: real, Simulated: sim, Agree: c.o.Tolerance.agree(unit, real, sim), Note: note}
}

// spreadRow is row with each side's per-restart spread, judged by both
// intervals (Tolerance.agreeSpread).
func (c *calibration) spreadRow(metric, unit string, real, sim float64, realSpread, simSpread *Spread, note string) Row {
	r := c.row(metric, unit, real, sim, note)
	r.RealSpread, r.SimulatedSpread = realSpread, simSpread
	r.Agree = c.o.Tolerance.agreeSpread(unit, r.Real, r.Simulated, realSpread, simSpread)
	return r
}
