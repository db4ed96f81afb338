package bench_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stormbench/stormbench/bench/measure/churn"
	"github.com/stormbench/stormbench/bench/measure/self"
	"github.com/stormbench/stormbench/bench/result"
	"github.com/stormbench/stormbench/profiles"
)

// The tests of this file share timingCluster, whose node-lifecycle
// controller reacts within seconds. Go runs a package's tests file by file:
// this one sorts before the files of the tests on sharedCluster, so that
// each shared cluster boots once (a process keeps one up at a time).

// shortTiming makes the node-lifecycle controller react within seconds so
// that downtimes above the grace period fit in a test.
const shortTiming = `timing:
  nodeMonitorGracePeriod: 12s
  nodeMonitorPeriod: 2s
`

// TestKubeletRestartLongDowntime: the kubelet stays down past the grace
// period, so the node-lifecycle controller marks the node and its pods not
// ready, even with readiness preservation on; everything recovers.
func TestKubeletRestartLongDowntime(t *testing.T) {
	p := mustProfile(t, fmt.Sprintf(stormProfile, "long-downtime", "kubelet", "25s", shortTiming+`variants:
- {name: preserve, featureGates: {ChangeContainerStatusOnKubeletRestart: false}}`))
	c := timingCluster.Get(t)
	res := runProfile(t, c, p, "long-downtime")
	v := &res.Variants[0]
	flips := value(t, v, churn.Name, churn.SliceReadyFlips, result.WindowStorm, result.LabelDirection, churn.DirectionReadyToNot)
	if flips == 0 {
		t.Error("no endpoint went not ready although the downtime outlasted the grace period")
	}
	if got := value(t, v, self.Name, self.ReadyFlipsUp, result.WindowStorm); got == 0 {
		t.Error("the simulated prober restored no pod")
	}
	if got := value(t, v, self.Name, self.ReadyFlipsDown, result.WindowStorm); got != 0 {
		t.Errorf("the kubelet itself flipped %v pods with preservation on", got)
	}
}

// TestReboot reboots nodes twice on one cluster. Below the grace period
// every container of a rebooted node restarts, its memory-backed emptyDirs
// are lost, and nothing is evicted. Above a shortened toleration the KCM
// evicts the pods: standalone pods are lost and Deployment pods replaced.
//
// The KCM taints NotReady nodes NoExecute at --node-eviction-rate, by default
// one node every 10 s, so a 45 s downtime evicted only two or three of the
// rebooted nodes, under load sometimes one without a standalone pod. The
// cluster raises the rate so every node down past the grace period is
// tainted within a monitor period, the eviction run's mix is half standalone
// pods, and it reboots 8 of 20 nodes: from 55 % NotReady on, a cluster of at
// most 50 nodes stops evicting (node_lifecycle_controller.go,
// ComputeZoneState and ReducedQPSFunc).
func TestReboot(t *testing.T) {
	timing := shortTiming + "  nodeEvictionRate: 100\n"
	below := mustProfile(t, fmt.Sprintf(stormProfile, "reboot-below-grace", "reboot", "5s", timing))
	evicted := mustProfile(t, strings.Replace(fmt.Sprintf(stormProfile, "reboot-evicted", "reboot", "45s", timing),
		"fleet: {nodes: 20, podsPerNode: 10}", `fleet:
  nodes: 20
  podsPerNode: 10
  tolerationSeconds: 10
  workloads:
  - {template: standalone, share: 50, replicas: 1}
  - {template: web-tcp, share: 50, replicas: 10}`, 1))
	evicted.Storm.Select = profiles.Selection{Fraction: 0.4}
	c := timingCluster.Get(t)

	t.Run("below grace", func(t *testing.T) {
		v := &runProfile(t, c, below, "reboot-below").Variants[0]
		for _, tc := range []struct {
			name     string
			positive bool
		}{
			{self.ContainerRestarts, true},
			{self.MemoryEmptyDirsLost, true},
			{self.PodsDeleted, false},
			{self.PodsLost, false},
		} {
			got := value(t, v, self.Name, tc.name, result.WindowStorm)
			if (got > 0) != tc.positive {
				t.Errorf("%s = %v, want positive: %v", tc.name, got, tc.positive)
			}
		}
	})
	t.Run("evicted", func(t *testing.T) {
		res, pods := runKeep(t, c, evicted, "reboot-evicted")
		v := &res.Variants[0]
		for _, name := range []string{self.PodsLost, self.PodsDeleted} {
			if got := value(t, v, self.Name, name, result.WindowStorm); got == 0 {
				t.Errorf("%s = 0, want > 0", name)
			}
		}
		if got := res.Run.Cluster.Settings.Flags["kube-controller-manager"]["node-eviction-rate"]; got != "100" {
			t.Errorf("result records node-eviction-rate %q, want 100", got)
		}
		replaced := 0
		for i := range pods {
			if pods[i].CreationTimestamp.After(v.StormStart) {
				replaced++
			}
		}
		if replaced == 0 {
			t.Error("no pod was replaced after eviction")
		}
	})
}
