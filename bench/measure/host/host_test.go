package host

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/utils/clock"

	"github.com/stormbench/stormbench/bench/measure"
	"github.com/stormbench/stormbench/bench/result"
)

// fakeHost is a two-CPU machine whose /proc/stat follows a busy profile on
// the (synctest) clock: piecewise-constant busy fractions, with iowait 5 %
// and steal 2 % throughout, at 1,000 ticks per CPU-second so that tenths
// of a second are whole ticks.
type fakeHost struct {
	t0     time.Time
	steps  []busyStep
	failAt map[int]bool

	mu    sync.Mutex
	reads int
}

type busyStep struct {
	until, busy float64
}

const fakeTicksPerSecond = 2 * 1000

// integral is ∫₀ᵗ f, f piecewise constant over steps (the last one lasting).
func integral(steps []busyStep, t float64, f func(busyStep) float64) float64 {
	var acc, from float64
	for i, s := range steps {
		to := s.until
		if i == len(steps)-1 {
			to = math.Inf(1)
		}
		if t <= from {
			break
		}
		acc += f(s) * (min(t, to) - from)
		from = to
	}
	return acc
}

func (h *fakeHost) elapsed() float64 { return time.Since(h.t0).Seconds() }

func (h *fakeHost) readCPU() (CPUTimes, error) {
	h.mu.Lock()
	h.reads++
	n := h.reads
	h.mu.Unlock()
	if h.failAt[n] {
		return CPUTimes{}, errors.New("read /proc/stat: input/output error")
	}
	t := h.elapsed()
	ticks := func(x float64) float64 { return math.Round(x*fakeTicksPerSecond) / 100 }
	busy := integral(h.steps, t, func(s busyStep) float64 { return s.busy })
	total := ticks(t)
	steal := ticks(0.02 * t)
	iowait := ticks(0.05 * t)
	user := ticks(busy) - steal
	idle := total - user - steal - iowait
	return CPUTimes{User: user, Idle: idle, IOWait: iowait, Steal: steal, CPUs: 2}, nil
}

// TestHostWindows plays a baseline of 1.5 s at 30 % busy and a storm of
// 3.2 s, 2 s of it at 95 % and 1.2 s at 50 %, sampled every second with
// the cadence restarted at the storm's start: baseline (0,1] (1,1.5], storm
// (1.5,2.5] (2.5,3.5] (3.5,4.5] (4.5,4.7].
func TestHostWindows(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fh := &fakeHost{t0: time.Now(), steps: []busyStep{{1.5, 0.3}, {3.5, 0.95}, {4.7, 0.5}}}
		h := New(Options{ReadCPU: fh.readCPU})
		env := &measure.Env{Clock: clock.RealClock{}, Embedded: true}
		if err := h.Start(context.Background(), env); err != nil {
			t.Fatal(err)
		}
		defer h.Dispose()
		time.Sleep(1500 * time.Millisecond)
		synctest.Wait()
		stormStart := time.Now()
		h.MarkStormStart(stormStart)
		time.Sleep(3200 * time.Millisecond)
		synctest.Wait()
		stormEnd := time.Now()
		h.MarkStormEnd(context.Background(), stormEnd)
		time.Sleep(5 * time.Second) // stopped: no more samples
		got, err := h.Gather(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if w, _ := got.Window(result.WindowStorm); !w.Start.Equal(stormStart) || !w.End.Equal(stormEnd) {
			t.Errorf("storm window %v – %v, want %v – %v", w.Start, w.End, stormStart, stormEnd)
		}
		for _, tc := range []struct {
			name, window string
			want         float64
		}{
			{CPUs, "", 2},
			{Samples, result.WindowBaseline, 2},
			{BusyP50, result.WindowBaseline, 0.3},
			{SaturatedSeconds, result.WindowBaseline, 0},
			{Samples, result.WindowStorm, 4},
			{BusyP50, result.WindowStorm, 0.95},
			{BusyMax, result.WindowStorm, 0.95},
			{BusyMean, result.WindowStorm, (0.95*2 + 0.5*1.2) / 3.2},
			{IOWaitMean, result.WindowStorm, 0.05},
			{StealMean, result.WindowStorm, 0.02},
			{SaturatedSeconds, result.WindowStorm, 2},
			{SaturatedFraction, result.WindowStorm, 2 / 3.2},
			{CoreSeconds, result.WindowStorm, 6.4},
			{BusyCoreSeconds, result.WindowStorm, 2 * (0.95*2 + 0.5*1.2)},
		} {
			v, ok := got.Value(tc.name, tc.window)
			if !ok || math.Abs(v-tc.want) > 1e-6 {
				t.Errorf("%s %s = %v (present %v), want %v", tc.name, tc.window, v, ok, tc.want)
			}
		}
		if s := got.Series; len(s) != 1 || len(s[0].Points) != 6 || s[0].Points[5].T != 4.7 {
			t.Errorf("busy series = %+v, want 6 points, the last at 4.7 s", s)
		}
		if len(got.Warnings) != 0 {
			t.Errorf("warnings = %q, want none on an embedded cluster", got.Warnings)
		}
		vr := &result.VariantRun{Variant: "legacy", Measurements: []result.Measurement{got}}
		if !Bound(vr) {
			t.Error("HostBound = false for 2 s saturated of a 3.2 s storm")
		}
		if r := BoundReason(vr); !strings.Contains(r, "90 % busy for 2 s of the 3 s storm window (62 %") {
			t.Errorf("reason = %q", r)
		}
	})
}

// TestHostExistingClusterAndReadErrors: on an existing cluster the figures
// say whose machine it is; a failed read joins its interval with the next.
func TestHostExistingClusterAndReadErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fh := &fakeHost{t0: time.Now(), steps: []busyStep{{10, 0.5}}, failAt: map[int]bool{3: true}}
		h := New(Options{ReadCPU: fh.readCPU})
		if err := h.Start(context.Background(), &measure.Env{Clock: clock.RealClock{}}); err != nil {
			t.Fatal(err)
		}
		defer h.Dispose()
		time.Sleep(500 * time.Millisecond)
		h.MarkStormStart(time.Now())
		time.Sleep(4200 * time.Millisecond)
		synctest.Wait()
		got, err := h.Gather(context.Background()) // ends the storm now
		if err != nil {
			t.Fatal(err)
		}
		// Reads: 1 start, 2 storm start, 3 at 1.5 s (failed), 4 at 2.5 s,
		// 5 at 3.5 s, 6 at 4.5 s, 7 at 4.7 s (gather): 4 storm samples.
		if n, _ := got.Value(Samples, result.WindowStorm); n != 4 {
			t.Errorf("storm samples = %v, want 4", n)
		}
		if sat, _ := got.Value(SaturatedSeconds, result.WindowStorm); sat != 0 {
			t.Errorf("saturated = %v, want 0", sat)
		}
		want := []string{"reading the host's CPU failed 1 times", "the control plane is not stormbench's"}
		if len(got.Warnings) != len(want) {
			t.Fatalf("warnings = %q", got.Warnings)
		}
		for i, w := range want {
			if !strings.Contains(got.Warnings[i], w) {
				t.Errorf("warning %d = %q, want %q", i, got.Warnings[i], w)
			}
		}
		if Bound(&result.VariantRun{Measurements: []result.Measurement{got}}) {
			t.Error("HostBound at 50 % busy")
		}
	})
}

// TestHostWindowMarkedLate: a storm window whose end is marked after the
// sampler went past it (the calibration gathers a case, then ends its
// window at the case's end) holds only the time up to its end: the storm
// of TestHostWindows, 2 s at 95 % from 1.5 s and then 50 %, ended at 4.2 s
// but marked at 6 s. Its samples (1.5,2.5] (2.5,3.5] (3.5,4.5] are cut at
// 4.2 s; those after are dropped.
func TestHostWindowMarkedLate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fh := &fakeHost{t0: time.Now(), steps: []busyStep{{1.5, 0.3}, {3.5, 0.95}, {10, 0.5}}}
		h := New(Options{ReadCPU: fh.readCPU})
		if err := h.Start(context.Background(), &measure.Env{Clock: clock.RealClock{}, Embedded: true}); err != nil {
			t.Fatal(err)
		}
		defer h.Dispose()
		time.Sleep(1500 * time.Millisecond)
		synctest.Wait()
		h.MarkStormStart(time.Now())
		time.Sleep(2700 * time.Millisecond)
		stormEnd := time.Now()
		time.Sleep(1800 * time.Millisecond)
		synctest.Wait()
		h.MarkStormEnd(context.Background(), stormEnd)
		got, err := h.Gather(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name string
			want float64
		}{
			{Samples, 3},
			{SaturatedSeconds, 2},
			{BusyMean, (0.95*2 + 0.5*0.7) / 2.7},
			{CoreSeconds, 5.4},
		} {
			v, ok := got.Value(tc.name, result.WindowStorm)
			if !ok || math.Abs(v-tc.want) > 1e-6 {
				t.Errorf("%s = %v (present %v), want %v", tc.name, v, ok, tc.want)
			}
		}
		if w, _ := got.Window(result.WindowStorm); !w.End.Equal(stormEnd) {
			t.Errorf("storm window ends %v, want %v", w.End, stormEnd)
		}
	})
}
