package bench

import (
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

func TestCrashLoopBackOff(t *testing.T) {
	for n, want := range map[int]time.Duration{1: 10 * time.Second, 2: 20 * time.Second, 3: 40 * time.Second, 6: 5 * time.Minute, 7: 5 * time.Minute, 40: 5 * time.Minute} {
		if got := crashLoopBackOff(n); got != want {
			t.Errorf("exit %d: back-off %s, want %s", n, got, want)
		}
	}
}
