package kubelet

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/stormbench/stormbench/bench/kubeversion"
)

// The pods of a starting kubelet: admission, termination, restarts and replacements, and the status writes each brings.

// flipsOnRestart says whether a ready pod's readiness is reset at the
// kubelet's first probe after a start at kubeletStart: with
// ChangeContainerStatusOnKubeletRestart=true (legacy) when it has a probed
// container; with the gate off only when a probed container started within
// the grace period before the kubelet (prober/worker.go doProbe seeds the
// initial Failure unless the container "is a restart": running and started
// before kubeletRestartGracePeriod(start)). probed holds the containers
// with a readiness probe.
func flipsOnRestart(p *corev1.Pod, probed map[string]time.Duration, legacy bool, kubeletStart time.Time) bool {
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

// planPods plans the pods' part of a start (planStart): for the node
// actor, each live pod's first sync in the kubelet's order (admission's
// re-run rejecting it, or the status manager's first sync, decided as
// data); for the pods actor, what follows: the statuses of pods recreated
// after a reboot or replaced after their containers exited, a startup
// probe's writes, and each pod's first successful probe.
func planPods(in startInput) (syncs, later Plan) {
	rng := in.Seed.rng(in.Start.Node, 1)
	// The order of the pods' sandboxes after a reboot (restartPod).
	sandboxes := 0
	for _, p := range in.Pods {
		if reason, msg, rejected := admissionRejects(in.NodeObj, p); rejected {
			syncs = append(syncs, Step{Actor: ActorNode, Action: ActionPodReject, Pod: p, Reason: reason, Message: msg})
			continue
		}
		at := firstProbes(p, rng)
		sync := Step{Actor: ActorNode, Action: ActionPodFirstSync, Pod: p, Namespace: p.Namespace, Name: p.Name, Probed: at, Legacy: in.Legacy}
		switch gone := in.Exited[p.Namespace+"/"+p.Name]; {
		case in.Rebooted:
			// The first status is the first update (statusManager.batch).
			later = append(later, updateSteps(restartPod(p, at, sandboxes, in.Seed, in.Release), MarkPodSync)...)
			sandboxes++
		case len(gone) > 0:
			updates := replacePod(p, at, gone, in.Legacy, in.Seed)
			sync.Update = &updates[0]
			syncs = append(syncs, sync)
			later = append(later, updateSteps(updates[1:], MarkPodSynced)...)
		default:
			var startup []statusStep
			if in.Legacy {
				startup = legacyStartupSteps(p, at, rng)
			}
			sync.Startup = len(startup) > 0
			syncs = append(syncs, sync)
			for _, st := range startup {
				later = append(later, Step{
					At: st.at, From: MarkPodSync, Actor: ActorPods, Action: ActionPodStartup, Namespace: p.Namespace, Name: p.Name,
					Container: st.container, Ready: st.ready, Started: st.started, SetStarted: st.setStarted,
				})
			}
			if sync.Startup {
				continue
			}
			var last time.Duration
			for _, d := range at {
				last = max(last, d)
			}
			later = append(later, Step{At: last, From: MarkPodSync, Actor: ActorPods, Action: ActionPodProbe, Namespace: p.Namespace, Name: p.Name, Probed: at})
		}
	}
	return syncs, later
}

// updateSteps are a pod's statuses as steps of the pods actor, each at
// its offset from from.
func updateSteps(updates []statusUpdate, from Mark) Plan {
	var steps Plan
	for i := range updates {
		u := &updates[i]
		steps = append(steps, Step{At: u.at, From: from, Actor: ActorPods, Action: ActionPodStatus, Namespace: u.pod.Namespace, Name: u.pod.Name, Update: u})
	}
	return steps
}

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
	if _, err := sess.podEvent(p, "", "", 1, corev1.EventTypeWarning, reason, msg); err != nil {
		return err
	}
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
func (n *nodeRun) firstSync(ctx context.Context, node *corev1.Node, st Step, now metav1.Time) error {
	s, sess := n.s, n.sess
	if st.Update != nil {
		at := metav1.NewTime(s.cfg.Clock.Now())
		_, err := n.status.sync(ctx, st.Namespace, st.Name, func(ps *corev1.PodStatus) bool {
			return n.applyUpdate(node, *st.Update, ps, at)
		})
		n.marks.reach(markKey{MarkPodSynced, st.Namespace + "/" + st.Name}, s.cfg.Clock.Now())
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
		if flip := flipsOnRestart(st.Pod, st.Probed, st.Legacy, sess.started); wasReady && flip {
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
		if wasReady && !podReady(ps) {
			s.Counters.ReadyFlipsDown.Add(1)
		}
		if !wasReady && podReady(ps) {
			s.Counters.ReadyFlipsUp.Add(1)
		}
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
func legacyStartupSteps(p *corev1.Pod, firstProbes map[string]time.Duration, rng *rand.Rand) []statusStep {
	var steps []statusStep
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
//     which only the PLEG's next relist gives (nextRelist); then
//     SyncTerminatedPod (no volumes to wait for) calls
//     statusManager.TerminatePod, canBeDeleted holds, and the sync deletes
//     the pod (status_manager.go syncPod).
//
// The oracle (calibration case kubelet/deleted, containerd) saw the
// terminal PATCH 0.25–0.95 s after the pods' first sync and the DELETE at
// the PLEG's second or third relist, a relist grid 1.055–1.068 s apart.
func planDeletions(pods []*corev1.Pod, seed seed) (syncs, ends Plan) {
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
		killed := killDuration(seed.rng(pod.Namespace+"/"+pod.Name, 8))
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

// nextRelist is when the pod cache first holds a status newer than after:
// the end of the first relist that starts after it, on the grid that
// starts at the kubelet's start (started).
func nextRelist(started, after time.Time) time.Time {
	grid := plegRelistPeriod + plegRelist
	k := (after.Sub(started) + grid - 1) / grid
	return started.Add(k*grid + plegRelist)
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

// endPod plays a deleted pod's end (planDeletions): its terminal status
// (ActionPodTerminal), or the sync with nothing to write and the DELETE
// (ActionPodDelete).
func (n *nodeRun) endPod(ctx context.Context, st Step) error {
	pod := st.Pod
	if st.Action == ActionPodTerminal {
		now := metav1.NewTime(n.s.cfg.Clock.Now())
		_, err := n.status.sync(ctx, pod.Namespace, pod.Name, func(st *corev1.PodStatus) bool {
			changed := terminateContainers(st, 0, "Completed", now)
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
func containerEvents(sess *session, p *corev1.Pod, which func(string) bool) error {
	for _, c := range append(append([]corev1.Container{}, p.Spec.InitContainers...), p.Spec.Containers...) {
		if which != nil && !which(c.Name) {
			continue
		}
		for _, e := range []struct{ reason, msg string }{
			{"Pulled", fmt.Sprintf("Container image %q already present on machine and can be accessed by the pod", c.Image)},
			{"Created", "Container created"},
			{"Started", "Container started"},
		} {
			if _, err := sess.podEvent(p, c.Name, "", 1, corev1.EventTypeNormal, e.reason, e.msg); err != nil {
				return err
			}
		}
	}
	return nil
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

func podReady(st *corev1.PodStatus) bool {
	for _, c := range st.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// admissionRejects re-runs the node-fit checks the kubelet's admission does
// on start (lifecycle/predicate.go): the nodeSelector must match the node's
// labels, and NoExecute taints must be tolerated.
// kubeletOwnedCondition are the pod conditions the kubelet owns
// (pkg/kubelet/types/pod_status.go PodConditionByKubelet, with the gates
// PodReadyToStartContainersCondition and RestartAllContainersOnContainerExits
// as 1.36 sets them by default). PodScheduled is among them.
var kubeletOwnedCondition = map[corev1.PodConditionType]bool{
	corev1.PodScheduled: true, corev1.PodReady: true, corev1.PodInitialized: true,
	corev1.ContainersReady: true, corev1.PodResizeInProgress: true, corev1.PodResizePending: true,
	corev1.PodReadyToStartContainers: true, corev1.AllContainersRestarting: true,
}

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
