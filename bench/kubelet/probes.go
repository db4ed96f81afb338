package kubelet

import (
	"context"
	"errors"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stormbench/stormbench/bench/kubelet/plan"
)

// The probes' writes of a starting kubelet: a first success, a legacy flip, a startup probe's step.

// probeSuccess is a pod's first successful probe: every container ready
// and started, if the pod still runs.
func probeSuccess(ps *corev1.PodStatus, now metav1.Time) bool {
	if ps.Phase != corev1.PodRunning {
		return false
	}
	changed := setReadiness(ps, func(string) bool { return true }, now)
	markStarted(ps)
	return changed
}

// probeFailure is the probe worker's seeded Failure of a legacy flip: the
// probed containers not ready (prober/worker.go doProbe).
func probeFailure(probed map[string]time.Duration) func(ps *corev1.PodStatus, now metav1.Time) bool {
	return func(ps *corev1.PodStatus, now metav1.Time) bool {
		return setReadiness(ps, func(c string) bool { _, ok := probed[c]; return !ok }, now)
	}
}

// flip plays a legacy flip (ActionPodProbe) due at at: the
// seeded Failure and then the Success about one exec later, each written
// by an idle status manager. If both came while it was busy syncing other
// statuses, its next batch writes the pod's latest cached status
// (status_manager.go syncBatch), both updates applied, so the flip never
// reaches the API server, only Ready and ContainersReady with a new
// lastTransitionTime (updateLastTransitionTime against the cached False).
func (n *nodeRun) flip(ctx context.Context, at time.Time, st plan.Step) error {
	failure := probeFailure(st.Probed)
	m := n.status
	if m.busyAt(at) {
		n.s.Counters.ReadyFlipsCoalesced.Add(1)
		return m.write(ctx, st.Namespace, st.Name, func(ps *corev1.PodStatus, now metav1.Time) bool {
			f := failure(ps, now)
			return probeSuccess(ps, now) || f
		})
	}
	return errors.Join(m.write(ctx, st.Namespace, st.Name, failure), m.write(ctx, st.Namespace, st.Name, probeSuccess))
}

// applyStatusStep sets one container's started and ready state and the
// pod's conditions from every container's readiness.
func applyStatusStep(st *corev1.PodStatus, step plan.StatusStep, now metav1.Time) bool {
	changed := false
	ready := map[string]bool{}
	for i := range st.ContainerStatuses {
		cs := &st.ContainerStatuses[i]
		ready[cs.Name] = cs.Ready
		if cs.Name != step.Container {
			continue
		}
		ready[cs.Name] = step.Ready
		if step.SetStarted && (cs.Started == nil || *cs.Started != step.Started) {
			v := step.Started
			cs.Started = &v
			changed = true
		}
	}
	return setReadiness(st, func(c string) bool { return ready[c] }, now) || changed
}
