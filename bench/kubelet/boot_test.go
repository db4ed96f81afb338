package kubelet

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	"github.com/stormbench/stormbench/bench/storm"
	"github.com/stormbench/stormbench/profiles"
)

// TestProcessStartPlan: a kubelet's process start-up is the same for a
// node and seed every time, within its bounds,
// and spread over them across nodes with the measured median (0.32 s on
// containerd, restarts staggered).
func TestProcessStartPlan(t *testing.T) {
	s := &Simulator{cfg: Config{Seed: 7}}
	var waits []time.Duration
	for i := range 1000 {
		node := fmt.Sprintf("node-%05d", i)
		at := processStart(s.rng(node, 7))
		if again := processStart(s.rng(node, 7)); again != at {
			t.Fatalf("%s: %v, then %v: not decided by the seed", node, at, again)
		}
		if at < processStartMin || at >= processStartMin+processStartSpread {
			t.Errorf("%s: start-up %v outside [%v, %v)", node, at, processStartMin, processStartMin+processStartSpread)
		}
		waits = append(waits, at)
	}
	slices.Sort(waits)
	if med := waits[len(waits)/2]; med < 300*time.Millisecond || med > 360*time.Millisecond {
		t.Errorf("median start-up %v, want about 0.32 s", med)
	}
}

// TestProcessStartCancelled: a run interrupted during a kubelet's process
// start-up returns at once, saying so, and the kubelet has sent nothing.
func TestProcessStartCancelled(t *testing.T) {
	for _, kind := range []string{profiles.StormKubelet, profiles.StormReboot} {
		t.Run(kind, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newRestartFixture(time.Now())
				api := newFakeAPI(f.t0, f.objects()...)
				sim, err := NewSimulator(Config{
					Base: &rest.Config{Host: "https://fake.invalid"}, Harness: api.client("harness"),
					RunID: f.runID, Kind: kind, Seed: 7, Clock: clock.RealClock{},
				})
				if err != nil {
					t.Fatal(err)
				}
				sim.sessions = api.sessions(sim.cfg.Clock)
				const down = 30 * time.Second
				// Cut short within the start-up, which lasts at least
				// processStartMin.
				ctx, cancel := context.WithTimeout(context.Background(), down+processStartMin/2)
				defer cancel()
				out := sim.Restart(ctx, storm.Restart{Node: f.node, Downtime: down})
				if out.Err == nil || !strings.Contains(out.Err.Error(), "process start-up") {
					t.Fatalf("restart returned %v, want the process start-up's interruption", out.Err)
				}
				if took := out.End.Sub(f.t0); took > down+processStartMin {
					t.Errorf("the restart ended %v after it began, want at the interruption (%v)", took, down+processStartMin/2)
				}
				api.mu.Lock()
				defer api.mu.Unlock()
				for _, c := range api.calls {
					if c.client != "harness" {
						t.Errorf("the %s client sent %q during the start-up", c.client, c.text)
					}
				}
			})
		})
	}
}
