package measure

import (
	"context"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/stormbench/stormbench/bench/result"
	"github.com/stormbench/stormbench/bench/storm"
)

// TestStormMergeCoversFigures gathers the two measurements that write
// MeasurementStorm and checks that its merge rule names every figure they
// emit besides the simulator's counters, and that those counters sum.
func TestStormMergeCoversFigures(t *testing.T) {
	clk := testingclock.NewFakeClock(t0)
	events := &storm.Outcomes{}
	env := &Env{Client: fake.NewClientset(), Clock: clk, Outcomes: events}
	// Two of the simulator's counters stand for all of them (kubelet.Counters
	// names each by one of the Storm counter constants).
	counters := func() map[string]int64 { return map[string]int64{StormPodStatusPatches: 2, StormTokenRequests: 3} }
	set := &Set{startErrs: map[Measurement]error{}}
	set.Add(NewSelfCost(SelfCostOptions{Process: &fakeProcess{rss: 100 << 20, peak: 200 << 20}}),
		NewSimulator(SimulatorOptions{Counters: counters, Fleet: &fakeFleet{}}))
	if err := set.Start(context.Background(), env); err != nil {
		t.Fatal(err)
	}
	set.MarkStormStart(clk.Now())
	events.Add(storm.Outcome{Restart: storm.Restart{Node: "n1"}, Down: clk.Now()})
	clk.Step(time.Second)
	set.MarkStormEnd(context.Background(), clk.Now())
	out := set.Gather(context.Background())
	set.Dispose()
	if len(out) != 1 || out[0].Name != MeasurementStorm {
		t.Fatalf("gathered %+v, want one %s measurement", out, MeasurementStorm)
	}
	rule := MergeRules()[MeasurementStorm]
	isCounter := counters()
	for _, v := range out[0].Values {
		a, named := rule.Figures[v.Name]
		if _, ok := isCounter[v.Name]; ok {
			if named && a != result.Sum {
				t.Errorf("counter %s aggregates by %v, want Sum", v.Name, a)
			}
			continue
		}
		if !named {
			t.Errorf("figure %s has no aggregation in the storm merge rule", v.Name)
		}
	}
	for _, name := range []string{StormCPUSeconds, StormPeakRSS, StormRSSStart, StormRSSPeak, StormRSSGrowthPerRestart, StormRestarts, StormPodsLost, StormStaleReadinessFixed} {
		if _, ok := out[0].Value(name, result.WindowStorm); !ok {
			t.Errorf("no %s gathered", name)
		}
	}
}
