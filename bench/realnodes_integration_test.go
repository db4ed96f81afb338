package bench_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stormbench/stormbench/bench/cluster"
	"github.com/stormbench/stormbench/bench/fleet"
	"github.com/stormbench/stormbench/bench/measure/self"
	"github.com/stormbench/stormbench/bench/result"
)

// TestRealKubeletsInFleet: two of six nodes are real (hollow) kubelets.
// Exec-probed workloads run on them, HTTP-probed ones only on KWOK nodes;
// a kubelet storm over every node restarts the real ones through their
// processes, and nothing of them survives the run.
func TestRealKubeletsInFleet(t *testing.T) {
	c := sharedCluster.Get(t)
	if err := c.Components().CheckRealNodes(); err != nil {
		t.Fatal(err)
	}
	p := mustProfile(t, `
apiVersion: stormbench.io/v1alpha1
kind: StormProfile
metadata: {name: real-kubelets}
seed: 3
fleet:
  nodes: 6
  podsPerNode: 4
  realKubelets: 2
  workloads:
  - {template: web-exec, share: 1, replicas: 4}
  - {template: web-http, share: 1, replicas: 4}
storm:
  kind: kubelet
  select: {count: 6}
  downtime: {type: fixed, value: 3s}
variants:
- {name: legacy, featureGates: {ChangeContainerStatusOnKubeletRestart: true}}
measurements:
  endpointSlices: {}
  recovery: {}
`)
	res, pods := runKeep(t, c, p, "realk")
	v := &res.Variants[0]
	if !v.Complete || v.Restarts != 6 {
		t.Fatalf("variant complete %v, %d restarts (want 6): %v", v.Complete, v.Restarts, v.Errors)
	}
	real := map[string]bool{fleet.NodeName("realk", 4): true, fleet.NodeName("realk", 5): true}
	onReal := 0
	for _, pod := range pods {
		if !real[pod.Spec.NodeName] {
			continue
		}
		onReal++
		if w := pod.Labels["stormbench.io/workload"]; w != "web-exec" {
			t.Errorf("pod %s of workload %s runs on real kubelet %s: only exec-probed workloads may", pod.Name, w, pod.Spec.NodeName)
		}
		if !fleet.PodReady(&pod) {
			t.Errorf("pod %s on real kubelet %s not Ready after recovery", pod.Name, pod.Spec.NodeName)
		}
	}
	if onReal == 0 {
		t.Error("no pod was scheduled onto the real kubelets")
	}
	if got := value(t, v, self.Name, self.Errors, result.WindowStorm); got != 0 {
		t.Errorf("%v failed restarts: %v", got, v.Errors)
	}
	// The run stopped its real kubelets (their pid files are gone).
	if pids, _ := filepath.Glob(filepath.Join(c.Dir(), cluster.RealNodesDir, "*", "*.pid")); len(pids) > 0 {
		t.Errorf("real-node processes left running: %v", pids)
	}
	fmt.Fprintf(testWriter{t}, "%d pods on the real kubelets\n", onReal)
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) { w.t.Log(string(b)); return len(b), nil }
