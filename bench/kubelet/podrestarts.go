package kubelet

import (
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Pods whose containers a restart ended: restarted in place after a reboot, or replaced after a runtime restart killed them.

// restartPod plans a pod's status after a reboot, as the kubelet on
// containerd writes it with a runtime that came back with every container
// exited and every sandbox not ready. The pod worker (kuberuntime SyncPod)
// hands the status manager four statuses, at offsets from the pods' first
// sync; the status manager writes them (statusManager.batch):
//  1. at once: the containers terminated (exit 255, Unknown), the pod not
//     ready, PodReadyToStartContainers False, no pod IP; the worker then
//     records SandboxChanged and kills the old sandbox;
//  2. the new sandbox: PodReadyToStartContainers True, nothing else yet
//     (kuberuntime_manager.go SyncPod calls kubelet.go OnPodSandboxReady
//     after RunPodSandbox, which sets the status from a goroutine while the
//     containers are still being created); a release without that
//     callback (release.sandboxReadyWrite: before v1.36) reports the
//     condition with the third;
//  3. the containers running again (restartCount+1, the old run as last
//     state; Pulled, Created and Started for each) with the new sandbox's
//     pod IP, probed ones not ready, PodReadyToStartContainers True;
//  4. Ready, at the first successful readiness probe (rebootFirstProbe).
//
// Measured on the kubelet on containerd (audit log of a reboot calibration
// with bodies, 2 nodes × 8 pods, 2026-12-02): the sandboxes were ready 1.8
// to 3.3 s after the first write, one pod after another (rebootSandbox),
// the containers running 0.5 to 1.5 s after their sandbox
// (rebootContainers), and every pod got the four writes. With 5 pods per
// node the second and third were 0.2 to 0.6 s apart. When the status
// manager is behind, it writes what came meanwhile as one (statusManager.batch):
// the hollow kubelet did so for most pods (2.7 to 3.4 writes per pod), and
// the kubelet on containerd in a CI run with other clusters on the same
// cores (3.1). jitters holds each readiness-probed container's worker
// sleep; index is the pod's place among the node's sandboxes; rel is the
// kubelet's release.
func restartPod(p *corev1.Pod, jitters map[string]time.Duration, index int, seed seed, rel release) []statusUpdate {
	rng := seed.rng(p.Namespace+"/"+p.Name, 5)
	sandbox := rebootSandboxBase + time.Duration((float64(index)+rng.Float64())*float64(rebootSandboxPerPod))
	running := sandbox + rebootContainersMin + time.Duration(rng.Float64()*float64(rebootContainersSpread))
	ready := time.Duration(-1)
	for _, c := range p.Spec.Containers {
		if jitter, ok := jitters[c.Name]; ok {
			ready = max(ready, rebootFirstProbe(jitter, running, time.Duration(c.ReadinessProbe.InitialDelaySeconds)*time.Second, probePeriod(c.ReadinessProbe)))
		}
	}
	updates := []statusUpdate{{at: 0, kind: updateRebootExited, pod: p}}
	if rel.sandboxReadyWrite {
		updates = append(updates, statusUpdate{at: sandbox, kind: updateSandboxReady, pod: p})
	}
	updates = append(updates, statusUpdate{at: running, kind: updateRebootRunning, pod: p, probed: jitters})
	if ready >= 0 {
		updates = append(updates, statusUpdate{at: ready, kind: updateReadyAtProbe, pod: p})
	}
	return updates
}

// replacePod plans the statuses of a pod some of whose containers (gone)
// exited while the kubelet was down, its sandbox still running, in
// v1.36.3:
//  1. the first sync after the start (kubelet.go SyncPod: the status
//     first, then the probe workers and the runtime's SyncPod): the exited
//     containers terminated as the runtime reports them (exit 137, reason
//     Error, for a SIGKILL), not ready and not started (kubelet_pods.go
//     convertToAPIContainerStatuses), so the pod is not ready
//     (updateReplaceExited). It is the first update, for the caller to
//     write in the pod's turn among the first syncs; the others' offsets
//     count from that write;
//  2. the runtime's SyncPod restarts them at once (computePodActions,
//     ShouldContainerBeRestarted for restartPolicy Always; the crash-loop
//     back-off lives in memory, kubelet.go crashLoopBackOff, so a fresh
//     kubelet has none), recording Pulled, Created and Started
//     (kuberuntime_container.go startContainer); the next PLEG relist
//     brings the status running, restartCount+1, the exited run as last
//     state, started (no startup probe), not ready;
//  3. Ready at the first successful readiness probe: a new container's
//     worker seeds Failure with either gate value, since it started after
//     the kubelet (prober/worker.go, the KEP-4781 check of StartedAt
//     against the prober's start − 10 s), and the prober manager triggers
//     a probe as soon as it runs without a result (rebootFirstProbe).
//
// With the legacy gate the pod's other probed containers are reset too
// (flipsOnRestart); they are ready again at their own first probe. With
// readiness preserved they keep their Ready. Kubernetes issues 141155 and
// 141473 (a replacement container inheriting Started or Ready) need a
// startup probe or a container the runtime recreated before the kubelet
// started; neither is this case, and v1.36.3 has neither fix.
func replacePod(p *corev1.Pod, jitters map[string]time.Duration, gone []string, legacy bool, seed seed) []statusUpdate {
	rng := seed.rng(p.Namespace+"/"+p.Name, 6)
	running := replaceContainersMin + time.Duration(rng.Float64()*float64(replaceContainersSpread))
	ready := time.Duration(-1)
	reset := slices.Clone(gone)
	for _, c := range p.Spec.Containers {
		jitter, probed := jitters[c.Name]
		switch {
		case !probed:
		case slices.Contains(gone, c.Name):
			ready = max(ready, rebootFirstProbe(jitter, running, time.Duration(c.ReadinessProbe.InitialDelaySeconds)*time.Second, probePeriod(c.ReadinessProbe)))
		case legacy:
			ready = max(ready, jitter)
			reset = append(reset, c.Name)
		}
	}
	updates := []statusUpdate{
		{kind: updateReplaceExited, pod: p, gone: gone, reset: reset},
		{at: running, kind: updateReplaceRunning, pod: p, probed: jitters, gone: gone},
	}
	if ready >= 0 {
		updates = append(updates, statusUpdate{at: ready, kind: updateReadyAtProbe, pod: p})
	}
	return updates
}

// applyUpdate applies u to its pod's status st at now (statusManager.batch)
// and counts the flips and restarts it makes; node is the kubelet's node,
// whose CIDR a rebooted pod's new IP comes from.
func (n *nodeRun) applyUpdate(node *corev1.Node, u statusUpdate, st *corev1.PodStatus, now metav1.Time) bool {
	s, sess := n.s, n.sess
	wasReady := podReady(st)
	probed := func(c string) bool { _, ok := u.probed[c]; return ok }
	changed := false
	switch u.kind {
	case updateRebootExited:
		// A memory-backed emptyDir does not survive the reboot.
		for _, v := range u.pod.Spec.Volumes {
			if v.EmptyDir != nil && v.EmptyDir.Medium == corev1.StorageMediumMemory {
				s.Counters.MemoryEmptyDirsLost.Add(1)
			}
		}
		changed = terminateContainers(st, 255, "Unknown", now)
		changed = setReadiness(st, func(string) bool { return false }, now) || changed
		changed = setCondition(st, corev1.PodReadyToStartContainers, corev1.ConditionFalse, "", now) || changed
		if st.PodIP != "" {
			st.PodIP, st.PodIPs = "", nil
			changed = true
		}
	case updateSandboxReady:
		changed = setCondition(st, corev1.PodReadyToStartContainers, corev1.ConditionTrue, "", now)
	case updateReplaceExited:
		f := false
		for i := range st.ContainerStatuses {
			cs := &st.ContainerStatuses[i]
			if !u.exited(cs.Name) || cs.State.Running == nil {
				continue
			}
			cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: 137, Reason: "Error", StartedAt: cs.State.Running.StartedAt, FinishedAt: now, ContainerID: cs.ContainerID,
			}}
			cs.Ready, cs.Started, changed = false, &f, true
		}
		keep := map[string]bool{}
		for _, cs := range st.ContainerStatuses {
			keep[cs.Name] = cs.Ready && !slices.Contains(u.reset, cs.Name)
		}
		changed = setReadiness(st, func(c string) bool { return keep[c] }, now) || changed
	case updateRebootRunning:
		changed = setCondition(st, corev1.PodReadyToStartContainers, corev1.ConditionTrue, "", now)
		changed = restartContainers(st, nil, 255, "Unknown", now) || changed
		s.Counters.ContainerRestarts.Add(int64(len(st.ContainerStatuses)))
		markStarted(st)
		changed = setReadiness(st, func(c string) bool { return !probed(c) }, now) || changed
		if ip := sess.newPodIP(node); ip != "" {
			st.PodIP, st.PodIPs = ip, []corev1.PodIP{{IP: ip}}
			changed = true
		}
	case updateReplaceRunning:
		changed = restartContainers(st, u.exited, 137, "Error", now)
		s.Counters.ContainerRestarts.Add(int64(len(u.gone)))
		// Running without a startup probe: started; without a readiness
		// probe: ready at once (prober_manager.go UpdatePodStatus). The
		// others keep what they had.
		t := true
		readyNow := map[string]bool{}
		for i := range st.ContainerStatuses {
			cs := &st.ContainerStatuses[i]
			if u.exited(cs.Name) {
				cs.Started = &t
				readyNow[cs.Name] = !probed(cs.Name)
				continue
			}
			readyNow[cs.Name] = cs.Ready
		}
		changed = setReadiness(st, func(c string) bool { return readyNow[c] }, now) || changed
	case updateReadyAtProbe:
		// Every container ready, if the pod still runs.
		changed = st.Phase == corev1.PodRunning && setReadiness(st, func(string) bool { return true }, now)
	}
	switch {
	case wasReady && !podReady(st):
		s.Counters.ReadyFlipsDown.Add(1)
	case !wasReady && podReady(st):
		s.Counters.ReadyFlipsUp.Add(1)
	}
	return changed
}

// updateEvents records what a pod's worker records as it hands u over:
// SandboxChanged after a reboot, and the containers' Pulled, Created and
// Started as they run again.
func (n *nodeRun) updateEvents(u statusUpdate) error {
	switch u.kind {
	case updateRebootExited:
		_, err := n.sess.podEvent(u.pod, "", "", 1, corev1.EventTypeNormal, "SandboxChanged", "Pod sandbox changed, it will be killed and re-created.")
		return err
	case updateRebootRunning:
		return containerEvents(n.sess, u.pod, nil)
	case updateReplaceRunning:
		return containerEvents(n.sess, u.pod, u.exited)
	}
	return nil
}

// replacePod's containers run again replaceContainersMin plus up to
// replaceContainersSpread after the pod's first sync: the runtime's
// create and start, and the pod worker's next sync. Measured on the
// kubelet on containerd (audit log with bodies, calibration case
// kubelet/exited, 2 nodes, 2026-12-05): the running status 0.13 and 0.14 s
// after the terminated one, then Ready at the first probe 5.1 and 8.5 s
// after it, as the model has them.
const (
	replaceContainersMin    = 100 * time.Millisecond
	replaceContainersSpread = 100 * time.Millisecond
)

// The kubelet on containerd after a reboot (restartPod): the pods'
// sandboxes come one after another, rebootSandboxBase after the first
// status write and rebootSandboxPerPod apart; each pod's containers run
// rebootContainersMin plus up to rebootContainersSpread after its sandbox.
const (
	rebootSandboxBase      = 1700 * time.Millisecond
	rebootSandboxPerPod    = 200 * time.Millisecond
	rebootContainersMin    = 500 * time.Millisecond
	rebootContainersSpread = time.Second
)
