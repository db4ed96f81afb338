package churn

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

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
)

// churnScript is a scripted watch stream: at each offset from t0, one event.
type churnStep struct {
	at   time.Duration
	do   func(tr *SliceTracker)
	note string
}

func runChurn(t *testing.T, steps []churnStep, end time.Duration) Snapshot {
	t.Helper()
	clk := testingclock.NewFakeClock(measuretest.T0)
	tr := NewSliceTracker(clk)
	for _, s := range steps {
		clk.SetTime(measuretest.At(s.at))
		s.do(tr)
	}
	clk.SetTime(measuretest.At(end))
	return tr.Snapshot()
}

func add(s *discoveryv1.EndpointSlice, initial bool) func(*SliceTracker) {
	return func(tr *SliceTracker) { tr.OnAdd(s, initial) }
}
func upd(old, cur *discoveryv1.EndpointSlice) func(*SliceTracker) {
	return func(tr *SliceTracker) { tr.OnUpdate(old, cur) }
}
func del(s *discoveryv1.EndpointSlice) func(*SliceTracker) {
	return func(tr *SliceTracker) { tr.OnDelete(s) }
}
func svc(name string, deleted bool) func(*SliceTracker) {
	return func(tr *SliceTracker) { tr.OnService(measuretest.Ns, name, deleted) }
}
func markStorm(at time.Duration) func(*SliceTracker) {
	return func(tr *SliceTracker) { tr.MarkStormStart(measuretest.T0.Add(at)) }
}

// TestSliceTrackerStorm scripts a legacy-gate storm: two endpoints of web
// flip, db's only endpoint flips (an 8 s outage), a slice is rebalanced and
// a Service is deleted with its slice.
func TestSliceTrackerStorm(t *testing.T) {
	a1 := measuretest.MkSlice("web-a", "web", 1, measuretest.Ep{Pod: "p1", Node: "kn-1", Ready: true, Terminating: false}, measuretest.Ep{Pod: "p2", Node: "kn-2", Ready: true, Terminating: false}, measuretest.Ep{Pod: "p3", Node: "kn-3", Ready: true, Terminating: false})
	b1 := measuretest.MkSlice("db-a", "db", 2, measuretest.Ep{Pod: "d1", Node: "kn-1", Ready: true, Terminating: false})
	c1 := measuretest.MkSlice("api-a", "api", 3, measuretest.Ep{Pod: "a1", Node: "kn-2", Ready: true, Terminating: false}, measuretest.Ep{Pod: "a2", Node: "kn-3", Ready: true, Terminating: false})
	a2 := measuretest.MkSlice("web-a", "web", 10, measuretest.Ep{Pod: "p1", Node: "kn-1", Ready: false, Terminating: false}, measuretest.Ep{Pod: "p2", Node: "kn-2", Ready: true, Terminating: false}, measuretest.Ep{Pod: "p3", Node: "kn-3", Ready: true, Terminating: false})
	b2 := measuretest.MkSlice("db-a", "db", 11, measuretest.Ep{Pod: "d1", Node: "kn-1", Ready: false, Terminating: false})
	a3 := measuretest.MkSlice("web-a", "web", 12, measuretest.Ep{Pod: "p1", Node: "kn-1", Ready: true, Terminating: false}, measuretest.Ep{Pod: "p2", Node: "kn-2", Ready: false, Terminating: false}, measuretest.Ep{Pod: "p3", Node: "kn-3", Ready: true, Terminating: false})
	b3 := measuretest.MkSlice("db-a", "db", 13, measuretest.Ep{Pod: "d1", Node: "kn-1", Ready: true, Terminating: false})
	a4 := measuretest.MkSlice("web-a", "web", 14, measuretest.Ep{Pod: "p1", Node: "kn-1", Ready: true, Terminating: false}, measuretest.Ep{Pod: "p2", Node: "kn-2", Ready: true, Terminating: false}, measuretest.Ep{Pod: "p3", Node: "kn-3", Ready: true, Terminating: false})
	c2 := measuretest.MkSlice("api-b", "api", 15, measuretest.Ep{Pod: "a1", Node: "kn-2", Ready: true, Terminating: false})
	steps := []churnStep{
		{0, add(a1, true), "initial list"},
		{0, add(b1, true), ""},
		{0, add(c1, true), ""},
		{0, svc("web", false), ""}, {0, svc("db", false), ""}, {0, svc("api", false), ""},
		{5 * time.Second, markStorm(5 * time.Second), ""},
		{10 * time.Second, upd(a1, a2), "p1 not ready"},
		{12 * time.Second, upd(b1, b2), "d1 not ready: db outage"},
		{15 * time.Second, upd(a2, a3), "p1 ready, p2 not ready"},
		{20 * time.Second, upd(b2, b3), "db back after 8 s"},
		{22 * time.Second, upd(b3, b3), "resync: not a write"},
		{25 * time.Second, upd(a3, a4), "p2 ready"},
		{26 * time.Second, add(c2, false), "rebalance: a1 listed twice"},
		{27 * time.Second, del(c1), "a2 leaves, a1 stays ready"},
		{28 * time.Second, svc("api", true), "api deleted"},
		{29 * time.Second, del(c2), "its last slice goes: not an outage"},
	}
	snap := runChurn(t, steps, 30*time.Second)

	if !snap.StormMarked {
		t.Fatal("storm not marked")
	}
	b, s := snap.Baseline, snap.Storm
	if b.Writes != 0 || b.NotReadySeconds != 0 || b.FlipsToNotReady != 0 {
		t.Errorf("baseline = %+v, want no churn (initial-list adds are not writes)", b)
	}
	wantBytes := int64(a2.Size() + b2.Size() + a3.Size() + b3.Size() + a4.Size() + c2.Size())
	tests := []struct {
		name      string
		got, want float64
	}{
		{"writes", float64(s.Writes), 8},
		{"creates", float64(s.Creates), 1},
		{"updates", float64(s.Updates), 5},
		{"deletes", float64(s.Deletes), 2},
		{"bytes", float64(s.BytesWritten), float64(wantBytes)},
		{"flips to not ready", float64(s.FlipsToNotReady), 3},
		{"flips to ready", float64(s.FlipsToReady), 3},
		{"peak not ready", float64(s.NotReadyPeak), 2},
		// 1 endpoint for 2 s, 2 for 3 s, 2 for 5 s, 1 for 5 s.
		{"not-ready endpoint-seconds", s.NotReadySeconds, 2 + 6 + 10 + 5},
		{"services with an outage", float64(len(s.Outages)), 1},
		{"db outage seconds", s.Outages[measuretest.Ns+"/db"], 8},
		{"ongoing outages", float64(s.OngoingOutages), 0},
		{"not ready now", float64(snap.NotReady), 0},
		{"services now", float64(snap.Services), 2},
		{"endpoints now", float64(snap.Endpoints), 4},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s = %v, want %v", tt.name, tt.got, tt.want)
		}
	}
	if !s.End.Equal(measuretest.At(30*time.Second)) || !s.Start.Equal(measuretest.At(5*time.Second)) {
		t.Errorf("storm window = [%v, %v], want [5s, 30s]", s.Start, s.End)
	}

	m := churnResult(snap, 1000)
	if v := measuretest.Value(t, &m, SliceFanOutEvents, result.WindowStorm); v != 8000 {
		t.Errorf("fan-out estimate = %v, want 8 writes × 1000 nodes", v)
	}
	measuretest.GoldenMeasurement(t, "churn.golden.json", m)
}

func TestSliceTrackerEdges(t *testing.T) {
	one := func(rv int, ready, terminating bool) *discoveryv1.EndpointSlice {
		return measuretest.MkSlice("s", "svc", rv, measuretest.Ep{Pod: "p", Node: "n", Ready: ready, Terminating: terminating})
	}
	tests := []struct {
		name  string
		steps []churnStep
		end   time.Duration
		check func(t *testing.T, s Snapshot)
	}{
		{
			name: "outage spanning the storm start is split between windows",
			steps: []churnStep{
				{0, add(one(1, true, false), true), ""},
				{2 * time.Second, upd(one(1, true, false), one(2, false, false)), ""},
				{5 * time.Second, markStorm(5 * time.Second), ""},
				{9 * time.Second, upd(one(2, false, false), one(3, true, false)), ""},
			},
			end: 10 * time.Second,
			check: func(t *testing.T, s Snapshot) {
				if b, st := s.Baseline.Outages[measuretest.Ns+"/svc"], s.Storm.Outages[measuretest.Ns+"/svc"]; b != 3 || st != 4 {
					t.Errorf("outage baseline/storm = %v/%v s, want 3/4", b, st)
				}
				if s.Baseline.NotReadySeconds != 3 || s.Storm.NotReadySeconds != 4 {
					t.Errorf("not-ready seconds baseline/storm = %v/%v, want 3/4", s.Baseline.NotReadySeconds, s.Storm.NotReadySeconds)
				}
				if s.Storm.NotReadyPeak != 1 {
					t.Errorf("storm peak = %d, want 1 (carried over from the baseline)", s.Storm.NotReadyPeak)
				}
			},
		},
		{
			name: "ongoing outage is credited up to the snapshot",
			steps: []churnStep{
				{0, add(one(1, true, false), true), ""},
				{1 * time.Second, markStorm(time.Second), ""},
				{4 * time.Second, upd(one(1, true, false), one(2, false, true)), "terminating counts as not ready"},
			},
			end: 10 * time.Second,
			check: func(t *testing.T, s Snapshot) {
				if s.Storm.Outages[measuretest.Ns+"/svc"] != 6 || s.Storm.OngoingOutages != 1 || s.Storm.NotReadySeconds != 6 {
					t.Errorf("storm = %+v, want one ongoing 6 s outage", s.Storm)
				}
			},
		},
		{
			name: "a service that never had a ready endpoint has no outage",
			steps: []churnStep{
				{0, markStorm(0), ""},
				{1 * time.Second, add(one(1, false, false), false), ""},
			},
			end: 10 * time.Second,
			check: func(t *testing.T, s Snapshot) {
				if len(s.Storm.Outages) != 0 || s.Storm.FlipsToNotReady != 0 || s.Storm.NotReadySeconds != 9 {
					t.Errorf("storm = %+v, want no outage, no flip, 9 not-ready endpoint-seconds", s.Storm)
				}
			},
		},
		{
			name: "a slice without a service label is ignored but counted as a write",
			steps: []churnStep{
				{0, markStorm(0), ""},
				{1 * time.Second, add(func() *discoveryv1.EndpointSlice {
					s := one(1, false, false)
					s.Labels = nil
					return s
				}(), false), ""},
			},
			end: 2 * time.Second,
			check: func(t *testing.T, s Snapshot) {
				if s.Storm.Writes != 1 || s.Endpoints != 0 || s.NotReady != 0 {
					t.Errorf("snapshot = %+v, want 1 write and nothing tracked", s)
				}
			},
		},
		{
			name: "nil ready condition means ready",
			steps: []churnStep{
				{0, add(func() *discoveryv1.EndpointSlice {
					s := one(1, true, false)
					s.Endpoints[0].Conditions.Ready = nil
					return s
				}(), true), ""},
				{0, markStorm(0), ""},
				{1 * time.Second, upd(one(1, true, false), one(2, false, false)), ""},
			},
			end: 2 * time.Second,
			check: func(t *testing.T, s Snapshot) {
				if s.Storm.FlipsToNotReady != 1 {
					t.Errorf("flips = %d, want 1", s.Storm.FlipsToNotReady)
				}
			},
		},
		{
			name: "without a storm start everything is baseline",
			steps: []churnStep{
				{0, add(one(1, true, false), true), ""},
				{1 * time.Second, upd(one(1, true, false), one(2, false, false)), ""},
			},
			end: 3 * time.Second,
			check: func(t *testing.T, s Snapshot) {
				if s.StormMarked || s.Baseline.Writes != 1 || s.Baseline.NotReadySeconds != 2 || !s.Baseline.End.Equal(measuretest.At(3*time.Second)) {
					t.Errorf("snapshot = %+v, want one baseline write and 2 endpoint-seconds", s)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.check(t, runChurn(t, tt.steps, tt.end))
		})
	}
}

// TestEndpointSliceChurnWatch runs the measurement against a fake
// clientset: writes made through the API reach the tracker through a real
// informer watch, and two extra watchers receive every event.
func TestEndpointSliceChurnWatch(t *testing.T) {
	ctx := context.Background()
	initial := measuretest.MkSlice("web-a", "web", 0, measuretest.Ep{Pod: "p1", Node: "kn-1", Ready: true, Terminating: false}, measuretest.Ep{Pod: "p2", Node: "kn-2", Ready: true, Terminating: false})
	initial.ResourceVersion = ""
	client := fake.NewClientset(initial, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: measuretest.Ns}})
	var sliceWatches atomic.Int32
	client.PrependWatchReactor("endpointslices", func(k8stesting.Action) (bool, watch.Interface, error) {
		sliceWatches.Add(1)
		return false, nil, nil
	})
	clk := testingclock.NewFakeClock(measuretest.T0)
	m, err := New(Options{Watchers: 2})
	if err != nil {
		t.Fatal(err)
	}
	env := &measure.Env{Client: client, Namespace: measuretest.Ns, Clock: clk, Nodes: 50}
	if err := m.Start(ctx, env); err != nil {
		t.Fatal(err)
	}
	defer m.Dispose()
	// The fake API server does not replay missed events, so wait until the
	// informer and both extra watchers are watching before writing.
	measuretest.WaitFor(t, "three EndpointSlice watches", func() bool { return sliceWatches.Load() >= 3 })

	clk.Step(5 * time.Second)
	m.MarkStormStart(clk.Now())
	slices := client.DiscoveryV1().EndpointSlices(measuretest.Ns)
	write := func(s *discoveryv1.EndpointSlice, writes int) {
		t.Helper()
		s.ResourceVersion = ""
		if _, err := slices.Update(ctx, s, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		measuretest.WaitFor(t, fmt.Sprintf("write %d to reach the tracker", writes), func() bool { return m.tracker.Snapshot().Storm.Writes == writes })
	}
	clk.Step(time.Second)
	write(measuretest.MkSlice("web-a", "web", 0, measuretest.Ep{Pod: "p1", Node: "kn-1", Ready: false, Terminating: false}, measuretest.Ep{Pod: "p2", Node: "kn-2", Ready: true, Terminating: false}), 1)
	clk.Step(2 * time.Second)
	write(measuretest.MkSlice("web-a", "web", 0, measuretest.Ep{Pod: "p1", Node: "kn-1", Ready: false, Terminating: false}, measuretest.Ep{Pod: "p2", Node: "kn-2", Ready: false, Terminating: false}), 2)
	clk.Step(3 * time.Second)
	write(measuretest.MkSlice("web-a", "web", 0, measuretest.Ep{Pod: "p1", Node: "kn-1", Ready: true, Terminating: false}, measuretest.Ep{Pod: "p2", Node: "kn-2", Ready: true, Terminating: false}), 3)
	clk.Step(4 * time.Second)
	measuretest.WaitFor(t, "the extra watchers to see 3 writes each", func() bool { return m.watcherEvents.Load() == 6 })

	out, err := m.Gather(ctx)
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name   string
		labels []string
		want   float64
	}{
		{SliceWrites, nil, 3},
		{SliceUpdates, nil, 3},
		{SliceReadyFlips, []string{result.LabelDirection, DirectionReadyToNot}, 2},
		{SliceReadyFlips, []string{result.LabelDirection, DirectionNotToReady}, 2},
		{SliceNotReadyPeak, nil, 2},
		{SliceNotReadySeconds, nil, 2 + 2*3},
		{SliceOutageSeconds, nil, 3},
		{SliceServicesOutage, nil, 1},
		{SliceFanOutEvents, nil, 150},
	}
	for _, c := range checks {
		if got := measuretest.Value(t, &out, c.name, result.WindowStorm, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	if got := measuretest.Value(t, &out, SliceWatcherEvents, ""); got != 6 {
		t.Errorf("extra watcher events = %v, want 6", got)
	}
	m.Dispose()
}
