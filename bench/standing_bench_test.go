package bench_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stormbench/stormbench/bench/cluster"
	"github.com/stormbench/stormbench/bench/fleet"
	"github.com/stormbench/stormbench/bench/kubeversion"
	"github.com/stormbench/stormbench/bench/measure/self"
	"github.com/stormbench/stormbench/bench/result"
)

// standingProfile is a run whose storm is one restart: what is measured is
// the 60 s baseline before it, a steady fleet watched by every measurement
// a run has, as in the quick profile.
const standingProfile = `
apiVersion: stormbench.io/v1alpha1
kind: StormProfile
metadata: {name: standing}
seed: 1
fleet: {nodes: %d, podsPerNode: 10}
storm:
  kind: kubelet
  select: {count: 1}
  downtime: {type: fixed, value: 1s}
measurements:
  apiserver: {interval: 1s, baseline: 60s}
  endpointSlices: {}
  recovery: {}
`

// standingNodes are the fleet sizes of BenchmarkStandingCost:
// STORMBENCH_STANDING_NODES (comma-separated), default 100, 300 and 1,000.
func standingNodes(b *testing.B) []int {
	env := os.Getenv("STORMBENCH_STANDING_NODES")
	if env == "" {
		return []int{100, 300, 1000}
	}
	var out []int
	for _, f := range strings.Split(env, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			b.Fatalf("STORMBENCH_STANDING_NODES=%q: %q is not a number of nodes", env, f)
		}
		out = append(out, n)
	}
	return out
}

// BenchmarkStandingCost measures stormbench's standing cost, its own CPU
// per second while it watches a steady fleet with no restart, at a few
// fleet sizes, so that its growth with the fleet shows (issue 50): per
// size, standing-cpu-ms/s is the whole figure and
// standing-cpu-ms/s/1k-nodes the result's
// storm.stormbench_standing_cpu_per_1k_nodes (self.SelfCost). Each
// iteration is a run whose storm is one restart, after a 60 s baseline;
// the fleet is provisioned once per size and deleted after it, so that
// the next size runs on a cluster without it. It needs the components in
// bin/ (or STORMBENCH_KUBECONFIG) and is not in make test's smoke run
// (SMOKE_BENCH); run it alone on a quiet host:
//
//	go test -run '^$' -bench StandingCost -count 3 -timeout 120m ./bench/
func BenchmarkStandingCost(b *testing.B) {
	if os.Getenv("STORMBENCH_KUBECONFIG") == "" {
		if _, err := cluster.FindComponentsFor("", kubeversion.Version{}); err != nil {
			b.Skipf("the standing cost is measured against the embedded cluster: %v", err)
		}
	}
	for _, n := range standingNodes(b) {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) { benchStanding(b, n) })
	}
}

func benchStanding(b *testing.B, nodes int) {
	runID := fmt.Sprintf("standing-%d", nodes)
	run, target := benchRunner(b, fmt.Sprintf(standingProfile, nodes), runID)
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		if err := fleet.Delete(ctx, target.Client, runID, 10*time.Minute, nil); err != nil {
			b.Errorf("deleting fleet %s: %v", runID, err)
		}
	})
	var perK, runs float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		st := run().Measurement(self.Name)
		x, ok := st.Value(self.StandingCPU, result.WindowBaseline)
		if !ok {
			b.Fatalf("no %s in the result (warnings: %q)", self.StandingCPU, st.Warnings)
		}
		perK += x
		runs++
	}
	b.StopTimer()
	b.ReportMetric(perK/runs*1000, "standing-cpu-ms/s/1k-nodes")
	b.ReportMetric(perK/runs*1000*float64(nodes)/1000, "standing-cpu-ms/s")
}
