package self

import (
	"context"
	"errors"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/stormbench/stormbench/bench/fleet"
	"github.com/stormbench/stormbench/bench/measure"
	"github.com/stormbench/stormbench/bench/measure/internal/measuretest"
	"github.com/stormbench/stormbench/bench/result"
	"github.com/stormbench/stormbench/bench/storm"
)

type fakeFleet struct {
	fixed   int64
	lost    int
	listErr error
}

func (f *fakeFleet) Readiness(context.Context) (*fleet.Readiness, error) {
	if f.listErr != nil {
		return nil, f.listErr
	}
	return &fleet.Readiness{LostPods: f.lost}, nil
}

func (f *fakeFleet) StaleReadinessFixed() int64 { return f.fixed }

func TestSimulator(t *testing.T) {
	clk := testingclock.NewFakeClock(measuretest.T0)
	events := &storm.Outcomes{}
	fl := &fakeFleet{fixed: 4, lost: 2}
	m := NewSimulator(SimulatorOptions{
		Counters: func() map[string]int64 { return map[string]int64{"podStatusPatches": 10, "errors": 1} },
		Fleet:    fl,
	})
	if err := m.Start(context.Background(), &measure.Env{Client: fake.NewClientset(), Clock: clk, Outcomes: events}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Gather(context.Background()); !errors.Is(err, measure.ErrNoStorm) {
		t.Fatalf("Gather before the storm: %v, want ErrNoStorm", err)
	}
	m.MarkStormStart(measuretest.At(time.Second))
	// Restarts are the outcomes whose node went down: a restart that
	// failed before its node went down is an error, not a restart.
	events.Add(storm.Outcome{Restart: storm.Restart{Node: "n1"}, Down: measuretest.At(2 * time.Second)})
	events.Add(storm.Outcome{Restart: storm.Restart{Node: "n2"}, End: measuretest.At(2 * time.Second), Err: errors.New("refused")})
	events.Add(storm.Outcome{Restart: storm.Restart{Node: "n3"}, Down: measuretest.At(3 * time.Second)})
	fl.fixed = 7
	m.MarkStormEnd(context.Background(), measuretest.At(time.Minute))
	// Read at the storm's end, not at Gather.
	fl.fixed, fl.lost = 9, 5
	clk.Step(2 * time.Minute)
	got, err := m.Gather(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if w, ok := got.Window(result.WindowStorm); !ok || !w.Start.Equal(measuretest.At(time.Second)) || !w.End.Equal(measuretest.At(time.Minute)) {
		t.Errorf("storm window = %+v, want from the storm's start to its end", w)
	}
	for _, tc := range []struct {
		name string
		want float64
	}{
		{Restarts, 2},
		{"podStatusPatches", 10},
		{"errors", 1},
		{PodsLost, 2},
		{StaleReadinessFixed, 3}, // during the storm only
	} {
		if v := measuretest.Value(t, &got, tc.name, result.WindowStorm); v != tc.want {
			t.Errorf("%s = %v, want %v", tc.name, v, tc.want)
		}
	}
}

// A storm that did not reach its end is read at Gather; a failed listing
// counts no pod lost.
func TestSimulatorUnfinishedStorm(t *testing.T) {
	clk := testingclock.NewFakeClock(measuretest.T0)
	m := NewSimulator(SimulatorOptions{Fleet: &fakeFleet{lost: 3, listErr: errors.New("timeout")}})
	if err := m.Start(context.Background(), &measure.Env{Client: fake.NewClientset(), Clock: clk}); err != nil {
		t.Fatal(err)
	}
	m.MarkStormStart(measuretest.T0)
	clk.Step(time.Minute)
	got, err := m.Gather(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if w, _ := got.Window(result.WindowStorm); !w.End.Equal(measuretest.At(time.Minute)) {
		t.Errorf("window ends %s, want at Gather", w.End)
	}
	if v := measuretest.Value(t, &got, PodsLost, result.WindowStorm); v != 0 {
		t.Errorf("%s with a failed listing = %v, want 0", PodsLost, v)
	}
	if v := measuretest.Value(t, &got, Restarts, result.WindowStorm); v != 0 {
		t.Errorf("%s without an event log = %v, want 0", Restarts, v)
	}
}
