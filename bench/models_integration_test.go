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
	"github.com/stormbench/stormbench/bench/measure/churn"
	"github.com/stormbench/stormbench/bench/measure/self"
	"github.com/stormbench/stormbench/bench/result"
	"github.com/stormbench/stormbench/profiles"
)

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

// TestRuntimeRestart: a 10 s runtime outage with the socket refused, as the
// real kubelet showed it in calibration: exec probes error, so no pod's
// readiness changes and no container restarts; each errored exec probe is
// a Warning "Unhealthy" event the correlator PATCHes (count > 1); the
// outage is shorter than the kubelet's 30 s runtime threshold, so no node
// reports NotReady.
func TestRuntimeRestart(t *testing.T) {
	c := sharedCluster.Get(t)
	p := mustProfile(t, fmt.Sprintf(stormProfile, "runtime", "runtime", "10s", ""))
	res, pods := runKeep(t, c, p, "runtime")
	v := &res.Variants[0]
	for _, counter := range []string{self.ReadyFlipsDown, self.ReadyFlipsUp, self.ContainerRestarts, self.PodStatusPatches} {
		if got := value(t, v, self.Name, counter, result.WindowStorm); got != 0 {
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
	if flips := value(t, v, churn.Name, churn.SliceReadyFlips, result.WindowStorm, result.LabelDirection, churn.DirectionReadyToNot); flips != 0 {
		t.Errorf("%v endpoints went not ready", flips)
	}
}
