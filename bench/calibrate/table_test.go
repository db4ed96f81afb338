package calibrate

import (
	"fmt"
	"maps"
	"math"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stormbench/stormbench/bench/measure/recovery"
	"k8s.io/utils/clock"
)

func TestParseAudit(t *testing.T) {
	f, err := os.Open("testdata/audit.log")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	reqs, err := parseAudit(f)
	if err != nil {
		t.Fatal(err)
	}
	// The watch counts once (at ResponseStarted); the last line is still
	// being written and is not read.
	want := []struct {
		key, node, controller string
		kwok                  bool
	}{
		{"get pods", "cal-1-real-0", "", false},
		{"watch pods", "cal-1-node-00000", "", false},
		{"update endpointslices", "", "endpointslice-controller", false},
		// --use-service-account-credentials: the user agent ends in the
		// controller's service account.
		{"update endpoints", "", "endpoint-controller", false},
		{"patch pods/status", "cal-1-node-00000", "", false},
		// Request level: the first sets only status.resources (cgroup
		// v1), the second conditions too.
		{"patch pods/status", "cal-1-real-0", "", false},
		{"patch pods/status", "cal-1-real-0", "", false},
		{"patch nodes", "", "", false},
		// KWOK renewing a simulated node's lease after the handback.
		{"update leases", "", "", true},
		// Request level: created events, with their reasons.
		{"create events", "cal-1-real-0", "", false},
		{"create events", "cal-1-real-0", "", false},
	}
	if len(reqs) != len(want) {
		t.Fatalf("parsed %d requests, want %d: %+v", len(reqs), len(want), reqs)
	}
	for i, w := range want {
		r := reqs[i]
		if r.Key() != w.key || r.Node() != w.node || r.Controller() != w.controller || r.KWOK() != w.kwok {
			t.Errorf("request %d: key %q node %q controller %q kwok %t, want %+v", i, r.Key(), r.Node(), r.Controller(), r.KWOK(), w)
		}
	}
	for i, want := range []bool{false, false, false, false, false, true, false, false, false, false, false} {
		if reqs[i].ResourcesOnly != want {
			t.Errorf("request %d (%s): ResourcesOnly %t, want %t", i, reqs[i].Key(), reqs[i].ResourcesOnly, want)
		}
	}
	for i, want := range []string{9: "Starting", 10: "CgroupV1"} {
		if reqs[i].Reason != want {
			t.Errorf("request %d (%s): reason %q, want %q", i, reqs[i].Key(), reqs[i].Reason, want)
		}
	}
	if got := reqs[0].Time; !got.Equal(time.Date(2026, 12, 1, 8, 0, 1, 0, time.UTC)) {
		t.Errorf("time %v", got)
	}
}

func TestTolerance(t *testing.T) {
	tol := DefaultTolerance()
	for _, tc := range []struct {
		unit      string
		real, sim float64
		agree     bool
	}{
		{"/restart", 1, 1, true},
		{"/restart", 1, 1.5, true},
		{"/restart", 1, 2, false}, // the model's second GET per pod
		{"/restart", 3, 2, false},
		{"/restart", 10, 10.9, true},
		{"/restart", 10, 11.1, false},
		{"/restart", 20, 21.9, true},
		{"/restart", 20, 22.1, false},
		{"/restart", 0, 0, true},
		{"/restart", 0, 0.6, false},
		{"s", 0.4, 3.7, false}, // 1.36 legacy flip against the model's
		// Inside the 1 s floor before issue 46; 0.9 s apart is outside
		// the 0.2 s cap of a timing's floor.
		{"s", 0.4, 1.3, false},
		{"s", 0.4, 0.6, true},
		{"s", 10, 10.9, true},
		{"s", 10, 11.1, false},
		{"s", 20, 21.9, true},
		{"s", 20, 22.1, false},
	} {
		if got := tol.agree(tc.unit, tc.real, tc.sim); got != tc.agree {
			t.Errorf("agree(%s, %v, %v) = %v, want %v", tc.unit, tc.real, tc.sim, got, tc.agree)
		}
	}
	if err := (Tolerance{RequestsAbsolute: -1, SecondsRelative: math.NaN()}).validate(); err == nil {
		t.Error("negative and NaN tolerances accepted")
	}
}

func TestNotReadyDurations(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	flips := []recovery.Transition{
		{At: at(100), Object: "a", Ready: false},
		{At: at(200), Object: "b", Ready: false},
		{At: at(600), Object: "a", Ready: true},
		{At: at(900), Object: "a", Ready: false},
		{At: at(1000), Object: "c", Ready: true}, // up without a down in the window
	}
	got := notReadyDurations(flips, func(string) time.Time { return at(3000) })
	want := []time.Duration{500 * time.Millisecond, 2100 * time.Millisecond, 2800 * time.Millisecond}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("got %v, want %v", got, want)
		}
	}
	if q := quantile(got, 0.5); q != 2.1 {
		t.Errorf("p50 %v, want 2.1", q)
	}
	if q := quantile(nil, 0.5); q != 0 {
		t.Errorf("p50 of none %v", q)
	}
}

func TestSideOwner(t *testing.T) {
	s := side{nodes: []string{"cal-1-real-1", "cal-1-real-10"}}
	for name, want := range map[string]string{
		"cal-1-real-1":               "cal-1-real-1",
		"cal-1-real-1-7d9c8-abcde":   "cal-1-real-1",
		"cal-1-real-10-7d9c8":        "cal-1-real-10",
		"cal-1-real-100":             "",
		"cal-1-node-00001-7d9c8-xyz": "",
	} {
		got, ok := s.owner(name)
		if got != want || ok != (want != "") {
			t.Errorf("owner(%q) = %q, %v; want %q", name, got, ok, want)
		}
	}
}

func TestSelectCases(t *testing.T) {
	cs, err := SelectCases([]string{"reboot", "kubelet/legacy"})
	if err != nil || len(cs) != 2 || cs[0].Name != "reboot" || cs[1].Name != "kubelet/legacy" {
		t.Fatalf("SelectCases: %v %v", cs, err)
	}
	if _, err := SelectCases([]string{"kubelet/legacy", "kubelet/nope"}); err == nil {
		t.Error("unknown case accepted")
	}
	// Every network-probe case is its exec case with another probe.
	exec := map[string]Case{}
	for _, c := range Cases() {
		if c.probeOf() == ProbeExec {
			exec[c.Name] = c
		}
	}
	network := 0
	for _, c := range Cases() {
		if c.probeOf() == ProbeExec {
			continue
		}
		network++
		base, probe, _ := strings.Cut(c.Name, "+")
		b, ok := exec[base]
		if !ok || probe != c.Probe {
			t.Errorf("case %s (probe %q): no exec case %s, or its name does not say its probe", c.Name, c.Probe, base)
			continue
		}
		b.Name, b.Probe = c.Name, c.Probe
		if !reflect.DeepEqual(b, c) {
			t.Errorf("case %s differs from %s in more than its probe:\n%+v\n%+v", c.Name, base, c, b)
		}
	}
	if network != 8 {
		t.Errorf("%d network-probe cases, want 8 (kubelet/legacy, kubelet/preserve, runtime/refused and reboot, with HTTP and with TCP probes)", network)
	}
	for _, backend := range []string{BackendHollow, BackendContainerd} {
		for _, c := range DefaultCases(backend) {
			if backend == BackendHollow && c.probeOf() != ProbeExec {
				t.Errorf("hollow runs %s by default", c.Name)
			}
		}
	}
	if got, want := len(DefaultCases(BackendContainerd)), len(Cases()); got != want {
		t.Errorf("containerd runs %d cases by default, want all %d", got, want)
	}
}

func TestValidate(t *testing.T) {
	ok := Options{Nodes: 2, PodsPerNode: 5, ProbePeriod: 10 * time.Second, Cases: DefaultCases(BackendHollow), Tolerance: DefaultTolerance()}
	if err := ok.Validate(8 << 30); err != nil {
		t.Fatalf("valid options refused: %v", err)
	}
	for name, mutate := range map[string]func(*Options){
		"zero nodes":     func(o *Options) { o.Nodes = 0 },
		"too many nodes": func(o *Options) { o.Nodes = MaxNodes + 1 },
		"no pods":        func(o *Options) { o.PodsPerNode = 0 },
		"probe period":   func(o *Options) { o.ProbePeriod = time.Millisecond },
		"no cases":       func(o *Options) { o.Cases = nil },
		// kubelet/deleted deletes 2 pods of each node.
		"deleted case, 2 pods":    func(o *Options) { o.PodsPerNode = 2 },
		"unknown pod feature":     func(o *Options) { o.PodFeatures = []string{PodFeatureAutomount, "sidecar"} },
		"negative kube API QPS":   func(o *Options) { o.KubeAPIQPS = -1 },
		"kube API burst too high": func(o *Options) { o.KubeAPIBurst = 10001 },
		"http probes on hollow":   func(o *Options) { o.Cases, _ = SelectCases([]string{"kubelet/legacy", "reboot+http"}) },
		"tcp probes, no backend":  func(o *Options) { o.Backend, o.Cases = "", []Case{{Name: "x", Probe: ProbeTCP}} },
	} {
		o := ok
		mutate(&o)
		if err := o.Validate(8 << 30); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	ctd := ok
	ctd.Backend, ctd.Cases = BackendContainerd, DefaultCases(BackendContainerd)
	if err := ctd.Validate(8 << 30); err != nil {
		t.Errorf("every case on containerd refused: %v", err)
	}
	slow := ok
	slow.KubeAPIQPS, slow.KubeAPIBurst = 2, 4
	if err := slow.Validate(8 << 30); err != nil {
		t.Errorf("kubeAPIQPS 2, burst 4 refused: %v", err)
	}
	// Sixteen real kubelets do not fit in 1 GiB.
	big := ok
	big.Nodes = 16
	if err := big.Validate(1 << 30); err == nil {
		t.Error("16 real nodes accepted with 1 GiB available")
	}
}

// TestToleranceSpread: a row is judged by each side's 95 % interval, by
// the range in a file written before intervals, and without either
// figure against figure.
func TestToleranceSpread(t *testing.T) {
	tol := DefaultTolerance()
	sp := func(n int, lo, hi float64) *Spread { return &Spread{N: n, Min: lo, Max: hi} }
	ci := func(n int, min, max, lo, hi float64) *Spread {
		return &Spread{N: n, Min: min, Max: max, CI95: &Interval{Lo: lo, Hi: hi}}
	}
	for _, tc := range []struct {
		name      string
		unit      string
		real, sim float64
		rs, ss    *Spread
		agree     bool
	}{
		{"a retried GET on one real node", "/restart", 3, 2, sp(2, 2, 4), sp(2, 2, 2), true},
		{"the same count on every restart", "/restart", 3, 2, sp(2, 3, 3), sp(2, 2, 2), false},
		{"ranges apart by more than the slack", "/restart", 5, 2, sp(2, 4, 6), sp(2, 2, 2), false},
		{"ranges apart within the slack", "/restart", 3, 2, sp(2, 2.5, 3.5), sp(2, 2, 2), true},
		{"simulated wider", "/restart", 1, 2, sp(2, 1, 1), sp(2, 0, 4), true},
		{"no spreads: as before", "/restart", 3, 2, nil, nil, false},
		{"timings", "s", 11.5, 7.1, sp(2, 8, 15), sp(2, 7, 7.2), true},
		{"timings apart", "s", 11.5, 5, sp(2, 11, 12), sp(2, 4.9, 5.1), false},
		// The interval, not the range, judges where there is one.
		{"intervals overlap", "/restart", 3.2, 4, ci(5, 3, 4, 2.64, 3.76), ci(5, 4, 4, 4, 4), true},
		{"intervals apart within the slack", "/restart", 3, 3.9, ci(5, 3, 3, 3, 3), ci(5, 3, 5, 3.5, 4.3), true},
		{"points apart", "/restart", 3, 4, ci(5, 3, 3, 3, 3), ci(5, 4, 4, 4, 4), false},
		{"ranges overlap, intervals apart", "/restart", 10, 20, ci(5, 0, 30, 9, 11), ci(5, 15, 25, 19, 21), false},
		{"a wide real interval", "s", 0.8, 0.05, ci(22, 0.01, 3.98, 0.04, 3.98), ci(22, 0.01, 0.19, 0.03, 0.19), true},
		{"timings apart beyond 10 %", "s", 20, 25, ci(5, 18, 22, 19, 21), ci(5, 24, 26, 24, 26), false},
	} {
		if got := tol.agreeSpread(tc.unit, tc.real, tc.sim, tc.rs, tc.ss); got != tc.agree {
			t.Errorf("%s: agreeSpread = %v, want %v", tc.name, got, tc.agree)
		}
	}
}

// TestRowsSpread: a count row's figure is the mean over nodes and its
// spread the per-node range, each side on its own; a node that sent none
// counts as 0.
func TestRowsSpread(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	c := &calibration{
		o:       Options{Nodes: 2, Tolerance: DefaultTolerance()},
		real:    side{nodes: []string{"r0", "r1"}},
		sim:     side{nodes: []string{"s0", "s1"}},
		tracker: recovery.NewTracker(clock.RealClock{}),
	}
	var reqs []Request
	get := func(node string, n int) {
		for i := 0; i < n; i++ {
			reqs = append(reqs, Request{Time: t0.Add(time.Second), User: "system:node:" + node, Verb: "get", Resource: "csinodes", Name: node})
		}
	}
	get("r0", 2)
	get("r1", 4)
	get("s0", 2)
	get("s1", 2)
	// Only one real node's Service had its slice written.
	reqs = append(reqs, Request{Time: t0.Add(time.Second), UserAgent: "kube-controller-manager/v1.36.3 (linux/amd64) kubernetes/abc/system:serviceaccount:kube-system:endpointslice-controller",
		Verb: "update", Resource: "endpointslices", Name: "r0-abcde"})
	// Each real node warns of cgroup v1 at its start; one also records
	// Starting. The warnings are the oracle's machine: a row apart.
	for _, e := range []struct{ node, reason string }{{"r0", "Starting"}, {"r0", "CgroupV1"}, {"r1", "CgroupV1"}} {
		reqs = append(reqs, Request{Time: t0.Add(time.Second), User: "system:node:" + e.node, Verb: "create", Resource: "events", Namespace: "default", Name: e.node + ".1", Reason: e.reason})
	}
	rows := c.rows(Case{Name: "reboot"}, reqs, t0, t0.Add(time.Minute), 0, nil)
	find := func(metric string) Row {
		for _, r := range rows {
			if r.Metric == metric {
				return r
			}
		}
		t.Fatalf("no row %q in %+v", metric, rows)
		return Row{}
	}
	csi := find("kubelet: get csinodes")
	if csi.RealSpread == nil || csi.SimulatedSpread == nil {
		t.Fatalf("csinodes row %+v has no spreads", csi)
	}
	// t(1) = 12.706: 3 ± 12.706 × 1/√1 ... cut at 0.
	if csi.Real != 3 || csi.Simulated != 2 || !sameSpread(csi.RealSpread, Spread{N: 2, Min: 2, Max: 4, CI95: &Interval{Lo: 0, Hi: 15.706}}) ||
		!sameSpread(csi.SimulatedSpread, Spread{N: 2, Min: 2, Max: 2, CI95: &Interval{Lo: 2, Hi: 2}}) || !csi.Agree {
		t.Errorf("csinodes row %+v (spreads %+v, %+v): want 3 [2–4] against 2 [2–2], agreeing", csi, csi.RealSpread, csi.SimulatedSpread)
	}
	// A runtime case the kubelets rode out: only r1 sent anything (at
	// 10 s); every other restart counts 0, and the ranges overlap.
	quiet := []Request{{Time: t0.Add(10 * time.Second), User: "system:node:r1", Verb: "patch", Resource: "nodes", Subresource: "status", Name: "r1"}}
	for _, r := range c.rows(Case{Name: "runtime/hung"}, quiet, t0, t0.Add(time.Minute), 0, nil) {
		if r.Metric != MetricLastRequest {
			continue
		}
		if r.Real != 5 || r.Simulated != 0 || !sameSpread(r.RealSpread, Spread{N: 2, Min: 0, Max: 10, CI95: &Interval{Lo: 0, Hi: 68.53}}) ||
			!sameSpread(r.SimulatedSpread, Spread{N: 2, Min: 0, Max: 0, CI95: &Interval{Lo: 0, Hi: 0}}) || !r.Agree {
			t.Errorf("last-request row %+v (spreads %+v, %+v): want real 0–10 against simulated 0–0, agreeing", r, r.RealSpread, r.SimulatedSpread)
		}
	}
	if ev := find("kubelet: create events"); ev.Real != 0.5 || ev.Simulated != 0 {
		t.Errorf("create events row %+v: want 0.5 (Starting on one of two nodes) against 0", ev)
	}
	if cg := find(MetricCgroupV1Events); cg.Real != 1 || cg.Simulated != 0 || !cg.Informational {
		t.Errorf("cgroup v1 row %+v: want 1 against 0, informational", cg)
	}
	sl := find(MetricSliceWrites)
	if sl.RealSpread == nil {
		t.Fatalf("slice row %+v has no spread", sl)
	}
	if sl.Real != 0.5 || sl.Simulated != 0 || !sameSpread(sl.RealSpread, Spread{N: 2, Min: 0, Max: 1, CI95: &Interval{Lo: 0, Hi: 6.853}}) || !sl.Agree {
		t.Errorf("slice row %+v (spread %+v): want 0.5 [0–1] against 0", sl, sl.RealSpread)
	}
}

// sameSpread compares a spread with its interval.
func sameSpread(got *Spread, want Spread) bool {
	if got == nil || got.N != want.N || got.Min != want.Min || got.Max != want.Max || got.Of != want.Of || (got.CI95 == nil) != (want.CI95 == nil) {
		return false
	}
	return got.CI95 == nil || *got.CI95 == *want.CI95
}

// TestKWOKHeartbeatsCountFromDown: KWOK's lease renewals of a simulated
// node count on the simulated side from the node's Down (its relabel) on,
// not between t0 and the relabel, when KWOK is still the node's kubelet
// before its restart.
func TestKWOKHeartbeatsCountFromDown(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 2, 52, 55, 0, time.UTC)
	c := &calibration{
		o:       Options{Nodes: 1, Tolerance: DefaultTolerance()},
		real:    side{nodes: []string{"r0"}},
		sim:     side{nodes: []string{"s0"}},
		tracker: recovery.NewTracker(clock.RealClock{}),
		downs:   map[string]time.Time{"r0": t0.Add(5 * time.Millisecond), "s0": t0.Add(1100 * time.Millisecond)},
	}
	kwok := "kwok-controller/v0.8.0 (linux/amd64) kubernetes/abc"
	reqs := []Request{
		// KWOK's renewal 0.7 s after t0, before the relabel: not counted.
		{Time: t0.Add(700 * time.Millisecond), User: "stormbench:kwok-controller", UserAgent: kwok, Verb: "update", Resource: "leases", Namespace: "kube-node-lease", Name: "s0"},
		{Time: t0.Add(6 * time.Second), User: "system:node:s0", Verb: "update", Resource: "leases", Namespace: "kube-node-lease", Name: "s0"},
		// KWOK's renewal once the node is handed back: counted.
		{Time: t0.Add(27 * time.Second), User: "stormbench:kwok-controller", UserAgent: kwok, Verb: "update", Resource: "leases", Namespace: "kube-node-lease", Name: "s0"},
		{Time: t0.Add(6 * time.Second), User: "system:node:r0", Verb: "update", Resource: "leases", Namespace: "kube-node-lease", Name: "r0"},
	}
	counts, _ := c.countRequests(reqs, t0, t0.Add(30*time.Second))
	got := counts[kubeletPrefix+"update leases"]
	if got["s0"] != 2 || got["r0"] != 1 {
		t.Errorf("update leases by node %v, want s0 2 (its own and KWOK's after the hand-back), r0 1", got)
	}
}

// TestStaggeredWindows: with restarts staggered, each node is counted in
// its own window, from its restart for the case's downtime and observation
// time: a request before a late node's restart, or after an early node's
// window, is neither node's; the pairs restart together.
func TestStaggeredWindows(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 3, 0, 0, 0, time.UTC)
	cs := Case{Name: "kubelet/legacy", Downtime: 5 * time.Second, Observe: 25 * time.Second}
	c := &calibration{
		o:       Options{Nodes: 2, Tolerance: DefaultTolerance(), Stagger: 4 * time.Second},
		real:    side{nodes: []string{"r0", "r1"}},
		sim:     side{nodes: []string{"s0", "s1"}},
		tracker: recovery.NewTracker(clock.RealClock{}),
	}
	sched := c.schedule(cs)
	if len(sched) != 4 || c.offsets["r0"] != c.offsets["s0"] || c.offsets["r1"] != c.offsets["s1"] ||
		c.offsets["r0"]+c.offsets["r1"] != 4*time.Second || c.lastOffset != 4*time.Second {
		t.Fatalf("schedule %+v: want r0 with s0 and r1 with s1, one pair at 0 and the other at 4s", sched)
	}
	if c.offsets["r1"] == 0 { // the test's requests are of r0 first
		c.offsets["r0"], c.offsets["s0"], c.offsets["r1"], c.offsets["s1"] = 0, 0, 4*time.Second, 4*time.Second
	}
	end := t0.Add(c.lastOffset + cs.Downtime + cs.Observe)
	get := func(node string, at time.Duration) Request {
		return Request{Time: t0.Add(at), User: "system:node:" + node, Verb: "get", Resource: "pods", Namespace: "n", Name: node + "-p"}
	}
	reqs := []Request{
		get("r0", 1*time.Second), get("s0", 29*time.Second), // in their windows [0, 30s)
		get("r0", 31*time.Second), get("s0", 33*time.Second), // after them
		get("r1", 2*time.Second), get("s1", 3*time.Second), // before r1's and s1's restart at 4s
		get("r1", 5*time.Second), get("s1", 33*time.Second), // in [4s, 34s)
	}
	counts, _ := c.countRequests(reqs, t0, end)
	want := map[string]float64{"r0": 1, "s0": 1, "r1": 1, "s1": 1}
	if got := counts[kubeletPrefix+"get pods"]; !maps.Equal(got, want) {
		t.Errorf("get pods by node %v, want %v", got, want)
	}
	// A pod still not ready counts up to its node's window's end.
	flips := []recovery.Transition{{At: t0.Add(10 * time.Second), Node: "r0", Object: "n/r0-p"}, {At: t0.Add(10 * time.Second), Node: "r1", Object: "n/r1-p"}}
	got := notReadyDurations(flips, func(node string) time.Time { _, to := c.nodeWindow(node, t0, end); return to })
	if len(got) != 2 || got[0] != 20*time.Second || got[1] != 24*time.Second {
		t.Errorf("open periods %v, want 20s (r0's window ends at 30s) and 24s (r1's at 34s)", got)
	}
}

// TestScheduleOrder: each case plays its pairs in an order of its own,
// the same every time: the real kubelets' node-status loops keep the phase
// of their last start, so one order for every case would give every real
// node one phase against a runtime case's outage.
func TestScheduleOrder(t *testing.T) {
	const n = 10
	seen := map[string]bool{}
	for _, name := range []string{"kubelet/legacy", "runtime/refused", "runtime/refused+http", "runtime/hung", "reboot"} {
		order := scheduleOrder(1, name, n)
		if sorted := slices.Sorted(slices.Values(order)); !slices.Equal(sorted, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}) {
			t.Fatalf("%s: order %v is not a permutation of 0..9", name, order)
		}
		if again := scheduleOrder(1, name, n); !slices.Equal(order, again) {
			t.Errorf("%s: order %v, then %v: want the same for the same seed and case", name, order, again)
		}
		seen[fmt.Sprint(order)] = true
	}
	if len(seen) != 5 {
		t.Errorf("5 cases played in %d orders, want 5", len(seen))
	}
	// The phase a real node meets: its slot in one case against its slot
	// in the case it last started in, modulo a 10-slot status period.
	phases := map[int]bool{}
	a, b := scheduleOrder(1, "kubelet/legacy", n), scheduleOrder(1, "runtime/refused", n)
	for i := range n {
		phases[(b[i]-a[i]+n)%n] = true
	}
	if len(phases) < 4 {
		t.Errorf("the nodes meet %d phases of 10, want them spread: %v against %v", len(phases), a, b)
	}
}

// agree judges two figures without intervals (Tolerance.agreeSpread).
func (t Tolerance) agree(unit string, real, sim float64) bool {
	return t.agreeSpread(unit, real, sim, nil, nil)
}
