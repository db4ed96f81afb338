package bench_test

import (
	"testing"

	"github.com/stormbench/stormbench/bench/result"
	"github.com/stormbench/stormbench/bench/watchers"
)

// TestSteadyWatches runs a reboot storm on a small fleet with
// fleet.steadyWatches on: every node holds its kubelet's and kube-proxy's
// watches (the embedded cluster's RBAC lets system:node:<name> and
// system:kube-proxy watch them), all are open when the storm starts, and
// the storm's Service and EndpointSlice writes reach them. The rebooted
// nodes' kube-proxies start over with their initial events.
func TestSteadyWatches(t *testing.T) {
	const nodes, rebooted = 6, 2
	p := mustProfile(t, `
apiVersion: stormbench.io/v1alpha1
kind: StormProfile
metadata: {name: steady-watches-test}
seed: 7
fleet:
  nodes: 6
  podsPerNode: 5
  steadyWatches: {kubelet: true, kubeProxy: true}
storm:
  kind: reboot
  select: {count: 2}
  downtime: {type: fixed, value: 5s}
measurements:
  apiserver: {baseline: 2s}
`)
	c := sharedCluster.Get(t)
	res := runProfile(t, c, p, "steady-watches-test")
	if len(res.Variants) != 1 {
		t.Fatalf("%d variant runs, want 1", len(res.Variants))
	}
	v := &res.Variants[0]
	for _, tc := range []struct {
		component string
		perNode   int
	}{
		{watchers.ComponentKubelet, 5},
		{watchers.ComponentKubeProxy, 4},
	} {
		if got := watchers.WatchesPerNode(tc.component); got != tc.perNode {
			t.Fatalf("%s: %d watches per node, want %d", tc.component, got, tc.perNode)
		}
		labels := []string{result.LabelComponent, tc.component}
		want := float64(nodes * tc.perNode)
		if got := value(t, v, watchers.Name, watchers.FigureWatchers, result.WindowStorm, labels...); got != want {
			t.Errorf("%s: %v watchers, want nodes × %d = %v", tc.component, got, tc.perNode, want)
		}
		if got := value(t, v, watchers.Name, watchers.FigureOpenAtStormStart, result.WindowStorm, labels...); got != want {
			t.Errorf("%s: %v watches open at the storm's start, want %v", tc.component, got, want)
		}
		if got := value(t, v, watchers.Name, watchers.FigureEvents, result.WindowStorm, labels...); got <= 0 {
			t.Errorf("%s: no event delivered during the storm", tc.component)
		}
		if got := value(t, v, watchers.Name, watchers.FigureBytes, result.WindowStorm, labels...); got <= 0 {
			t.Errorf("%s: no byte delivered during the storm", tc.component)
		}
	}
	// Each rebooted node's kube-proxy starts over: its four watches sync
	// their initial events once (at least; a 410 would add more).
	if got := value(t, v, watchers.Name, watchers.FigureResyncs, result.WindowStorm, result.LabelComponent, watchers.ComponentKubeProxy); got < rebooted*4 {
		t.Errorf("kube-proxy resyncs %v, want at least %d (4 per rebooted node)", got, rebooted*4)
	}
	// Pod and EndpointSlice changes of the rebooted nodes reach the
	// watches of those resources.
	if got := value(t, v, watchers.Name, watchers.FigureEvents, result.WindowStorm, result.LabelComponent, watchers.ComponentKubeProxy, result.LabelResource, "endpointslices"); got <= 0 {
		t.Error("no EndpointSlice event reached kube-proxy's watches")
	}
	if got := value(t, v, watchers.Name, watchers.FigureEvents, result.WindowStorm, result.LabelComponent, watchers.ComponentKubelet, result.LabelResource, "pods"); got <= 0 {
		t.Error("no pod event reached the kubelets' watches")
	}
	if m := v.Measurement(watchers.Name); len(m.Warnings) > 0 {
		t.Errorf("warnings: %q", m.Warnings)
	}
}
