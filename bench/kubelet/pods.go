package kubelet

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/stormbench/stormbench/profiles"
)

// The pods of a starting kubelet: admission, termination, restarts and replacements, and the status writes each brings.

// RestartGrace is the prober's kubeletRestartGracePeriod: a container
// started less than this before the kubelet counts as new, not as one that
// ran through the restart (prober/prober_manager.go).
const RestartGrace = 10 * time.Second

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
		if r := c.State.Running; r != nil && !r.StartedAt.IsZero() && !r.StartedAt.Time.Before(kubeletStart.Add(-RestartGrace)) {
			return true
		}
	}
	return false
}

// startPods replays the kubelet's first sync of each pod: admission re-run,
// completing deletions, restarting containers after a reboot, and the status
// manager's first status write. It returns when each pod's readiness probes
// will first succeed, and the steps that end the deleted pods
// (terminatePods), both as offsets from the pods' first sync.
func (n *nodeRun) startPods(ctx context.Context, node *corev1.Node, pods []*corev1.Pod, rebooted bool) ([]probePlan, Plan, error) {
	s, sess := n.s, n.sess
	legacy := s.gate(profiles.GateChangeContainerStatusOnKubeletRestart)
	rng := s.rng(node.Name, 1)
	// began is the pods' first sync (boot's podSync): the offsets of a
	// pod's later statuses count from it.
	began := s.cfg.Clock.Now()
	var plans []probePlan
	// The order of the pods' sandboxes after a reboot (restartPod).
	sandboxes := 0
	if rebooted {
		sess.reservePodIPs(node)
	}
	// Containers that exited while the kubelet was down (ExitContainer); a
	// reboot ends them all anyway.
	exited := s.takeExited(node.Name)
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		if reason, msg, rejected := admissionRejects(node, p); rejected {
			if err := n.rejectPod(ctx, p, reason, msg); err != nil {
				return nil, nil, err
			}
			continue
		}
		plan := probePlan{ns: p.Namespace, name: p.Name, at: firstProbes(p, rng)}
		var err error
		switch gone := exited[p.Namespace+"/"+p.Name]; {
		case rebooted:
			plan.updates = n.restartPod(p, plan.at, sandboxes)
			sandboxes++
		case len(gone) > 0:
			err = n.firstSyncExited(ctx, p, &plan, gone, legacy, began)
		default:
			var startup []statusStep
			if legacy {
				startup = legacyStartupSteps(p, plan.at, rng)
			}
			err = n.firstSync(ctx, p, &plan, startup, legacy, metav1.NewTime(began))
		}
		if err != nil {
			return nil, nil, err
		}
		plans = append(plans, plan)
	}
	ends, err := n.completeDeletions(ctx, began)
	return plans, ends, err
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

// firstSyncExited is the first sync of a pod some of whose containers
// (gone) exited while the kubelet was down: the terminated status goes out
// in the pod's turn among the node's pods, and the restarted containers'
// statuses (replacePod) follow from there, offset from began.
func (n *nodeRun) firstSyncExited(ctx context.Context, p *corev1.Pod, plan *probePlan, gone []string, legacy bool, began time.Time) error {
	s := n.s
	first, updates := n.replacePod(p, plan.at, gone, legacy)
	if _, err := n.status.sync(ctx, p.Namespace, p.Name, func(st *corev1.PodStatus) bool {
		return first(st, metav1.NewTime(s.cfg.Clock.Now()))
	}); err != nil {
		return err
	}
	synced := s.cfg.Clock.Since(began)
	for i := range updates {
		updates[i].at += synced
	}
	plan.updates = updates
	return nil
}

// firstSync is the status manager's first sync of a running pod after the
// kubelet started (its cache is empty): it decides from the pod's status
// whether its first probe flips it (plan.flip), leaves it not ready
// (plan.notReady), or hands it to the startup worker (plan.steps), and
// writes what changed now.
func (n *nodeRun) firstSync(ctx context.Context, p *corev1.Pod, plan *probePlan, startup []statusStep, legacy bool, now metav1.Time) error {
	s, sess := n.s, n.sess
	probed := func(c string) bool { _, ok := plan.at[c]; return ok }
	_, err := n.status.sync(ctx, p.Namespace, p.Name, func(st *corev1.PodStatus) bool {
		changed := false
		wasReady := podReady(st)
		if len(startup) > 0 {
			// The startup worker decides; nothing changes at this sync.
			plan.steps = startup
			return false
		}
		if flip := flipsOnRestart(p, plan.at, legacy, sess.started); wasReady && flip {
			// ChangeContainerStatusOnKubeletRestart=true, or a probed
			// container started less than 10 s before the kubelet: the
			// worker seeds Failure at its first probe and probes at once
			// (prober/worker.go doProbe), so the flip comes at the first
			// probe (ActionPodFlip), not at this first sync, which finds
			// the status unchanged (measured on the hollow kubelet: 1 GET
			// here, then GET+PATCH False and GET+PATCH True milliseconds
			// apart, at U(0, period) after start).
			plan.flip = true
		} else if !wasReady {
			// Readiness is preserved (KEP-4781); but if the node-lifecycle
			// controller marked the pod not ready while the node was away,
			// probed containers stay not ready until their probe passes
			// and the others are ready at once.
			changed = setReadiness(st, func(c string) bool { return !probed(c) }, now)
		}
		if wasReady && !podReady(st) {
			s.Counters.ReadyFlipsDown.Add(1)
		}
		if !wasReady && podReady(st) {
			s.Counters.ReadyFlipsUp.Add(1)
		}
		plan.notReady = !podReady(st)
		return changed
	})
	return err
}

// completeDeletions completes the deletions the API server started while
// the node was away (taint-based eviction, a scale-down): terminatePods
// over the deleted pods in the kubelet's pod source, whose first sync was
// at began.
func (n *nodeRun) completeDeletions(ctx context.Context, began time.Time) (Plan, error) {
	var deleted []*corev1.Pod
	for _, p := range n.sess.podStore.List() {
		if pod := p.(*corev1.Pod); pod.DeletionTimestamp != nil {
			deleted = append(deleted, pod)
		}
	}
	// The store lists in map order; a fixed order keeps runs repeatable.
	slices.SortFunc(deleted, func(a, b *corev1.Pod) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return n.terminatePods(ctx, deleted, began)
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

// terminatePods replays the kubelet finishing the deletions that started
// while it was away, for pods whose first sync was at began. Each pod's
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
//     as far as its Services are concerned (already terminating). Sent
//     here, at the first sync;
//  2. once the kill is over (killDuration), the containers terminated, the
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
func (n *nodeRun) terminatePods(ctx context.Context, pods []*corev1.Pod, began time.Time) (Plan, error) {
	s, sess := n.s, n.sess
	for _, pod := range pods {
		for _, c := range pod.Status.ContainerStatuses {
			if c.State.Running == nil {
				continue
			}
			if _, err := sess.podEvent(pod, c.Name, "", 1, corev1.EventTypeNormal, "Killing", fmt.Sprintf("Stopping container %s", c.Name)); err != nil {
				return nil, err
			}
		}
	}
	for _, pod := range pods {
		if _, err := n.status.sync(ctx, pod.Namespace, pod.Name, observedGeneration(pod.Generation)); err != nil {
			return nil, err
		}
	}
	// The kills start as the first statuses are out; each pod's is its own.
	killStart := s.cfg.Clock.Since(began)
	var ends Plan
	for _, pod := range pods {
		killed := killStart + killDuration(s.rng(pod.Namespace+"/"+pod.Name, 8))
		ends = append(ends,
			Step{At: killed, Actor: ActorPods, Action: ActionPodTerminal, Pod: pod},
			Step{At: nextRelist(sess.started, began, killed), Actor: ActorPods, Action: ActionPodDelete, Pod: pod})
	}
	return ends, nil
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

// nextRelist is when, as an offset from began, the pod cache first holds a
// status newer than after (also an offset from began): the end of the first
// relist that starts after it, on the grid that starts at the kubelet's
// start.
func nextRelist(started, began time.Time, after time.Duration) time.Duration {
	grid := plegRelistPeriod + plegRelist
	since := began.Sub(started) + after // from the kubelet's start
	k := (since + grid - 1) / grid
	return started.Add(k*grid + plegRelist).Sub(began)
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

// endPod plays a deleted pod's end (terminatePods): its terminal status
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
