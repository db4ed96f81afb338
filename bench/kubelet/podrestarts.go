package kubelet

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stormbench/stormbench/bench/kubelet/plan"
)

// Pods whose containers a restart ended, played: each status update applied to the status read, and the events it brings.

// applyUpdate applies u to its pod's status st at now (statusManager.batch)
// and counts the flips and restarts it makes; node is the kubelet's node,
// whose CIDR a rebooted pod's new IP comes from.
func (n *nodeRun) applyUpdate(node *corev1.Node, u plan.StatusUpdate, st *corev1.PodStatus, now metav1.Time) bool {
	s, sess := n.s, n.sess
	wasReady := podReady(st)
	probed := func(c string) bool { _, ok := u.Probed[c]; return ok }
	changed := false
	switch u.Kind {
	case plan.UpdateRebootExited:
		// A memory-backed emptyDir does not survive the reboot.
		for _, v := range u.Pod.Spec.Volumes {
			if v.EmptyDir != nil && v.EmptyDir.Medium == corev1.StorageMediumMemory {
				s.Counters.MemoryEmptyDirsLost.Add(1)
			}
		}
		changed = terminateContainers(st, nil, 255, "Unknown", now)
		changed = setReadiness(st, func(string) bool { return false }, now) || changed
		changed = setCondition(st, corev1.PodReadyToStartContainers, corev1.ConditionFalse, "", now) || changed
		if st.PodIP != "" {
			st.PodIP, st.PodIPs = "", nil
			changed = true
		}
	case plan.UpdateSandboxReady:
		changed = setCondition(st, corev1.PodReadyToStartContainers, corev1.ConditionTrue, "", now)
	case plan.UpdateReplaceExited:
		changed = terminateContainers(st, u.Exited, 137, "Error", now)
		keep := map[string]bool{}
		for _, cs := range st.ContainerStatuses {
			keep[cs.Name] = cs.Ready && !slices.Contains(u.Reset, cs.Name)
		}
		changed = setReadiness(st, func(c string) bool { return keep[c] }, now) || changed
	case plan.UpdateRebootRunning:
		changed = setCondition(st, corev1.PodReadyToStartContainers, corev1.ConditionTrue, "", now)
		changed = restartContainers(st, nil, 255, "Unknown", now) || changed
		s.Counters.ContainerRestarts.Add(int64(len(st.ContainerStatuses)))
		markStarted(st)
		changed = setReadiness(st, func(c string) bool { return !probed(c) }, now) || changed
		if ip := sess.newPodIP(node); ip != "" {
			st.PodIP, st.PodIPs = ip, []corev1.PodIP{{IP: ip}}
			changed = true
		}
	case plan.UpdateReplaceRunning:
		changed = restartContainers(st, u.Exited, 137, "Error", now)
		s.Counters.ContainerRestarts.Add(int64(len(u.Gone)))
		// Running without a startup probe: started; without a readiness
		// probe: ready at once (prober_manager.go UpdatePodStatus). The
		// others keep what they had.
		t := true
		readyNow := map[string]bool{}
		for i := range st.ContainerStatuses {
			cs := &st.ContainerStatuses[i]
			if u.Exited(cs.Name) {
				cs.Started = &t
				readyNow[cs.Name] = !probed(cs.Name)
				continue
			}
			readyNow[cs.Name] = cs.Ready
		}
		changed = setReadiness(st, func(c string) bool { return readyNow[c] }, now) || changed
	case plan.UpdateReadyAtProbe:
		// Every container ready, if the pod still runs.
		changed = st.Phase == corev1.PodRunning && setReadiness(st, func(string) bool { return true }, now)
	}
	s.Counters.countFlip(wasReady, podReady(st))
	return changed
}

// updateEvents records what a pod's worker records as it hands u over:
// SandboxChanged after a reboot, and the containers' Pulled, Created and
// Started as they run again.
func (n *nodeRun) updateEvents(u plan.StatusUpdate) {
	switch u.Kind {
	case plan.UpdateRebootExited:
		n.sess.podEvent(u.Pod, "", "", 1, corev1.EventTypeNormal, "SandboxChanged", "Pod sandbox changed, it will be killed and re-created.")
	case plan.UpdateRebootRunning:
		containerEvents(n.sess, u.Pod, nil)
	case plan.UpdateReplaceRunning:
		containerEvents(n.sess, u.Pod, u.Exited)
	}
}
