package kubelet

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
