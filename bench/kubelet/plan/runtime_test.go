package plan

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestRefusedStatusTimes: the refused runtime's NotReady comes on the node
// status loop's grid, at its first tick at least 25 s in (30 s after a
// runtime check up to 5 s before the outage), so 25 to 40 s in; and the
// version-unknown write at the grid's first tick, before it. The hollow
// kubelet's measured NotReady times (29 s, 29.7 s, 32 s) must all be
// possible: a model starting at 30 s could not give 29 s.
func TestRefusedStatusTimes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	lo, hi := time.Hour, time.Duration(0)
	for i := 0; i < 10000; i++ {
		phase, down := refusedStatusTimes(rng)
		if phase < 0 || phase >= nodeStatusUpdateFrequency {
			t.Fatalf("phase %s outside [0, %s)", phase, nodeStatusUpdateFrequency)
		}
		if (down-phase)%nodeStatusUpdateFrequency != 0 {
			t.Fatalf("NotReady at %s is not on the grid of phase %s", down, phase)
		}
		if down < runtimeDownAfter-runtimeCheckPeriod || down-nodeStatusUpdateFrequency >= runtimeDownAfter {
			t.Fatalf("NotReady at %s: not the first tick in [25 s, 30 s] or after", down)
		}
		lo, hi = min(lo, down), max(hi, down)
	}
	if lo > 26*time.Second || hi < 39*time.Second {
		t.Errorf("NotReady spans %s to %s in 10,000 draws; want about 25 s to 40 s", lo, hi)
	}
}

// TestContainerGCFailures: the garbage collector's runs in a refused
// outage are one period apart from a phase within the first period, all
// inside the outage; a 50 s outage has one in about 5 of 6.
func TestContainerGCFailures(t *testing.T) {
	for _, downtime := range []time.Duration{0, 10 * time.Second, 50 * time.Second, 150 * time.Second} {
		hits := 0
		for seed := uint64(0); seed < 600; seed++ {
			ats := containerGCFailures(rand.New(rand.NewPCG(seed, 1)), downtime)
			if len(ats) > 0 {
				hits++
				if ats[0] >= containerGCPeriod {
					t.Fatalf("downtime %s: first run at %s, after one period", downtime, ats[0])
				}
			}
			for i, at := range ats {
				if at < 0 || at >= downtime {
					t.Fatalf("downtime %s: run at %s outside the outage", downtime, at)
				}
				if i > 0 && at-ats[i-1] != containerGCPeriod {
					t.Fatalf("downtime %s: runs %s and %s not one period apart", downtime, ats[i-1], at)
				}
			}
			if want := int(downtime / containerGCPeriod); len(ats) < want || len(ats) > want+1 {
				t.Fatalf("downtime %s: %d runs, want %d or %d", downtime, len(ats), want, want+1)
			}
		}
		// Each seed's phase is uniform: the share of outages with a run
		// is about min(1, downtime/period) (600 draws: ±0.06).
		got, want := float64(hits)/600, min(1, downtime.Seconds()/containerGCPeriod.Seconds())
		if got < want-0.06 || got > want+0.06 {
			t.Errorf("downtime %s: a run in %.2f of outages, want about %.2f", downtime, got, want)
		}
	}
}
