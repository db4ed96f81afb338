package self

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/stormbench/stormbench/bench/measure"
	"github.com/stormbench/stormbench/bench/measure/internal/measuretest"
	"github.com/stormbench/stormbench/bench/result"
	"github.com/stormbench/stormbench/bench/storm"
	"github.com/stormbench/stormbench/profiles"
)

// fakeProcess is a Process whose readings the test sets.
type fakeProcess struct {
	mu             sync.Mutex
	rss, peak      int64
	cpu            time.Duration
	freeCPU        time.Duration // the CPU FreeOSMemory's collection costs
	freed, rssRead int
	log            []string // "free", "rss": the order of calls
}

// addCPU adds d to the CPU used so far.
func (p *fakeProcess) addCPU(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cpu += d
}

func (p *fakeProcess) set(rss int64, cpu time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rss, p.cpu = rss, cpu
}

func (p *fakeProcess) RSS() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rssRead++
	p.log = append(p.log, "rss")
	return p.rss
}

func (p *fakeProcess) PeakRSS() int64 { p.mu.Lock(); defer p.mu.Unlock(); return p.peak }

func (p *fakeProcess) CPU() time.Duration { p.mu.Lock(); defer p.mu.Unlock(); return p.cpu }

func (p *fakeProcess) FreeOSMemory() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.freed++
	p.cpu += p.freeCPU
	p.log = append(p.log, "free")
}

// waitForWaiter waits until a goroutine waits on the fake clock.
func waitForWaiter(t *testing.T, clk *testingclock.FakeClock) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !clk.HasWaiters() {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting for the RSS sampler to wait on the clock")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestSelfCost(t *testing.T) {
	clk := testingclock.NewFakeClock(measuretest.T0)
	proc := &fakeProcess{peak: 900 << 20}
	heap := &PeakHeapProfile{Path: filepath.Join(t.TempDir(), "heap.pprof")}
	m := NewSelfCost(SelfCostOptions{Process: proc, HeapProfile: heap})
	events := &storm.Outcomes{}
	env := &measure.Env{Client: fake.NewClientset(), Clock: clk, Outcomes: events}
	if err := m.Start(context.Background(), env); err != nil {
		t.Fatal(err)
	}

	proc.set(100<<20, 2*time.Second)
	m.MarkStormStart(clk.Now())
	if proc.freed != 1 || len(proc.log) < 2 || proc.log[0] != "free" || proc.log[1] != "rss" {
		t.Fatalf("calls at storm start %v, want freed memory returned to the OS before the start RSS is read", proc.log)
	}
	// Samples every 500 ms on the injected clock: 150 MiB is the peak, and
	// the only sample above the start by a tenth (a heap profile).
	for i, rss := range []int64{120 << 20, 150 << 20, 130 << 20} {
		waitForWaiter(t, clk)
		proc.set(rss, 2*time.Second)
		read := proc.rssRead
		clk.Step(500 * time.Millisecond)
		waitForWaiter(t, clk)
		if proc.rssRead != read+1 {
			t.Fatalf("sample %d: RSS read %d times after one interval, want once", i, proc.rssRead-read)
		}
		if i == 0 {
			if _, err := os.Stat(heap.Path); err != nil {
				t.Fatalf("no heap profile at the first peak: %v", err)
			}
		}
	}
	events.Add(storm.Outcome{Restart: storm.Restart{Node: "n1"}, Down: clk.Now()})
	events.Add(storm.Outcome{Restart: storm.Restart{Node: "n2"}, Down: clk.Now()})
	proc.set(200<<20, 5*time.Second)
	end := clk.Now()
	m.MarkStormEnd(context.Background(), end)
	// After the storm's end: neither CPU nor RSS counts.
	proc.set(999<<20, time.Hour)
	clk.Step(time.Minute)
	got, err := m.Gather(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != Name {
		t.Errorf("Name = %q, want %q", got.Name, Name)
	}
	if w, ok := got.Window(result.WindowStorm); !ok || !w.Start.Equal(measuretest.T0) || !w.End.Equal(end) {
		t.Errorf("storm window = %+v, want %s–%s", w, measuretest.T0, end)
	}
	for _, tc := range []struct {
		name string
		want float64
	}{
		{CPUSeconds, 3},
		{PeakRSS, 900 << 20},
		{RSSStart, 100 << 20},
		{RSSPeak, 150 << 20},
		{RSSGrowthPerRestart, 25 << 20}, // 50 MiB over 2 restarts
	} {
		if v := measuretest.Value(t, &got, tc.name, result.WindowStorm); v != tc.want {
			t.Errorf("%s = %v, want %v", tc.name, v, tc.want)
		}
	}
	if err := heap.Finish(); err != nil {
		t.Error(err)
	}
	m.Dispose()
	m.Dispose()
}

// TestSelfCostSplit feeds a SelfCost, started by a Set as the run starts
// it, the CPU of a baseline and of a storm window, and checks stormbench's
// standing cost (CPU per second of the baseline per 1,000 nodes) and its
// marginal cost (the storm's CPU less the standing rate over the storm's
// length), in total and per restart.
func TestSelfCostSplit(t *testing.T) {
	type figure struct{ name, window string }
	var (
		baselineCPU = figure{CPUSeconds, result.WindowBaseline}
		standing    = figure{StandingCPU, result.WindowBaseline}
		marginal    = figure{MarginalCPU, result.WindowStorm}
		perRestart  = figure{MarginalCPUPerRestart, result.WindowStorm}
		split       = []figure{baselineCPU, standing, marginal, perRestart}
	)
	for _, tc := range []struct {
		name                  string
		baseline, stormLength time.Duration
		baselineCPU, stormCPU time.Duration
		gcCPU                 time.Duration // FreeOSMemory's collection at the storm's start
		nodes, restarts       int
		want                  map[figure]float64 // and no other split figure
		warning               string             // a warning holding it; "" none
	}{{
		// 10 ms/s at rest over 300 nodes: 33.3 ms/s per 1,000 nodes; the
		// storm's 1.4 s less 40 s × 10 ms/s is 1 s over 10 restarts.
		name: "60 s baseline", baseline: 60 * time.Second, stormLength: 40 * time.Second,
		baselineCPU: 600 * time.Millisecond, stormCPU: 1400 * time.Millisecond, nodes: 300, restarts: 10,
		want: map[figure]float64{baselineCPU: 0.6, standing: 0.01 / 0.3, marginal: 1, perRestart: 0.1},
	}, {
		name: "the collection at the storm's start is in neither window", baseline: 60 * time.Second, stormLength: 40 * time.Second,
		baselineCPU: 600 * time.Millisecond, stormCPU: 1400 * time.Millisecond, gcCPU: 5 * time.Second, nodes: 300, restarts: 10,
		want: map[figure]float64{baselineCPU: 0.6, standing: 0.01 / 0.3, marginal: 1, perRestart: 0.1},
	}, {
		// The standing cost grows with the fleet: the same rate over 3,000
		// nodes is a tenth per 1,000.
		name: "ten times the fleet", baseline: 60 * time.Second, stormLength: 40 * time.Second,
		baselineCPU: 600 * time.Millisecond, stormCPU: 1400 * time.Millisecond, nodes: 3000, restarts: 10,
		want: map[figure]float64{baselineCPU: 0.6, standing: 0.01 / 3, marginal: 1, perRestart: 0.1},
	}, {
		name: "a storm that cost less than the rest", baseline: 60 * time.Second, stormLength: 40 * time.Second,
		baselineCPU: 600 * time.Millisecond, stormCPU: 300 * time.Millisecond, nodes: 300, restarts: 10,
		want: map[figure]float64{baselineCPU: 0.6, standing: 0.01 / 0.3, marginal: -0.1, perRestart: -0.01},
	}, {
		name: "10 s baseline: coarse", baseline: 10 * time.Second, stormLength: 40 * time.Second,
		baselineCPU: 200 * time.Millisecond, stormCPU: 1800 * time.Millisecond, nodes: 1000, restarts: 50,
		want:    map[figure]float64{baselineCPU: 0.2, standing: 0.02, marginal: 1, perRestart: 0.02},
		warning: "standing cost is taken over a 10s baseline window, under 30s: a coarse figure",
	}, {
		name: "no restart", baseline: 60 * time.Second, stormLength: 40 * time.Second,
		baselineCPU: 600 * time.Millisecond, stormCPU: 1400 * time.Millisecond, nodes: 300,
		want: map[figure]float64{baselineCPU: 0.6, standing: 0.01 / 0.3, marginal: 1},
	}, {
		name: "fleet size unknown", baseline: 60 * time.Second, stormLength: 40 * time.Second,
		baselineCPU: 600 * time.Millisecond, stormCPU: 1400 * time.Millisecond, restarts: 10,
		want: map[figure]float64{baselineCPU: 0.6, marginal: 1, perRestart: 0.1},
	}, {
		// A profile without an apiserver baseline starts the storm as
		// soon as the measurements have.
		name: "no baseline", stormLength: 40 * time.Second,
		stormCPU: 1400 * time.Millisecond, nodes: 300, restarts: 10,
		warning: "not split into its standing and marginal costs: its baseline window was 0s, under 1s",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			clk := testingclock.NewFakeClock(measuretest.T0)
			proc := &fakeProcess{cpu: 7 * time.Second, freeCPU: tc.gcCPU} // the run's CPU before the measurements
			events := &storm.Outcomes{}
			env := &measure.Env{Client: fake.NewClientset(), Clock: clk, Outcomes: events, Nodes: tc.nodes}
			set, err := measure.NewSetFrom(nil, profiles.Measurements{})
			if err != nil {
				t.Fatal(err)
			}
			set.Add(NewSelfCost(SelfCostOptions{Process: proc}))
			if err := set.Start(context.Background(), env); err != nil {
				t.Fatal(err)
			}
			clk.Step(tc.baseline)
			proc.addCPU(tc.baselineCPU)
			stormStart := clk.Now()
			set.MarkStormStart(stormStart)
			for i := range tc.restarts {
				events.Add(storm.Outcome{Restart: storm.Restart{Node: fmt.Sprintf("n%d", i)}, Down: clk.Now()})
			}
			clk.Step(tc.stormLength)
			proc.addCPU(tc.stormCPU)
			set.MarkStormEnd(context.Background(), clk.Now())
			out := set.Gather(context.Background())
			set.Dispose()
			if len(out) != 1 {
				t.Fatalf("gathered %d measurements, want 1", len(out))
			}
			got := &out[0]
			for _, f := range split {
				x, ok := got.Value(f.name, f.window)
				want, wanted := tc.want[f]
				switch {
				case ok != wanted:
					t.Errorf("%s (%s): present %t, want %t", f.name, f.window, ok, wanted)
				case ok && !measuretest.Approx(x, want):
					t.Errorf("%s (%s) = %v, want %v", f.name, f.window, x, want)
				}
			}
			if x := measuretest.Value(t, got, CPUSeconds, result.WindowStorm); !measuretest.Approx(x, tc.stormCPU.Seconds()) {
				t.Errorf("storm CPU = %v, want %v", x, tc.stormCPU.Seconds())
			}
			if w, ok := got.Window(result.WindowBaseline); !ok || !w.Start.Equal(measuretest.T0) || !w.End.Equal(stormStart) {
				t.Errorf("baseline window = %+v, %t; want %s–%s", w, ok, measuretest.T0, stormStart)
			}
			warnings := strings.Join(got.Warnings, "\n")
			if tc.warning == "" && warnings != "" || !strings.Contains(warnings, tc.warning) {
				t.Errorf("warnings %q, want %q", warnings, tc.warning)
			}
		})
	}
}

func TestSelfCostWithoutStorm(t *testing.T) {
	clk := testingclock.NewFakeClock(measuretest.T0)
	m := NewSelfCost(SelfCostOptions{Process: &fakeProcess{}})
	if err := m.Start(context.Background(), &measure.Env{Client: fake.NewClientset(), Clock: clk}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Gather(context.Background()); !errors.Is(err, measure.ErrNoStorm) {
		t.Errorf("Gather before the storm: %v, want ErrNoStorm", err)
	}
	m.Dispose()
}

// A storm interrupted before its end is measured up to Gather, and no
// growth per restart is given without a restart.
func TestSelfCostUnfinishedStorm(t *testing.T) {
	clk := testingclock.NewFakeClock(measuretest.T0)
	proc := &fakeProcess{}
	m := NewSelfCost(SelfCostOptions{Process: proc})
	if err := m.Start(context.Background(), &measure.Env{Client: fake.NewClientset(), Clock: clk, Outcomes: &storm.Outcomes{}}); err != nil {
		t.Fatal(err)
	}
	proc.set(10, time.Second)
	m.MarkStormStart(clk.Now())
	proc.set(10, 4*time.Second)
	clk.Step(time.Second) // the sampler may or may not sample: RSS stays 10
	got, err := m.Gather(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if v := measuretest.Value(t, &got, CPUSeconds, result.WindowStorm); v != 3 {
		t.Errorf("%s = %v, want 3", CPUSeconds, v)
	}
	if w, _ := got.Window(result.WindowStorm); !w.End.Equal(measuretest.At(time.Second)) {
		t.Errorf("window ends %s, want at Gather (%s)", w.End, measuretest.At(time.Second))
	}
	if _, ok := got.Value(RSSGrowthPerRestart, result.WindowStorm); ok {
		t.Errorf("%s given without a restart", RSSGrowthPerRestart)
	}
	m.Dispose()
}

// TestProcSelf reads this test process: a resident set, a peak at least as
// large, and some CPU time.
func TestProcSelf(t *testing.T) {
	var p ProcSelf
	rss, peak := p.RSS(), p.PeakRSS()
	if rss <= 0 || peak < rss {
		t.Errorf("RSS %d, peak %d: want 0 < RSS ≤ peak", rss, peak)
	}
	if p.CPU() <= 0 {
		t.Errorf("CPU %s, want above 0", p.CPU())
	}
}
