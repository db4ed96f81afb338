package bench

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"

	"github.com/stormbench/stormbench/bench/storm"
	"github.com/stormbench/stormbench/profiles"
)

// TestVariantRunWaveStarts: a variant records its own schedule's wave
// starts. A sweep's storm is one wave at each size, although the profile it
// was derived from (quick: waves of 50% every 5 s) keeps its waves.
func TestVariantRunWaveStarts(t *testing.T) {
	p, err := profiles.Load("quick")
	if err != nil {
		t.Fatal(err)
	}
	var nodes []storm.NodeInfo
	for i := range p.Fleet.Nodes {
		nodes = append(nodes, storm.NodeInfo{Name: fmt.Sprintf("node-%03d", i)})
	}
	for _, tc := range []struct {
		name   string
		sweep  []int
		want   []string // variant names
		starts []float64
	}{
		{"run", nil, []string{"legacy", "preserve"}, []float64{0, 5}},
		{"sweep", []int{5, 10}, []string{"legacy/wave=5", "legacy/wave=10", "preserve/wave=5", "preserve/wave=10"}, []float64{0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := Options{Profile: p, SweepWaveSizes: tc.sweep, Clock: testingclock.NewFakeClock(time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)), Logf: t.Logf}
			var names []string
			for i, s := range stormSteps(o) {
				names = append(names, s.variant.Name)
				if s.sched, err = storm.NewSchedule(s.storm, p.Seed, nodes); err != nil {
					t.Fatal(err)
				}
				s.restarts = s.sched.Restarts
				vr := newVariantRun(o, s, 0)
				if !slices.Equal(vr.WaveStarts, tc.starts) {
					t.Errorf("%s: WaveStarts = %v, want %v", s.variant.Name, vr.WaveStarts, tc.starts)
				}
				if tc.sweep != nil && len(s.restarts) != tc.sweep[i%len(tc.sweep)] {
					t.Errorf("%s: %d restarts, want all %d at once", s.variant.Name, len(s.restarts), tc.sweep[i%len(tc.sweep)])
				}
			}
			if !slices.Equal(names, tc.want) {
				t.Errorf("steps %v, want %v", names, tc.want)
			}
			if len(p.Storm.Waves.Size) == 0 {
				t.Error("the sweep cleared the profile's own waves")
			}
		})
	}
}

// TestBlockOrder: every block is a permutation of a run's variants, the
// order is shuffled per block, the same seed gives the same order, and a
// sweep keeps its order (each step its own stage).
func TestBlockOrder(t *testing.T) {
	steps := make([]stormStep, 4)
	for i := range steps {
		steps[i].variant.Name = fmt.Sprintf("v%d", i)
	}
	const reps = 12
	got := blockOrder(steps, reps, 42)
	if len(got) != reps {
		t.Fatalf("%d blocks, want %d", len(got), reps)
	}
	distinct := map[string]bool{}
	for b, order := range got {
		sorted := slices.Sorted(slices.Values(order))
		if !slices.Equal(sorted, []int{0, 1, 2, 3}) {
			t.Errorf("block %d = %v, not a permutation of the 4 steps", b, order)
		}
		distinct[fmt.Sprint(order)] = true
	}
	// 12 blocks drawn from 24 orders: all alike would mean no shuffle.
	if len(distinct) < 2 {
		t.Errorf("every block in the same order %v", got[0])
	}
	if again := blockOrder(steps, reps, 42); fmt.Sprint(again) != fmt.Sprint(got) {
		t.Errorf("seed 42 twice: %v, then %v", got, again)
	}
	if other := blockOrder(steps, reps, 43); fmt.Sprint(other) == fmt.Sprint(got) {
		t.Errorf("seeds 42 and 43 gave the same order %v", got)
	}
	// One block keeps the profile's order, whatever the seed: tests and
	// single runs read the variants where the profile put them.
	for seed := range int64(8) {
		if one := blockOrder(steps, 1, seed); !slices.Equal(one[0], []int{0, 1, 2, 3}) {
			t.Errorf("one block, seed %d: %v, want the profile's order", seed, one[0])
		}
	}
	for i := range steps {
		steps[i].stage = i
	}
	for b, order := range blockOrder(steps, 3, 42) {
		if !slices.Equal(order, []int{0, 1, 2, 3}) {
			t.Errorf("sweep block %d = %v, want the steps in order", b, order)
		}
	}
}

// TestBlockOrderTwoVariants pins the order of quick's two variants for
// seed 42, as recorded in a result's run.order: a change here changes
// every committed interleaved run's order.
func TestBlockOrderTwoVariants(t *testing.T) {
	steps := []stormStep{{variant: profiles.Variant{Name: "legacy"}}, {variant: profiles.Variant{Name: "preserve"}}}
	var got []string
	for _, order := range blockOrder(steps, 5, 42) {
		var names []string
		for _, i := range order {
			names = append(names, steps[i].variant.Name)
		}
		got = append(got, fmt.Sprint(names))
	}
	want := []string{"[legacy preserve]", "[preserve legacy]", "[legacy preserve]", "[preserve legacy]", "[legacy preserve]"}
	if !slices.Equal(got, want) {
		t.Errorf("seed 42: %v, want %v", got, want)
	}
}

// TestBlockSeedsVary: with repetitions.seeds: vary each block draws its
// own schedule (other nodes restart, with other downtimes), the first the
// profile's; with fixed every block replays the profile's. The simulated
// kubelets draw from the same seed as the schedule.
func TestBlockSeedsVary(t *testing.T) {
	p, err := profiles.Load("aa")
	if err != nil {
		t.Fatal(err)
	}
	if !p.Repetitions.Vary() || p.Repetitions.Count != 6 {
		t.Fatalf("aa repetitions %+v, want 6, vary", p.Repetitions)
	}
	var nodes []storm.NodeInfo
	for i := range p.Fleet.Nodes {
		nodes = append(nodes, storm.NodeInfo{Name: fmt.Sprintf("node-%03d", i)})
	}
	o := Options{Profile: p, Clock: testingclock.NewFakeClock(time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)), Logf: t.Logf}
	plan := func(seed int64) string {
		steps := stormSteps(o)
		if err := scheduleSteps(o, steps, seed, nodes); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, s := range steps {
			if s.seed != seed {
				t.Errorf("%s: step seed %d, want %d", s.variant.Name, s.seed, seed)
			}
			for _, r := range s.restarts {
				out = append(out, fmt.Sprintf("%s@%s+%s", r.Node, r.Offset, r.Downtime))
			}
		}
		// Both variants of a block play the same schedule.
		if half := len(out) / 2; !slices.Equal(out[:half], out[half:]) {
			t.Errorf("seed %d: the variants of a block play different schedules", seed)
		}
		return fmt.Sprint(out)
	}
	seeds := BlockSeeds(p)
	if len(seeds) != 6 || seeds[0] != p.Seed {
		t.Fatalf("vary seeds %v, want 6 from %d", seeds, p.Seed)
	}
	seen := map[string]int{}
	for b, s := range seeds {
		sched := plan(s)
		if prev, ok := seen[sched]; ok {
			t.Errorf("blocks %d and %d play the same schedule", prev, b)
		}
		seen[sched] = b
	}
	if again := BlockSeeds(p); !slices.Equal(again, seeds) {
		t.Errorf("seeds %v then %v: not deterministic", seeds, again)
	}

	p.Repetitions.Seeds = profiles.SeedsFixed
	for b, s := range BlockSeeds(p) {
		if s != p.Seed {
			t.Errorf("fixed: block %d seed %d, want %d", b, s, p.Seed)
		}
	}
}

// countingProgress counts what Add is given.
type countingProgress struct{ n int }

func (c *countingProgress) Start(string, int) {}
func (c *countingProgress) Add(n int)         { c.n += n }
func (c *countingProgress) Set(n int)         { c.n = n }
func (c *countingProgress) Done()             {}

// TestRecoveredProgress: the storm's progress ("nodes restarted and
// recovered") counts only restarts that took their node down and ended
// without an error: after a Ctrl-C the interrupted ones are not counted
// as recovered. Every outcome still reaches the report.
func TestRecoveredProgress(t *testing.T) {
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	outcomes := &storm.Outcomes{}
	p := &countingProgress{}
	r := recoveredProgress{Outcomes: outcomes, progress: p}
	r.Add(storm.Outcome{Down: at, PodsRecovered: at.Add(time.Second)})
	r.Add(storm.Outcome{Down: at, Err: fmt.Errorf("interrupted: %w", context.Canceled)})
	r.Add(storm.Outcome{Err: fmt.Errorf("getting node: %w", context.Canceled)})
	if p.n != 1 || len(outcomes.All()) != 3 {
		t.Errorf("progress %d of 3 outcomes, report %d; want 1 recovered and all 3 reported", p.n, len(outcomes.All()))
	}
}
