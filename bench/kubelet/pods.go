package kubelet

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stormbench/stormbench/bench/kubelet/plan"
)

// The pods of a starting kubelet, played: a first sync's decision applied to the status read, admission's rejection, a deleted pod's end.

// rejectPod replays admission's re-run rejecting p (kubelet.go
// HandlePodAdditions → canAdmitPod): pods that no longer fit the node are
// rejected (kubernetes#123859). kubelet.go rejectPod records a Warning
// event with the reason and sets a status of phase, reason and message and
// nothing else; status_manager.go mergePodStatus keeps the old conditions
// the kubelet does not own (kubetypes.PodConditionByKubelet) and the new
// status's, which has none: PodScheduled, Initialized, ContainersReady,
// Ready and PodReadyToStartContainers go, so the pod leaves its Services
// at once. (Read from the source; the calibration has no rejection case.)
func (n *nodeRun) rejectPod(ctx context.Context, p *corev1.Pod, reason, msg string) error {
	s, sess := n.s, n.sess
	sess.podEvent(p, "", "", 1, corev1.EventTypeWarning, reason, msg)
	if _, err := n.status.sync(ctx, p.Namespace, p.Name, func(st *corev1.PodStatus) bool {
		st.Phase, st.Reason, st.Message = corev1.PodFailed, reason, msg
		st.Conditions = slices.DeleteFunc(st.Conditions, func(c corev1.PodCondition) bool { return kubeletOwnedCondition[c.Type] })
		return true
	}); err != nil {
		return err
	}
	s.Counters.PodsRejected.Add(1)
	return nil
}

// firstSync is the status manager's first sync of a running pod after
// the kubelet started (its cache is empty), at the start of the pods'
// first syncs (now): st decides from the pod's status whether its first
// probe flips it, leaves it not ready, or hands it to the startup worker
// (st.Startup), and what changed is written now. What it left to the
// first probe is kept for ActionPodProbe (nodeRun.firstSyncs). A pod whose
// containers exited gets its first status (st.Update) instead, and the
// pod's MarkPodSynced is reached once it is written.
func (n *nodeRun) firstSync(ctx context.Context, node *corev1.Node, st plan.Step, now metav1.Time) error {
	s, sess := n.s, n.sess
	if st.Update != nil {
		at := metav1.NewTime(s.cfg.Clock.Now())
		_, err := n.status.sync(ctx, st.Namespace, st.Name, func(ps *corev1.PodStatus) bool {
			return n.applyUpdate(node, *st.Update, ps, at)
		})
		n.marks.reach(markKey{plan.MarkPodSynced, st.Namespace + "/" + st.Name}, s.cfg.Clock.Now())
		return err
	}
	probed := func(c string) bool { _, ok := st.Probed[c]; return ok }
	var out firstSyncOutcome
	_, err := n.status.sync(ctx, st.Namespace, st.Name, func(ps *corev1.PodStatus) bool {
		changed := false
		wasReady := podReady(ps)
		if st.Startup {
			// The startup worker decides; nothing changes at this sync.
			return false
		}
		if flip := plan.FlipsOnRestart(st.Pod, st.Probed, st.Legacy, sess.started); wasReady && flip {
			// ChangeContainerStatusOnKubeletRestart=true, or a probed
			// container started less than 10 s before the kubelet: the
			// worker seeds Failure at its first probe and probes at once
			// (prober/worker.go doProbe), so the flip comes at the first
			// probe (ActionPodProbe), not at this first sync, which finds
			// the status unchanged (measured on the hollow kubelet: 1 GET
			// here, then GET+PATCH False and GET+PATCH True milliseconds
			// apart, at U(0, period) after start).
			out.flip = true
		} else if !wasReady {
			// Readiness is preserved (KEP-4781); but if the node-lifecycle
			// controller marked the pod not ready while the node was away,
			// probed containers stay not ready until their probe passes
			// and the others are ready at once.
			changed = setReadiness(ps, func(c string) bool { return !probed(c) }, now)
		}
		s.Counters.countFlip(wasReady, podReady(ps))
		out.notReady = !podReady(ps)
		return changed
	})
	if n.firstSyncs == nil {
		n.firstSyncs = map[string]firstSyncOutcome{}
	}
	n.firstSyncs[st.Namespace+"/"+st.Name] = out
	return err
}

// firstSyncOutcome is what a pod's first sync left to its first
// successful probe (ActionPodProbe).
type firstSyncOutcome struct {
	// notReady: the pod was left not ready, so its first successful
	// probe writes Ready=True. A pod that stayed ready and does not flip
	// sends nothing more: the status manager syncs only when the status
	// changed (status_manager.go syncPod).
	notReady bool
	// flip is the legacy gate's reset of a ready pod: at its first probe
	// the worker seeds Failure and probes at once (prober/worker.go
	// doProbe), so the status manager writes Ready=False and then
	// Ready=True about one round trip apart.
	flip bool
}

// observedGeneration is a status change that sets the pod's observed
// generation, and every condition's.
func observedGeneration(generation int64) func(st *corev1.PodStatus) bool {
	return func(st *corev1.PodStatus) bool {
		changed := st.ObservedGeneration != generation
		st.ObservedGeneration = generation
		for i := range st.Conditions {
			if st.Conditions[i].ObservedGeneration != generation {
				st.Conditions[i].ObservedGeneration = generation
				changed = true
			}
		}
		return changed
	}
}

// endPod plays a deleted pod's end (plan.Start): its terminal status
// (ActionPodTerminal), or the sync with nothing to write and the DELETE
// (ActionPodDelete).
func (n *nodeRun) endPod(ctx context.Context, st plan.Step) error {
	pod := st.Pod
	if st.Action == plan.ActionPodTerminal {
		now := metav1.NewTime(n.s.cfg.Clock.Now())
		_, err := n.status.sync(ctx, pod.Namespace, pod.Name, func(st *corev1.PodStatus) bool {
			changed := terminateContainers(st, nil, 0, "Completed", now)
			changed = setReadiness(st, func(string) bool { return false }, now) || changed
			phase := corev1.PodSucceeded
			for _, c := range st.ContainerStatuses {
				if t := c.State.Terminated; t == nil || t.ExitCode != 0 {
					phase = corev1.PodFailed
				}
			}
			if st.Phase != phase {
				st.Phase = phase
				changed = true
			}
			return changed
		})
		return err
	}
	if _, err := n.status.sync(ctx, pod.Namespace, pod.Name, func(*corev1.PodStatus) bool { return false }); err != nil {
		return err
	}
	zero := int64(0)
	err := n.sess.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero, Preconditions: metav1.NewUIDPreconditions(string(pod.UID))})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("kubelet %s: deleting pod %s/%s: %w", n.sess.node, pod.Namespace, pod.Name, err)
	}
	n.s.Counters.PodsDeleted.Add(1)
	return nil
}

// containerEvents are the pod events of starting a pod's containers again
// (those which says, every one for nil) after a reboot, or after they
// exited: for each init and app container Pulled (the image is present:
// images/image_manager.go), Created and Started (kuberuntime_container.go
// startContainer). With SandboxChanged (kuberuntime_manager.go SyncPod)
// the measured 25 events of a 5-pod reboot, 5 of them the node's.
func containerEvents(sess *session, p *corev1.Pod, which func(string) bool) {
	for _, c := range append(append([]corev1.Container{}, p.Spec.InitContainers...), p.Spec.Containers...) {
		if which != nil && !which(c.Name) {
			continue
		}
		for _, e := range []struct{ reason, msg string }{
			{"Pulled", fmt.Sprintf("Container image %q already present on machine and can be accessed by the pod", c.Image)},
			{"Created", "Container created"},
			{"Started", "Container started"},
		} {
			sess.podEvent(p, c.Name, "", 1, corev1.EventTypeNormal, e.reason, e.msg)
		}
	}
}

// podReady says whether the status has the pod Ready.
func podReady(st *corev1.PodStatus) bool {
	i := slices.IndexFunc(st.Conditions, func(c corev1.PodCondition) bool { return c.Type == corev1.PodReady })
	return i >= 0 && st.Conditions[i].Status == corev1.ConditionTrue
}

// kubeletOwnedCondition are the pod conditions the kubelet owns
// (pkg/kubelet/types/pod_status.go PodConditionByKubelet, with the gates
// PodReadyToStartContainersCondition and RestartAllContainersOnContainerExits
// as 1.36 sets them by default). PodScheduled is among them.
var kubeletOwnedCondition = map[corev1.PodConditionType]bool{
	corev1.PodScheduled: true, corev1.PodReady: true, corev1.PodInitialized: true,
	corev1.ContainersReady: true, corev1.PodResizeInProgress: true, corev1.PodResizePending: true,
	corev1.PodReadyToStartContainers: true, corev1.AllContainersRestarting: true,
}
