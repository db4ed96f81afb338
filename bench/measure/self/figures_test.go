package self

import (
	"context"
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

// TestStormMergeCoversFigures gathers the two measurements that write
// Name and checks that its merge rule names every figure they
// emit besides the simulator's counters, and that those counters sum.
func TestStormMergeCoversFigures(t *testing.T) {
	clk := testingclock.NewFakeClock(measuretest.T0)
	events := &storm.Outcomes{}
	env := &measure.Env{Client: fake.NewClientset(), Clock: clk, Outcomes: events}
	// Two of the simulator's counters stand for all of them (kubelet.Counters
	// names each by one of the Storm counter constants).
	counters := func() map[string]int64 { return map[string]int64{PodStatusPatches: 2, TokenRequests: 3} }
	set, err := measure.NewSetFrom(nil, profiles.Measurements{})
	if err != nil {
		t.Fatal(err)
	}
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
	if len(out) != 1 || out[0].Name != Name {
		t.Fatalf("gathered %+v, want one %s measurement", out, Name)
	}
	rule := Merge()
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
	for _, name := range []string{CPUSeconds, PeakRSS, RSSStart, RSSPeak, RSSGrowthPerRestart, Restarts, PodsLost, StaleReadinessFixed} {
		if _, ok := out[0].Value(name, result.WindowStorm); !ok {
			t.Errorf("no %s gathered", name)
		}
	}
}
