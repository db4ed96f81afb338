package measure

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/stormbench/stormbench/bench/measure/internal/measuretest"
	"github.com/stormbench/stormbench/bench/result"
	"github.com/stormbench/stormbench/profiles"
)

type fakeMeasurement struct {
	name                string
	startErr, gatherErr error
	stormStart          time.Time
	disposed            int
}

func (f *fakeMeasurement) Name() string                      { return f.name }
func (f *fakeMeasurement) Start(context.Context, *Env) error { return f.startErr }
func (f *fakeMeasurement) MarkStormStart(t time.Time)        { f.stormStart = t }
func (f *fakeMeasurement) Dispose()                          { f.disposed++ }
func (f *fakeMeasurement) BaselineWait() time.Duration       { return 7 * time.Second }
func (f *fakeMeasurement) Gather(context.Context) (result.Measurement, error) {
	return result.Measurement{Values: []result.Value{{Name: "x", Unit: result.UnitCount, Value: 1}}}, f.gatherErr
}

func TestSetKeepsOthersWhenOneFails(t *testing.T) {
	ms := map[string]*fakeMeasurement{
		"a": {name: "a"},
		"b": {name: "b", startErr: errors.New("forbidden")},
		"c": {name: "c", gatherErr: errors.New("watch closed")},
	}
	ctors := map[string]Constructor{"disabled": func(profiles.Measurements) (Measurement, error) { return nil, nil }}
	for name, m := range ms {
		ctors[name] = func(profiles.Measurements) (Measurement, error) { return m, nil }
	}
	s, err := NewSetFrom(ctors, profiles.Measurements{})
	if err != nil {
		t.Fatal(err)
	}
	env := &Env{Client: fake.NewClientset(), Clock: testingclock.NewFakeClock(measuretest.T0)}
	err = s.Start(context.Background(), env)
	if err == nil || !strings.Contains(err.Error(), "starting b: forbidden") {
		t.Errorf("Start error = %v, want b's failure", err)
	}
	if s.BaselineWait() != 7*time.Second {
		t.Errorf("BaselineWait = %v, want 7s", s.BaselineWait())
	}
	s.MarkStormStart(measuretest.At(time.Second))
	out := s.Gather(context.Background())
	var names []string
	for _, m := range out {
		names = append(names, m.Name)
	}
	if !slices.Equal(names, []string{"a", "b", "c"}) {
		t.Fatalf("gathered %v, want [a b c] in name order", names)
	}
	if out[0].Error != "" || len(out[0].Values) != 1 {
		t.Errorf("a = %+v, want its figures and no error", out[0])
	}
	if !strings.Contains(out[1].Error, "forbidden") || len(out[1].Values) != 0 {
		t.Errorf("b = %+v, want its start error and no figures", out[1])
	}
	if !strings.Contains(out[2].Error, "watch closed") || len(out[2].Values) != 1 {
		t.Errorf("c = %+v, want its gather error and its partial figures", out[2])
	}
	if !ms["a"].stormStart.Equal(measuretest.At(time.Second)) {
		t.Error("MarkStormStart was not forwarded")
	}
	s.Dispose()
	s.Dispose()
	for name, m := range ms {
		if m.disposed != 1 {
			t.Errorf("%s disposed %d times, want 1", name, m.disposed)
		}
	}
	if err := s.Start(context.Background(), env); err == nil {
		t.Error("a second Start succeeded")
	}
}

func TestSetStartValidatesEnv(t *testing.T) {
	s, err := NewSetFrom(nil, profiles.Measurements{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background(), &Env{}); err == nil {
		t.Error("Start accepted an Env without client and clock")
	}
}

// stormName is the name SelfCost and Simulator share.
const stormName = "storm"

// stormOnly is a measurement of the storm only, as SelfCost and Simulator.
type stormOnly struct {
	name, value string
	start, end  time.Time
}

func (s *stormOnly) Name() string                                { return s.name }
func (s *stormOnly) Start(context.Context, *Env) error           { return nil }
func (s *stormOnly) MarkStormStart(t time.Time)                  { s.start = t }
func (s *stormOnly) MarkStormEnd(_ context.Context, t time.Time) { s.end = t }
func (s *stormOnly) Dispose()                                    {}
func (s *stormOnly) Gather(context.Context) (result.Measurement, error) {
	if s.start.IsZero() {
		return result.Measurement{}, ErrNoStorm
	}
	return result.Measurement{
		Windows: []result.Window{{Name: result.WindowStorm, Start: s.start, End: s.end}},
		Values:  []result.Value{{Name: s.value, Window: result.WindowStorm, Unit: result.UnitCount, Value: 1}},
	}, nil
}

func TestSetAddedMeasurementsShareAName(t *testing.T) {
	for _, stormStarted := range []bool{false, true} {
		a := &fakeMeasurement{name: "a"}
		s, err := NewSetFrom(map[string]Constructor{"a": func(profiles.Measurements) (Measurement, error) { return a, nil }}, profiles.Measurements{})
		if err != nil {
			t.Fatal(err)
		}
		sim, self := &stormOnly{name: stormName, value: "z"}, &stormOnly{name: stormName, value: "y"}
		s.Add(sim, self)
		if err := s.Start(context.Background(), &Env{Client: fake.NewClientset(), Clock: testingclock.NewFakeClock(measuretest.T0)}); err != nil {
			t.Fatal(err)
		}
		if stormStarted {
			s.MarkStormStart(measuretest.At(time.Second))
			s.MarkStormEnd(context.Background(), measuretest.At(time.Minute))
			if !self.end.Equal(measuretest.At(time.Minute)) || !sim.end.Equal(measuretest.At(time.Minute)) {
				t.Error("MarkStormEnd was not forwarded")
			}
		}
		out := s.Gather(context.Background())
		if !stormStarted {
			// Stopped during the baseline: no storm measurement.
			if len(out) != 1 || out[0].Name != "a" {
				t.Errorf("gathered %+v, want only a", out)
			}
			continue
		}
		if len(out) != 2 || out[0].Name != "a" || out[1].Name != stormName {
			t.Fatalf("gathered %+v, want a, then one %s", out, stormName)
		}
		st := out[1]
		if len(st.Windows) != 1 || len(st.Values) != 2 || st.Values[0].Name != "y" || st.Values[1].Name != "z" {
			t.Errorf("%s = %+v, want one storm window and both figures, sorted", stormName, st)
		}
	}
}
