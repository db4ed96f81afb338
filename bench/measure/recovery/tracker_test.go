package recovery

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/stormbench/stormbench/bench/measure"
	"github.com/stormbench/stormbench/bench/measure/internal/measuretest"
	"github.com/stormbench/stormbench/bench/result"
	"github.com/stormbench/stormbench/bench/storm"
)

func mkNode(name string, ready bool) *corev1.Node {
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"stormbench.io/run": "r1"}},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: st}}}}
}

func mkPod(name, node string, ready, running bool) *corev1.Pod {
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: measuretest.Ns},
		Spec:       corev1.PodSpec{NodeName: node},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: st}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "c"}}},
	}
	if running {
		p.Status.ContainerStatuses[0].State.Running = &corev1.ContainerStateRunning{}
	} else {
		p.Status.ContainerStatuses[0].State.Waiting = &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}
	}
	return p
}

type recStep struct {
	at time.Duration
	do func(r *Tracker)
}

func node(name string, ready bool) func(*Tracker) {
	return func(r *Tracker) { r.ObserveNode(mkNode(name, ready)) }
}
func pod(name, n string, ready, running bool) func(*Tracker) {
	return func(r *Tracker) { r.ObservePod(mkPod(name, n, ready, running), false) }
}
func podGone(name, n string) func(*Tracker) {
	return func(r *Tracker) { r.ObservePod(mkPod(name, n, false, false), true) }
}
func slice(s *discoveryv1.EndpointSlice) func(*Tracker) {
	return func(r *Tracker) { r.ObserveSlice(s, false) }
}

func down(node string, at time.Duration) storm.Outcome {
	return storm.Outcome{Restart: storm.Restart{Node: node}, Down: measuretest.T0.Add(at)}
}
func reportedReady(node string, at time.Duration) storm.Outcome {
	return storm.Outcome{Restart: storm.Restart{Node: node}, ReportedReady: measuretest.T0.Add(at)}
}

func runRecovery(t *testing.T, steps []recStep, events []storm.Outcome, end time.Duration) Figures {
	t.Helper()
	clk := testingclock.NewFakeClock(measuretest.T0)
	r := NewTracker(clk)
	for _, s := range steps {
		clk.SetTime(measuretest.At(s.at))
		s.do(r)
	}
	clk.SetTime(measuretest.At(end))
	return r.Compute(events)
}

// samples lists a histogram's values in whole seconds (the histograms hold
// microseconds at 3 significant digits).
func samples(h *hdrhistogram.Histogram) []float64 {
	var out []float64
	for _, b := range h.Distribution() {
		for range b.Count {
			out = append(out, math.Round(float64(b.From)/1e6))
		}
	}
	return out
}

func equalSamples(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestRecoveryScripted scripts a storm of kn-1 (Down at 10 s) and kn-2
// (Down at 12 s) with kn-3 untouched.
func TestRecoveryScripted(t *testing.T) {
	web := func(p1, p3 bool) *discoveryv1.EndpointSlice {
		return measuretest.MkSlice("web-a", "web", 1, measuretest.Ep{Pod: "p1", Node: "kn-1", Ready: p1, Terminating: false}, measuretest.Ep{Pod: "p3", Node: "kn-2", Ready: p3, Terminating: false})
	}
	db := func(p4 bool) *discoveryv1.EndpointSlice {
		return measuretest.MkSlice("db-a", "db", 1, measuretest.Ep{Pod: "p4", Node: "kn-3", Ready: p4, Terminating: false})
	}
	steps := []recStep{
		{0, node("kn-1", true)}, {0, node("kn-2", true)}, {0, node("kn-3", true)},
		{0, pod("p1", "kn-1", true, true)}, {0, pod("p2", "kn-1", true, true)},
		{0, pod("p3", "kn-2", true, true)}, {0, pod("p4", "kn-3", true, true)}, {0, pod("p5", "kn-1", true, true)},
		{0, slice(web(true, true))}, {0, slice(db(true))},
		// kn-2's pod and endpoint go first, then kn-1 reports NotReady.
		{14 * time.Second, pod("p3", "kn-2", false, true)}, {14 * time.Second, slice(web(true, false))},
		{15 * time.Second, node("kn-1", false)},
		{16 * time.Second, pod("p1", "kn-1", false, true)}, {16 * time.Second, slice(web(false, false))},
		// p4 flips on a node that never restarted: unattributed.
		{17 * time.Second, pod("p4", "kn-3", false, true)}, {17 * time.Second, slice(db(false))},
		{18 * time.Second, pod("p4", "kn-3", true, true)}, {18 * time.Second, slice(db(true))},
		// The StatefulSet pod p5 is deleted and recreated on kn-3.
		{18 * time.Second, podGone("p5", "kn-1")},
		{20 * time.Second, node("kn-1", true)},
		{22 * time.Second, pod("p1", "kn-1", true, true)}, {22 * time.Second, slice(web(true, false))},
		{30 * time.Second, pod("p3", "kn-2", true, true)}, {30 * time.Second, slice(web(true, true))},
		{33 * time.Second, pod("p5", "kn-3", false, true)},
		{35 * time.Second, pod("p5", "kn-3", true, true)},
	}
	// kn-2's watch never showed it NotReady: its ReportedReady event counts.
	events := []storm.Outcome{down("kn-1", 10*time.Second), down("kn-2", 12*time.Second), reportedReady("kn-2", 25*time.Second), reportedReady("kn-1", 19*time.Second)}
	rec := runRecovery(t, steps, events, 40*time.Second)

	tests := []struct {
		name string
		h    *hdrhistogram.Histogram
		want []float64
	}{
		{"node", rec.Node, []float64{10, 13}},
		{"pod", rec.Pod, []float64{12, 18, 25}},
		{"pod running", rec.PodRunning, []float64{23}},
		{"service", rec.Service, []float64{20}},
		{"storm", rec.FleetRecovered, []float64{25}},
	}
	for _, tt := range tests {
		if got := samples(tt.h); !equalSamples(got, tt.want) {
			t.Errorf("%s recovery = %v s, want %v", tt.name, got, tt.want)
		}
	}
	if rec.NodesFromEvents != 1 {
		t.Errorf("nodes from events = %d, want 1 (kn-2)", rec.NodesFromEvents)
	}
	if rec.Unattributed["pod"] != 1 || rec.Unattributed["service"] != 1 || len(rec.Unrecovered) != 0 {
		t.Errorf("unattributed = %v, unrecovered = %v; want one pod and one service unattributed, nothing unrecovered", rec.Unattributed, rec.Unrecovered)
	}
	// Unrecovered nodes from the first Down: 1 in [10,12), 2 in [12,20), 1 in [20,25).
	var got []float64
	for _, p := range rec.UnrecoveredNodes.Points {
		got = append(got, p.V)
	}
	want := []float64{1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	if !equalSamples(got, want) {
		t.Errorf("unrecovered nodes series = %v, want %v", got, want)
	}

	m, err := recoveryResult(rec, true)
	if err != nil {
		t.Fatal(err)
	}
	measuretest.GoldenMeasurement(t, "recovery.golden.json", m)
}

func TestRecoveryEdges(t *testing.T) {
	tests := []struct {
		name   string
		steps  []recStep
		events []storm.Outcome
		check  func(t *testing.T, r Figures)
	}{
		{
			name:   "no storm: nothing to measure",
			steps:  []recStep{{0, node("kn-1", true)}},
			events: nil,
			check: func(t *testing.T, r Figures) {
				if r.Node.TotalCount()+r.FleetRecovered.TotalCount() != 0 || len(r.UnrecoveredNodes.Points) != 0 {
					t.Errorf("figures without a storm: %+v", r)
				}
			},
		},
		{
			name:   "a node that never comes back leaves the storm unrecovered",
			steps:  []recStep{{0, node("kn-1", true)}, {5 * time.Second, node("kn-1", false)}},
			events: []storm.Outcome{down("kn-1", time.Second)},
			check: func(t *testing.T, r Figures) {
				if r.Unrecovered["node"] != 1 || r.FleetRecovered.TotalCount() != 0 || r.Node.TotalCount() != 0 {
					t.Errorf("unrecovered = %v, storm samples = %d", r.Unrecovered, r.FleetRecovered.TotalCount())
				}
			},
		},
		{
			name:   "a node already NotReady at its Down event recovers at its next Ready",
			steps:  []recStep{{0, node("kn-1", false)}, {7 * time.Second, node("kn-1", true)}},
			events: []storm.Outcome{down("kn-1", 2*time.Second)},
			check: func(t *testing.T, r Figures) {
				if got := samples(r.Node); !equalSamples(got, []float64{5}) {
					t.Errorf("node recovery = %v, want [5]", got)
				}
			},
		},
		{
			name: "two restarts of one node are measured separately",
			steps: []recStep{
				{0, node("kn-1", true)},
				{2 * time.Second, node("kn-1", false)}, {4 * time.Second, node("kn-1", true)},
				{11 * time.Second, node("kn-1", false)}, {17 * time.Second, node("kn-1", true)},
			},
			events: []storm.Outcome{down("kn-1", time.Second), down("kn-1", 10*time.Second)},
			check: func(t *testing.T, r Figures) {
				if got := samples(r.Node); !equalSamples(got, []float64{3, 7}) {
					t.Errorf("node recovery = %v, want [3 7]", got)
				}
				if got := samples(r.FleetRecovered); !equalSamples(got, []float64{16}) {
					t.Errorf("storm recovery = %v, want [16]", got)
				}
			},
		},
		{
			name:   "a node without a NotReady observation or event is unrecovered",
			steps:  []recStep{{0, node("kn-1", true)}},
			events: []storm.Outcome{down("kn-1", time.Second)},
			check: func(t *testing.T, r Figures) {
				if r.Unrecovered["node"] != 1 || r.NodesFromEvents != 0 {
					t.Errorf("unrecovered = %v, from events = %d", r.Unrecovered, r.NodesFromEvents)
				}
			},
		},
		{
			name: "a pod that flips twice after one restart counts once",
			steps: []recStep{
				{0, node("kn-1", true)}, {0, pod("p", "kn-1", true, true)},
				{2 * time.Second, node("kn-1", false)}, {3 * time.Second, node("kn-1", true)},
				{4 * time.Second, pod("p", "kn-1", false, true)}, {5 * time.Second, pod("p", "kn-1", true, true)},
				{6 * time.Second, pod("p", "kn-1", false, true)}, {9 * time.Second, pod("p", "kn-1", true, true)},
			},
			events: []storm.Outcome{down("kn-1", time.Second)},
			check: func(t *testing.T, r Figures) {
				if got := samples(r.Pod); !equalSamples(got, []float64{4}) {
					t.Errorf("pod recovery = %v, want [4]", got)
				}
			},
		},
		{
			name: "a service still degraded is unrecovered",
			steps: []recStep{
				{0, slice(measuretest.MkSlice("s", "svc", 1, measuretest.Ep{Pod: "p", Node: "kn-1", Ready: true, Terminating: false}))},
				{3 * time.Second, slice(measuretest.MkSlice("s", "svc", 2, measuretest.Ep{Pod: "p", Node: "kn-1", Ready: false, Terminating: false}))},
			},
			events: []storm.Outcome{down("kn-1", time.Second)},
			check: func(t *testing.T, r Figures) {
				if r.Unrecovered["service"] != 1 {
					t.Errorf("unrecovered = %v, want one service", r.Unrecovered)
				}
			},
		},
		{
			name: "a service recovers when its not-ready endpoint is removed",
			steps: []recStep{
				{0, slice(measuretest.MkSlice("s", "svc", 1, measuretest.Ep{Pod: "p", Node: "kn-1", Ready: true, Terminating: false}, measuretest.Ep{Pod: "q", Node: "kn-2", Ready: true, Terminating: false}))},
				{3 * time.Second, slice(measuretest.MkSlice("s", "svc", 2, measuretest.Ep{Pod: "p", Node: "kn-1", Ready: false, Terminating: true}, measuretest.Ep{Pod: "q", Node: "kn-2", Ready: true, Terminating: false}))},
				{8 * time.Second, slice(measuretest.MkSlice("s", "svc", 3, measuretest.Ep{Pod: "q", Node: "kn-2", Ready: true, Terminating: false}))},
			},
			events: []storm.Outcome{down("kn-1", time.Second)},
			check: func(t *testing.T, r Figures) {
				if got := samples(r.Service); !equalSamples(got, []float64{7}) {
					t.Errorf("service recovery = %v, want [7]", got)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.check(t, runRecovery(t, tt.steps, tt.events, 30*time.Second))
		})
	}
}

// TestRecoveryWatch runs the measurement against a fake clientset: node
// and pod status updates reach the tracker through real informers.
func TestRecoveryWatch(t *testing.T) {
	ctx := context.Background()
	client := fake.NewClientset(mkNode("kn-1", true), mkPod("p1", "kn-1", true, true))
	var watches atomic.Int32
	client.PrependWatchReactor("*", func(k8stesting.Action) (bool, watch.Interface, error) {
		watches.Add(1)
		return false, nil, nil
	})
	clk := testingclock.NewFakeClock(measuretest.T0)
	events := &storm.Outcomes{}
	m := New(Options{PerPod: true})
	if err := m.Start(ctx, &measure.Env{Client: client, Namespace: measuretest.Ns, Clock: clk, Outcomes: events, NodeSelector: "stormbench.io/run=r1"}); err != nil {
		t.Fatal(err)
	}
	defer m.Dispose()
	measuretest.WaitFor(t, "node, pod and EndpointSlice watches", func() bool { return watches.Load() >= 3 })
	observed := func(what string, key string, n int, pods bool) {
		t.Helper()
		measuretest.WaitFor(t, what, func() bool {
			m.tracker.mu.Lock()
			defer m.tracker.mu.Unlock()
			if pods {
				return m.tracker.pods[key] != nil && len(m.tracker.pods[key].ready) == n
			}
			return m.tracker.nodes[key] != nil && len(*m.tracker.nodes[key]) == n
		})
	}
	// The initial state first: an initial list handled after the clock
	// moved would pass for a recovery.
	observed("kn-1 initially Ready", "kn-1", 1, false)
	observed("p1 initially ready", measuretest.Ns+"/p1", 1, true)
	clk.Step(time.Second)
	events.Add(storm.Outcome{Restart: storm.Restart{Node: "kn-1"}, Down: clk.Now()})
	clk.Step(4 * time.Second)
	if _, err := client.CoreV1().Nodes().UpdateStatus(ctx, mkNode("kn-1", false), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	observed("kn-1 NotReady", "kn-1", 2, false)
	if _, err := client.CoreV1().Pods(measuretest.Ns).UpdateStatus(ctx, mkPod("p1", "kn-1", false, true), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	observed("p1 not ready", measuretest.Ns+"/p1", 2, true)
	clk.Step(3 * time.Second)
	if _, err := client.CoreV1().Nodes().UpdateStatus(ctx, mkNode("kn-1", true), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	observed("kn-1 Ready", "kn-1", 3, false)
	clk.Step(2 * time.Second)
	if _, err := client.CoreV1().Pods(measuretest.Ns).UpdateStatus(ctx, mkPod("p1", "kn-1", true, true), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	observed("p1 ready", measuretest.Ns+"/p1", 3, true)

	out, err := m.Gather(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]float64{Node: 7, Pod: 9, FleetRecovered: 9} {
		h := out.Histogram(name, result.WindowStorm)
		if h == nil || h.Summary.Count != 1 || math.Abs(h.Summary.Max-want) > want*1e-3 {
			t.Errorf("%s = %+v, want one sample of %v s", name, h, want)
		}
	}
}

// TestRecoveryTransitions checks the tracker's transitions as a
// calibration reads them: first sightings are states, not transitions;
// repeats of a state add nothing; only [from, to) is returned, in time
// order across objects; a node's not-ready message is kept.
func TestRecoveryTransitions(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := testingclock.NewFakePassiveClock(t0)
	r := NewTracker(clk)
	notReady := mkNode("n1", false)
	notReady.Status.Conditions[0].Message = "PLEG is not healthy: pleg has yet to be successful"
	for _, s := range []struct {
		at time.Duration
		do func()
	}{
		{0, func() { r.ObserveNode(mkNode("n1", true)); r.ObservePod(mkPod("a", "n1", true, true), false) }},
		{0, func() { r.ObservePod(mkPod("b", "n1", true, true), false) }},
		{1 * time.Second, func() { r.ObserveNode(notReady) }},
		{2 * time.Second, func() { r.ObservePod(mkPod("b", "n1", false, true), false) }},
		{2 * time.Second, func() { r.ObservePod(mkPod("b", "n1", false, true), false) }}, // a repeat
		{3 * time.Second, func() { r.ObservePod(mkPod("a", "n1", false, true), false) }},
		{4 * time.Second, func() { r.ObserveNode(mkNode("n1", true)) }},
		{5 * time.Second, func() { r.ObservePod(mkPod("a", "n1", true, true), false) }},
		{9 * time.Second, func() { r.ObservePod(mkPod("b", "n1", true, true), false) }}, // after the window
	} {
		clk.SetTime(t0.Add(s.at))
		s.do()
	}
	pods, nodes := r.Transitions(t0, t0.Add(8*time.Second))
	var got []string
	for _, tr := range pods {
		got = append(got, fmt.Sprintf("%v %s %s %t", tr.At.Sub(t0), tr.Node, tr.Object, tr.Ready))
	}
	want := []string{"2s n1 " + measuretest.Ns + "/b false", "3s n1 " + measuretest.Ns + "/a false", "5s n1 " + measuretest.Ns + "/a true"}
	if !slices.Equal(got, want) {
		t.Errorf("pod transitions\n got %q\nwant %q", got, want)
	}
	if len(nodes) != 2 || nodes[0].Ready || !nodes[1].Ready || nodes[0].Node != "n1" || !strings.Contains(nodes[0].Message, "pleg has yet") {
		t.Errorf("node transitions %+v, want n1 not ready with its message at 1s, ready at 4s", nodes)
	}
}
