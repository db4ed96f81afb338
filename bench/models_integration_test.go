package bench_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stormbench/stormbench/bench"
	"github.com/stormbench/stormbench/bench/cluster/clustertest"
	"github.com/stormbench/stormbench/bench/fleet"
	"github.com/stormbench/stormbench/bench/kubelet"
	"github.com/stormbench/stormbench/bench/measure"
	"github.com/stormbench/stormbench/bench/result"
	"github.com/stormbench/stormbench/profiles"
)

// shortTiming makes the node-lifecycle controller react within seconds so
// that downtimes above the grace period fit in a test.
const shortTiming = `timing:
  nodeMonitorGracePeriod: 12s
  nodeMonitorPeriod: 2s
`

// runKeep runs a profile and keeps its fleet for inspection; the fleet is
// deleted when the test ends.
func runKeep(t *testing.T, c *clustertest.Cluster, p *profiles.Profile, runID string) (*result.Result, []corev1.Pod) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	t.Cleanup(func() {
		if err := fleet.Delete(context.Background(), c.Target.Client, runID, 5*time.Minute, nil); err != nil {
			t.Errorf("deleting fleet: %v", err)
		}
	})
	res, err := bench.Run(ctx, bench.Options{Profile: p, RunID: runID, Target: c.Target, Embedded: c.Embedded, Logf: t.Logf, KeepFleet: true})
	if err != nil {
		t.Fatalf("run %s: %v", runID, err)
	}
	pods, err := c.Target.Client.CoreV1().Pods(fleet.Namespace(runID)).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return res, pods.Items
}

func readyTransition(p *corev1.Pod) time.Time {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.LastTransitionTime.Time
		}
	}
	return time.Time{}
}

// TestKubeletRestartLongDowntime: the kubelet stays down past the grace
// period, so the node-lifecycle controller marks the node and its pods not
// ready, even with readiness preservation on; everything recovers.
func TestKubeletRestartLongDowntime(t *testing.T) {
	p := mustProfile(t, fmt.Sprintf(stormProfile, "long-downtime", "kubelet", "25s", shortTiming+`variants:
- {name: preserve, featureGates: {ChangeContainerStatusOnKubeletRestart: false}}`))
	c := clustertest.Start(t, p)
	res := runProfile(t, c, p, "long-downtime")
	v := &res.Variants[0]
	flips := value(t, v, measure.MeasurementEndpointSlices, measure.SliceReadyFlips, result.WindowStorm, result.LabelDirection, measure.DirectionReadyToNot)
	if flips == 0 {
		t.Error("no endpoint went not ready although the downtime outlasted the grace period")
	}
	if got := value(t, v, measure.MeasurementStorm, kubelet.CounterReadyFlipsUp, result.WindowStorm); got == 0 {
		t.Error("the simulated prober restored no pod")
	}
	if got := value(t, v, measure.MeasurementStorm, kubelet.CounterReadyFlipsDown, result.WindowStorm); got != 0 {
		t.Errorf("the kubelet itself flipped %v pods with preservation on", got)
	}
}

// TestRuntimeRestart: a 10 s runtime outage with the socket refused, as the
// real kubelet showed it in calibration: exec probes error, so no pod's
// readiness changes and no container restarts; each errored exec probe is
// a Warning "Unhealthy" event the correlator PATCHes (count > 1); the
// outage is shorter than the kubelet's 30 s runtime threshold, so no node
// reports NotReady.
func TestRuntimeRestart(t *testing.T) {
	c := clustertest.Start(t, nil)
	p := mustProfile(t, fmt.Sprintf(stormProfile, "runtime", "runtime", "10s", ""))
	res, pods := runKeep(t, c, p, "runtime")
	v := &res.Variants[0]
	for _, counter := range []string{kubelet.CounterReadyFlipsDown, kubelet.CounterReadyFlipsUp, kubelet.CounterContainerRestarts, kubelet.CounterPodStatusPatches} {
		if got := value(t, v, measure.MeasurementStorm, counter, result.WindowStorm); got != 0 {
			t.Errorf("%s = %v during a refused-socket outage, want 0", counter, got)
		}
	}
	for i := range pods {
		pod := &pods[i]
		if readyTransition(pod).After(v.StormStart) {
			t.Errorf("pod %s changed readiness during the outage", pod.Name)
		}
		for _, cs := range pod.Status.ContainerStatuses {
			if cs.RestartCount > 0 {
				t.Errorf("pod %s: container %s restarted", pod.Name, cs.Name)
			}
		}
	}
	evs, err := c.Target.Client.CoreV1().Events(fleet.Namespace("runtime")).List(context.Background(), metav1.ListOptions{FieldSelector: "reason=Unhealthy"})
	if err != nil {
		t.Fatal(err)
	}
	repeated := 0
	for _, e := range evs.Items {
		if !strings.Contains(e.Message, "probe errored") || e.Source.Component != "kubelet" || e.Type != corev1.EventTypeWarning {
			t.Errorf("event %s: %s %q from %s, want a kubelet Warning \"probe errored\"", e.Name, e.Type, e.Message, e.Source.Component)
		}
		if e.Count > 1 {
			repeated++
		}
	}
	if len(evs.Items) == 0 || repeated == 0 {
		t.Errorf("%d probe-errored events, %d of them repeated (count > 1): want both > 0", len(evs.Items), repeated)
	}
	if flips := value(t, v, measure.MeasurementEndpointSlices, measure.SliceReadyFlips, result.WindowStorm, result.LabelDirection, measure.DirectionReadyToNot); flips != 0 {
		t.Errorf("%v endpoints went not ready", flips)
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
	c := clustertest.Start(t, evicted)

	t.Run("below grace", func(t *testing.T) {
		v := &runProfile(t, c, below, "reboot-below").Variants[0]
		for _, tc := range []struct {
			name     string
			positive bool
		}{
			{kubelet.CounterContainerRestarts, true},
			{"memoryEmptyDirsLost", true},
			{"podsDeleted", false},
			{measure.StormPodsLost, false},
		} {
			got := value(t, v, measure.MeasurementStorm, tc.name, result.WindowStorm)
			if (got > 0) != tc.positive {
				t.Errorf("%s = %v, want positive: %v", tc.name, got, tc.positive)
			}
		}
	})
	t.Run("evicted", func(t *testing.T) {
		res, pods := runKeep(t, c, evicted, "reboot-evicted")
		v := &res.Variants[0]
		for _, name := range []string{measure.StormPodsLost, kubelet.CounterPodsDeleted} {
			if got := value(t, v, measure.MeasurementStorm, name, result.WindowStorm); got == 0 {
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
