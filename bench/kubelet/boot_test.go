package kubelet

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	"github.com/stormbench/stormbench/bench/kubelet/plan"
	"github.com/stormbench/stormbench/bench/storm"
	"github.com/stormbench/stormbench/profiles"
)

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
				// Cut short halfway through the node's start-up.
				startup := plan.ProcessStart(sim.rng(f.node, 7))
				ctx, cancel := context.WithTimeout(context.Background(), down+startup/2)
				defer cancel()
				out := sim.Restart(ctx, storm.Restart{Node: f.node, Downtime: down})
				if out.Err == nil || !strings.Contains(out.Err.Error(), "process start-up") {
					t.Fatalf("restart returned %v, want the process start-up's interruption", out.Err)
				}
				if took := out.End.Sub(f.t0); took >= down+startup {
					t.Errorf("the restart ended %v after it began, want at the interruption (%v)", took, down+startup/2)
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
