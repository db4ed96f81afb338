package bench_test

import (
	"strings"
	"testing"

	"github.com/stormbench/stormbench/bench/cluster/clustertest"
	"github.com/stormbench/stormbench/bench/measure/apiserver"
	"github.com/stormbench/stormbench/bench/measure/recovery"
	"github.com/stormbench/stormbench/bench/report"
	"github.com/stormbench/stormbench/bench/result"
)

// cascadeProfile is a storm on a deliberately small control plane: the API
// server's in-flight limits (6 seats in all) make API Priority and
// Fairness queue the restarting kubelets next to KWOK's heartbeats of the
// healthy nodes and the controllers.
const cascadeProfile = `
apiVersion: stormbench.io/v1alpha1
kind: StormProfile
metadata: {name: cascade}
seed: 11
fleet: {nodes: 30, podsPerNode: 10}
storm:
  kind: kubelet
  select: {count: 15}
  downtime: {type: fixed, value: 2s}
variants:
- {name: legacy, featureGates: {ChangeContainerStatusOnKubeletRestart: true}}
controlPlane:
  apf: realistic
  maxRequestsInflight: 4
  maxMutatingRequestsInflight: 2
measurements:
  apiserver: {interval: 1s, baseline: 3s}
  endpointSlices: {}
  recovery: {}
`

// TestAPFCascade checks that a storm on an APF-limited control plane
// reports its collateral damage: the healthy nodes' lease renewals (how
// many, how many late), the healthy nodes that went NotReady and their
// pods, and where APF queued. It asserts what the result reports, not how
// long anything took.
func TestAPFCascade(t *testing.T) {
	p := mustProfile(t, cascadeProfile)
	c := clustertest.Start(t, p)
	res := runProfile(t, c, p, "cascade")
	v := &res.Variants[0]
	if v.Restarts != 15 {
		t.Fatalf("%d restarts, want 15", v.Restarts)
	}
	if got := res.Run.Cluster.Settings.APF; got != "realistic" {
		t.Errorf("result records APF %q, want realistic", got)
	}
	rec := v.Measurement(recovery.Name)
	get := func(name string, labels ...string) float64 {
		x, ok := rec.Value(name, result.WindowStorm, labels...)
		if !ok {
			t.Errorf("recovery reports no %s %v", name, labels)
		}
		return x
	}
	// The healthy nodes are the 15 the storm did not restart.
	if n := get(recovery.HealthyLeaseNodes); n != 15 {
		t.Errorf("%v healthy nodes' leases watched, want 15", n)
	}
	// KWOK kept renewing them through the storm window.
	if n := get(recovery.HealthyLeaseRenewals); n < 15 {
		t.Errorf("%v renewals of the healthy nodes' leases in the storm window, want at least one each", n)
	}
	late, lateNodes := get(recovery.HealthyLeaseLate), get(recovery.HealthyLeaseLateNodes)
	if lateNodes > 15 || lateNodes > late || (late > 0) != (get(recovery.HealthyLeaseMaxGap) > 15) {
		t.Errorf("inconsistent lease figures: %v late renewals on %v nodes, longest gap %vs", late, lateNodes, get(recovery.HealthyLeaseMaxGap))
	}
	t.Logf("healthy nodes: %v late renewals on %v nodes, %v expired, longest gap %.1fs", late, lateNodes, get(recovery.HealthyLeaseExpired), get(recovery.HealthyLeaseMaxGap))
	// APF queued: with 6 seats the storm's requests waited somewhere.
	api := v.Measurement(apiserver.Name)
	queued := 0
	for _, h := range api.Histograms {
		if h.Name == apiserver.FlowWait && h.Window == result.WindowStorm && h.Summary.Count > 0 {
			queued++
			t.Logf("APF wait %s/%s: %d requests, p99 %.3fs", h.Labels[result.LabelPriorityLevel], h.Labels[result.LabelFlowSchema], h.Summary.Count, h.Summary.P99)
		}
	}
	if queued == 0 {
		t.Error("no flow schema reports an APF queue wait in the storm: the limits did not make APF queue")
	}
	var b strings.Builder
	if err := report.WriteSummary(&b, res); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", b.String())
}
