package plan

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/stormbench/stormbench/bench/kubeversion"
	"k8s.io/klog/v2"
)

// The pods of a starting kubelet, decided: readiness resets, deletions, reboots and replaced containers, and admission's re-run.

// FlipsOnRestart says whether a ready pod's readiness is reset at the
// kubelet's first probe after a start at kubeletStart: with
// ChangeContainerStatusOnKubeletRestart=true (legacy) when it has a probed
// container; with the gate off only when a probed container started within
// the grace period before the kubelet (prober/worker.go doProbe seeds the
// initial Failure unless the container "is a restart": running and started
// before kubeletRestartGracePeriod(start)). probed holds the containers
// with a readiness probe.
func FlipsOnRestart(p *corev1.Pod, probed map[string]time.Duration, legacy bool, kubeletStart time.Time) bool {
	if len(probed) == 0 {
		return false
	}
	if legacy {
		return true
	}
	for _, c := range p.Status.ContainerStatuses {
		if _, ok := probed[c.Name]; !ok {
			continue
		}
		// Not running, or no start time: the worker seeds the initial
		// value too, but such a container was not ready to lose.
		if r := c.State.Running; r != nil && !r.StartedAt.IsZero() && !r.StartedAt.Time.Before(kubeletStart.Add(-kubeversion.KubeletRestartGrace)) {
			return true
		}
	}
	return false
}

// firstProbes draws when each readiness-probed container of p is first
// probed, as an offset from the pods' first sync: prober/worker.go run: a
// worker started within one period of the prober manager waits a random
// part of the period first. After a reboot restartPod takes the sleep from
// there to when the new container first passes.
func firstProbes(p *corev1.Pod, rng *rand.Rand) map[string]time.Duration {
	at := map[string]time.Duration{}
	for _, c := range p.Spec.Containers {
		if c.ReadinessProbe == nil {
			continue
		}
		at[c.Name] = time.Duration(rng.Float64() * float64(probePeriod(c.ReadinessProbe)))
	}
	return at
}

// legacyStartupSteps plans the status writes of p's running, started
// containers with a startup probe, which the legacy gate resets
// (startupSteps), given their readiness workers' first probes; it draws
// each startup worker's jitter from rng.
func legacyStartupSteps(p *corev1.Pod, firstProbes map[string]time.Duration, rng *rand.Rand) []StatusStep {
	var steps []StatusStep
	for _, c := range p.Spec.Containers {
		if c.StartupProbe == nil || !containerStarted(p, c.Name) {
			continue
		}
		sp := probePeriod(c.StartupProbe)
		var rp time.Duration
		if c.ReadinessProbe != nil {
			rp = probePeriod(c.ReadinessProbe)
		}
		steps = append(steps, startupSteps(c.Name, time.Duration(rng.Float64()*float64(sp)), sp, firstProbes[c.Name], rp)...)
	}
	return steps
}

// planDeletions plans the kubelet finishing the deletions that started
// while it was away: pods, deleted, in the order of their names. Each pod's
// worker kills its containers (kuberuntime killContainer: a Killing event
// per running container), all pods at once, since every pod has a worker
// goroutine of its own (pod_workers.go). The status manager, one goroutine
// for all pods, then syncs each pod three times, a GET before each
// (status_manager.go syncPod):
//  1. the pod's first status after the restart (kubelet.go
//     SyncTerminatingPod, generateAPIPodStatus), before the kill: nothing
//     changed but the observed generation, which the graceful deletion
//     raised (pkg/api/v1/pod CalculatePodStatusObservedGeneration and
//     CalculatePodConditionObservedGeneration, PodObservedGenerationTracking):
//     status.observedGeneration and every condition's; the pod stays ready
//     as far as its Services are concerned (already terminating):
//     ActionPodObservedGeneration, in the first syncs (syncs);
//  2. once the kill is over (killDuration, from the end of the first
//     syncs, when the kills start), the containers terminated, the
//     pod not ready and the terminal phase (Succeeded or Failed) in one
//     write (kubelet.go SyncTerminatingPod: SetPodStatus of the stopped
//     pod's status): ActionPodTerminal;
//  3. a sync with nothing to write, a GET and the DELETE with grace period
//     0 and the UID as precondition: ActionPodDelete. The worker runs
//     SyncTerminatedPod only once the pod cache holds a status newer than
//     the end of the kill (pod_workers.go podWorkerLoop
//     podCache.GetNewerThan(uid, lastSyncTime), "adds ~1s of latency"),
//     which only the PLEG's next relist gives (NextRelist); then
//     SyncTerminatedPod (no volumes to wait for) calls
//     statusManager.TerminatePod, canBeDeleted holds, and the sync deletes
//     the pod (status_manager.go syncPod).
//
// The oracle (calibration case kubelet/deleted, containerd) saw the
// terminal PATCH 0.25–0.95 s after the pods' first sync and the DELETE at
// the PLEG's second or third relist, a relist grid 1.055–1.068 s apart.
func planDeletions(pods []*corev1.Pod, seed Seed) (syncs, ends Plan) {
	for _, pod := range pods {
		for _, c := range pod.Status.ContainerStatuses {
			if c.State.Running != nil {
				syncs = append(syncs, Step{Actor: ActorNode, Action: ActionPodEvent, Pod: pod, Container: c.Name, Count: 1,
					EventType: corev1.EventTypeNormal, Reason: "Killing", Message: fmt.Sprintf("Stopping container %s", c.Name)})
			}
		}
	}
	for _, pod := range pods {
		syncs = append(syncs, Step{Actor: ActorNode, Action: ActionPodObservedGeneration, Pod: pod})
	}
	// The kills start as the first statuses are out; each pod's is its own.
	for _, pod := range pods {
		killed := killDuration(seed.Rng(pod.Namespace+"/"+pod.Name, 8))
		ends = append(ends,
			Step{At: killed, From: MarkSyncsDone, Actor: ActorPods, Action: ActionPodTerminal, Pod: pod},
			Step{At: killed, From: MarkSyncsDone, Actor: ActorPods, Action: ActionPodDelete, Pod: pod})
	}
	return syncs, ends
}

// The kill's duration: a container runtime's StopContainer of every
// running container, then StopPodSandbox with the network's teardown
// (kuberuntime_manager.go killPodWithSyncResult). Drawn uniform in
// [killMin, killMin+killSpread), as the containerd oracle measured it; the
// hollow kubelet's fake runtime kills at once.
const (
	killMin    = 250 * time.Millisecond
	killSpread = 700 * time.Millisecond
)

func killDuration(rng *rand.Rand) time.Duration {
	return killMin + time.Duration(rng.Float64()*float64(killSpread))
}

// The PLEG's global relist (pleg/generic.go): the first when the kubelet
// starts it (Kubelet.Run, within tens of milliseconds of the kubelet's
// first request), then genericPlegRelistPeriod (1 s, kubelet.go) after
// each one ends (the timer is reset after Relist returns). A relist stamps
// the pod cache with its start and publishes it at its end; plegRelist is
// how long one takes, as the oracle's relists of 5 pods did.
const (
	plegRelistPeriod = time.Second
	plegRelist       = 60 * time.Millisecond
)

// NextRelist is when the pod cache first holds a status newer than after:
// the end of the first relist that starts after it, on the grid that
// starts at the kubelet's start (started).
func NextRelist(started, after time.Time) time.Time {
	grid := plegRelistPeriod + plegRelist
	k := (after.Sub(started) + grid - 1) / grid
	return started.Add(k*grid + plegRelist)
}

// containerStarted reports whether the pod's status has the container
// running and started.
func containerStarted(p *corev1.Pod, name string) bool {
	for _, c := range p.Status.ContainerStatuses {
		if c.Name == name {
			return c.State.Running != nil && (c.Started == nil || *c.Started)
		}
	}
	return false
}

// admissionRejects re-runs the node-fit checks the kubelet's admission does
// on start (lifecycle/predicate.go): the nodeSelector must match the node's
// labels, and NoExecute taints must be tolerated.
func admissionRejects(node *corev1.Node, p *corev1.Pod) (reason, msg string, rejected bool) {
	for k, v := range p.Spec.NodeSelector {
		if node.Labels[k] != v {
			return "NodeAffinity", "Pod was rejected: Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector", true
		}
	}
	for _, t := range node.Spec.Taints {
		if t.Effect != corev1.TaintEffectNoExecute {
			continue
		}
		// The node-lifecycle controller's own taints are handled by
		// eviction, not admission.
		if t.Key == corev1.TaintNodeNotReady || t.Key == corev1.TaintNodeUnreachable {
			continue
		}
		tolerated := false
		for _, tol := range p.Spec.Tolerations {
			if tol.ToleratesTaint(klog.Background(), &t, false) {
				tolerated = true
				break
			}
		}
		if !tolerated {
			return "TaintToleration", fmt.Sprintf("Pod was rejected: Predicate TaintToleration failed: node(s) had untolerated taint {%s: %s}", t.Key, t.Value), true
		}
	}
	return "", "", false
}

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
//     callback (Release.SandboxReadyWrite: before v1.36) reports the
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
func restartPod(p *corev1.Pod, jitters map[string]time.Duration, index int, seed Seed, rel Release) []StatusUpdate {
	rng := seed.Rng(p.Namespace+"/"+p.Name, 5)
	sandbox := rebootSandboxBase + time.Duration((float64(index)+rng.Float64())*float64(rebootSandboxPerPod))
	running := sandbox + rebootContainersMin + time.Duration(rng.Float64()*float64(rebootContainersSpread))
	ready := time.Duration(-1)
	for _, c := range p.Spec.Containers {
		if jitter, ok := jitters[c.Name]; ok {
			ready = max(ready, rebootFirstProbe(jitter, running, time.Duration(c.ReadinessProbe.InitialDelaySeconds)*time.Second, probePeriod(c.ReadinessProbe)))
		}
	}
	updates := []StatusUpdate{{At: 0, Kind: UpdateRebootExited, Pod: p}}
	if rel.SandboxReadyWrite {
		updates = append(updates, StatusUpdate{At: sandbox, Kind: UpdateSandboxReady, Pod: p})
	}
	updates = append(updates, StatusUpdate{At: running, Kind: UpdateRebootRunning, Pod: p, Probed: jitters})
	if ready >= 0 {
		updates = append(updates, StatusUpdate{At: ready, Kind: UpdateReadyAtProbe, Pod: p})
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
// (FlipsOnRestart); they are ready again at their own first probe. With
// readiness preserved they keep their Ready. Kubernetes issues 141155 and
// 141473 (a replacement container inheriting Started or Ready) need a
// startup probe or a container the runtime recreated before the kubelet
// started; neither is this case, and v1.36.3 has neither fix.
func replacePod(p *corev1.Pod, jitters map[string]time.Duration, gone []string, legacy bool, seed Seed) []StatusUpdate {
	rng := seed.Rng(p.Namespace+"/"+p.Name, 6)
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
	updates := []StatusUpdate{
		{Kind: UpdateReplaceExited, Pod: p, Gone: gone, Reset: reset},
		{At: running, Kind: UpdateReplaceRunning, Pod: p, Probed: jitters, Gone: gone},
	}
	if ready >= 0 {
		updates = append(updates, StatusUpdate{At: ready, Kind: UpdateReadyAtProbe, Pod: p})
	}
	return updates
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
