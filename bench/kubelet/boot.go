package kubelet

// This file holds a kubelet start: a kubelet restart and a reboot, both
// ending in boot, and the pod steps of the kubelet's first sync and probes.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/stormbench/stormbench/bench/poll"
	"github.com/stormbench/stormbench/bench/storm"
	"github.com/stormbench/stormbench/profiles"
)

// kubeletRestart: the kubelet stops for the downtime while containers keep
// running, then starts and replays its startup traffic.
func (s *Simulator) kubeletRestart(ctx context.Context, r storm.Restart, node *corev1.Node) error {
	if err := s.down(ctx, r, node); err != nil {
		return err
	}
	return s.boot(ctx, r, false)
}

// reboot: every container stops for the downtime. On boot the kubelet
// replays its startup traffic and recreates every container. A planned
// reboot cordons and drains the node first, and uncordons it after boot.
func (s *Simulator) reboot(ctx context.Context, r storm.Restart, node *corev1.Node) error {
	if s.cfg.Planned {
		if err := s.cordon(ctx, r.Node, true); err != nil {
			return err
		}
		if err := s.drain(ctx, r.Node); err != nil {
			return err
		}
	}
	if err := s.down(ctx, r, node); err != nil {
		return err
	}
	if err := s.boot(ctx, r, true); err != nil {
		return err
	}
	if s.cfg.Planned {
		return s.cordon(ctx, r.Node, false)
	}
	return nil
}

// boot starts a simulated kubelet and drives the node back to Ready and its
// pods back to their kubelet-decided readiness. rebooted says every
// container was stopped.
func (s *Simulator) boot(ctx context.Context, r storm.Restart, rebooted bool) error {
	s.record(r, storm.Event{Type: storm.EventKubeletStart})
	n, err := s.openSession(r)
	if err != nil {
		return err
	}
	defer n.close()
	sess := n.sess
	sess.started = s.cfg.Clock.Now()
	newBoot := ""
	if rebooted {
		// A reboot gives the machine a new boot ID
		// (/proc/sys/kernel/random/boot_id, read by cAdvisor): the first
		// node status patch reports it (nodestatus/setters.go MachineInfo).
		newBoot = bootID(s.rng(r.Node, 3))
		sess.newBootID = newBoot
	}
	if err := sess.register(ctx); err != nil {
		return err
	}
	// The lease controller runs from here on, beside the informers' sync
	// (kubelet.go Run); it stops when the node goes back to KWOK.
	n.startLease(ctx, nil, 0)
	if err := sess.startInformers(ctx); err != nil {
		return err
	}
	// The volume manager starts beside registration (kubelet.go Run); the
	// model knows the pods on disk once the pod informer has synced, so its
	// GET comes that much later than the real one.
	if err := sess.reconstructVolumes(ctx); err != nil {
		return fmt.Errorf("kubelet %s: volume reconstruction: %w", r.Node, err)
	}
	node, ok, _ := sess.nodeInf.GetStore().GetByKey(r.Node)
	if !ok {
		return fmt.Errorf("kubelet %s: own node not in its informer", r.Node)
	}
	nodeObj := node.(*corev1.Node)
	// The node status goes out right after registration, beside pod sync
	// (kubelet_node_status.go fastStatusUpdateOnce, syncNodeStatus): with
	// the runtime already up it reports Ready, so a node that was Ready
	// stays Ready (measured on the hollow kubelet: one PATCH of
	// nodes/status, no Ready transition). InitDuration > 0 models the
	// NotReady flash of kubernetes#124397 instead: NotReady until the
	// runtime, network and PLEG checks pass (setNodeReadyCondition).
	flash := s.cfg.InitDuration > 0
	if flash {
		if err := sess.patchNodeReady(ctx, false, "KubeletNotReady", "container runtime status check may not have completed yet"); err != nil {
			return err
		}
	} else if err := sess.patchNodeReady(ctx, true, "KubeletReady", "kubelet is posting ready status"); err != nil {
		return err
	}
	if err := sess.csiNode(ctx, nodeObj.UID); err != nil {
		return err
	}
	sess.wipeResourceSlices(ctx)
	for _, e := range startupEvents(r.Node, newBoot) {
		if err := sess.event(ctx, nodeObj.UID, e.typ, e.reason, e.msg); err != nil {
			return err
		}
	}
	pods := sess.pods()
	watches, err := sess.watchPodObjects(ctx, pods)
	if err != nil {
		return err
	}
	s.Counters.ObjectWatches.Add(int64(watches))
	tokens, err := sess.requestTokens(ctx, pods)
	s.Counters.TokenRequests.Add(int64(tokens))
	if err != nil {
		return err
	}
	s.record(r, storm.Event{Type: storm.EventSynced, Pods: len(pods)})
	if s.cfg.CloseWatchesAfterSync {
		sess.stopWatches()
	}
	// The status manager syncs every pod once after start (its cache is
	// empty), and the prober decides readiness.
	podSync := s.cfg.Clock.Now()
	plans, err := n.startPods(ctx, nodeObj, pods, rebooted)
	if err != nil {
		return err
	}
	// Pod sync does not wait for a NotReady flash to end. The flash is the
	// first node status going out before the runtime check's first pass
	// (kubelet.go Run starts updateRuntimeUp at once; the status setter's
	// runtimeErrors says "container runtime status check may not have
	// completed yet" until then), and syncLoop skips pod work only while
	// that check has not passed (kubelet.go syncLoop "Skipping pod
	// synchronization"): a few milliseconds, against the node's NotReady
	// until its next status update. So the status manager and the probers
	// run beside the flash (kubelet.go Run starts them before syncLoop).
	var pending chan error
	if flash {
		pctx, cancel := context.WithCancel(ctx)
		defer cancel()
		ch := make(chan error, 1)
		go func() { ch <- n.probe(pctx, plans, podSync) }()
		pending = ch
		defer func() {
			if pending != nil { // not handed to recover: an error came first
				cancel()
				<-pending
			}
		}()
	}
	if flash {
		if err := poll.Sleep(ctx, s.cfg.Clock, s.cfg.InitDuration); err != nil {
			return err
		}
		if err := sess.patchNodeReady(ctx, true, "KubeletReady", "kubelet is posting ready status"); err != nil {
			return err
		}
		// NodeReady is recorded on the transition only
		// (nodestatus/setters.go ReadyCondition).
		if err := sess.event(ctx, nodeObj.UID, corev1.EventTypeNormal, "NodeReady", fmt.Sprintf("Node %s status is now: NodeReady", r.Node)); err != nil {
			return err
		}
	}
	if pending == nil {
		return n.recover(ctx, func(ctx context.Context) error { return n.probe(ctx, plans, podSync) })
	}
	probes := pending
	pending = nil
	return n.recover(ctx, func(context.Context) error { return <-probes })
}

type nodeEvent struct{ typ, reason, msg string }

// startupEvents are the node events a starting kubelet records
// (kubelet.go initializeModules/Run, kubelet_node_status.go); after a
// reboot (a new boot ID: bootID non-empty) also Rebooted, which the
// MachineInfo setter records once when the boot ID changed
// (nodestatus/setters.go).
func startupEvents(node, bootID string) []nodeEvent {
	ev := []nodeEvent{
		{corev1.EventTypeNormal, "Starting", "Starting kubelet."},
		{corev1.EventTypeNormal, "NodeAllocatableEnforced", "Updated Node Allocatable limit across pods"},
		{corev1.EventTypeNormal, "NodeHasSufficientMemory", "Node status is now: NodeHasSufficientMemory"},
		{corev1.EventTypeNormal, "NodeHasNoDiskPressure", "Node status is now: NodeHasNoDiskPressure"},
		{corev1.EventTypeNormal, "NodeHasSufficientPID", "Node status is now: NodeHasSufficientPID"},
	}
	if bootID != "" {
		ev = append(ev, nodeEvent{corev1.EventTypeWarning, "Rebooted", fmt.Sprintf("Node %s has been rebooted, boot id: %s", node, bootID)})
	}
	return ev
}

// bootID returns a random boot ID, formatted as the kernel's (a UUID).
func bootID(rng *rand.Rand) string {
	var b [16]byte
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // variant
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

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

// probePeriod is a probe's period (periodSeconds, at least 1 s).
func probePeriod(p *corev1.Probe) time.Duration {
	return time.Duration(max(p.PeriodSeconds, 1)) * time.Second
}

// probePlan is when a pod's containers become ready again.
type probePlan struct {
	ns, name string
	// at is the offset from the pod's first sync of the first successful
	// probe for each probed container; 0 for containers without a
	// readiness probe.
	at map[string]time.Duration
	// notReady says the pod was left not ready, so its first successful
	// probe writes Ready=True. A pod that stayed ready and does not flip
	// sends nothing more: the status manager syncs only when the status
	// changed (status_manager.go syncPod).
	notReady bool
	// flip is the legacy gate's reset of a ready pod: at its first probe
	// the worker seeds Failure and probes at once (prober/worker.go
	// doProbe), so the status manager writes Ready=False and then
	// Ready=True about one round trip apart.
	flip bool
	// steps, when set, replace flip and notReady: the status writes of a
	// pod whose startup probe the legacy gate resets (startupSteps).
	steps []statusStep
	// updates, when set, replace all of the above: the statuses of a pod
	// recreated after a reboot (restartPod), Ready among them.
	updates []statusUpdate
}

// statusStep is one change of a container's started and ready state that
// the status manager writes, at an offset from the pod's first sync.
type statusStep struct {
	at             time.Duration
	container      string
	started, ready bool
	setStarted     bool
}

// startupSteps plans a running, started container with a startup probe
// after a kubelet restart with the legacy gate (prober_manager.go
// isContainerStarted and UpdatePodStatus, prober/worker.go run and
// doProbe). The pod's first sync comes before the probe workers exist
// (kubelet.go SyncPod: status first, then probeManager.AddPod) and changes
// nothing. Once the startup worker exists and has no result, the container
// counts as not started, so not ready: the first status the kubelet
// generates after that (a worker's first result, at the earlier of the
// startup worker's start-up jitter s0 and the readiness worker's r0) writes
// Started=false and Ready=false. The startup probe then passes at s0 if
// that status was already cached (r0 came first), else one startup period
// later (at s0 the worker still saw the cached Started=true and stopped).
// The container is ready as soon as it is started (the readiness worker,
// disabled until then, is triggered), or at r0 if that is later; without
// a readiness probe, at once. When the readiness worker came first, the
// pod is also written Ready for a moment in between (below), a second
// flip. Measured on the hollow kubelet (2 nodes × 5 pods, periods 10 s):
// 7 and 7.5 flips and 21 status writes per restart of 5 pods, ready
// 10–20 ms after it was started (results/calibration/2026-12-02/startup-probe.md).
func startupSteps(container string, s0, startupPeriod, r0, readinessPeriod time.Duration) []statusStep {
	hasReadiness := readinessPeriod > 0
	down, started := s0, s0+startupPeriod
	if hasReadiness && r0 < s0 {
		down, started = r0, s0
	}
	steps := []statusStep{
		{at: down, container: container, setStarted: true, started: false, ready: false},
	}
	if hasReadiness && r0 < s0 {
		// The readiness worker came first: it found the cached
		// Started=true of the first sync, so it probed at once, and its
		// Success reached the status manager directly
		// (kubelet.go syncLoopIteration: readinessManager.Updates →
		// statusManager.SetContainerReadiness, which does not look at
		// Started): the pod is written Ready for a moment; the pod sync
		// the result triggers finds the container not started
		// (prober_manager.go UpdatePodStatus) and takes Ready away again.
		// Measured on the hollow kubelet: 3 of 5 pods, 5 writes each
		// (Ready with Started=false between two not-ready writes).
		steps = append(steps,
			statusStep{at: r0, container: container, setStarted: true, started: false, ready: true},
			statusStep{at: r0, container: container, setStarted: true, started: false, ready: false})
	}
	steps = append(steps, statusStep{at: started, container: container, setStarted: true, started: true, ready: !hasReadiness})
	if hasReadiness {
		steps = append(steps, statusStep{at: max(started, r0), container: container, started: true, ready: true})
	}
	return steps
}

// startPods replays the kubelet's first sync of each pod: admission re-run,
// completing deletions, restarting containers after a reboot, and the status
// manager's first status write. It returns when each pod's readiness probes
// will first succeed.
func (n *nodeRun) startPods(ctx context.Context, node *corev1.Node, pods []*corev1.Pod, rebooted bool) ([]probePlan, error) {
	s, sess := n.s, n.sess
	legacy := s.gate(profiles.GateChangeContainerStatusOnKubeletRestart)
	rng := s.rng(node.Name, 1)
	// began is the pods' first sync (boot's podSync): the offsets of a
	// pod's later statuses count from it.
	began := s.cfg.Clock.Now()
	now := metav1.NewTime(began)
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
		// Admission re-run (kubelet.go HandlePodAdditions → canAdmitPod):
		// pods that no longer fit the node are rejected (kubernetes#123859).
		// kubelet.go rejectPod records a Warning event with the reason and
		// sets a status of phase, reason and message and nothing else;
		// status_manager.go mergePodStatus keeps the old conditions the
		// kubelet does not own (kubetypes.PodConditionByKubelet) and the
		// new status's, which has none: PodScheduled, Initialized,
		// ContainersReady, Ready and PodReadyToStartContainers go, so the
		// pod leaves its Services at once. (Read from the source; the calibration
		// has no rejection case.)
		if reason, msg, rejected := admissionRejects(node, p); rejected {
			if _, err := sess.podEvent(ctx, p, "", "", 1, corev1.EventTypeWarning, reason, msg); err != nil {
				return nil, err
			}
			if _, err := sess.syncPodStatus(ctx, p.Namespace, p.Name, func(st *corev1.PodStatus) bool {
				st.Phase, st.Reason, st.Message = corev1.PodFailed, reason, msg
				st.Conditions = slices.DeleteFunc(st.Conditions, func(c corev1.PodCondition) bool { return kubeletOwnedCondition[c.Type] })
				return true
			}); err != nil {
				return nil, err
			}
			s.Counters.PodsRejected.Add(1)
			s.Counters.PodStatusPatches.Add(1)
			continue
		}
		plan := probePlan{ns: p.Namespace, name: p.Name, at: map[string]time.Duration{}}
		for _, c := range p.Spec.Containers {
			if c.ReadinessProbe == nil {
				continue
			}
			period := probePeriod(c.ReadinessProbe)
			// prober/worker.go run: a worker started within one period of
			// the prober manager waits a random part of the period first.
			jitter := time.Duration(rng.Float64() * float64(period))
			// After a reboot restartPod takes the sleep from here to when
			// the new container first passes.
			plan.at[c.Name] = jitter
		}
		probed := func(c string) bool { _, ok := plan.at[c]; return ok }
		if rebooted {
			plan.updates = n.restartPod(node, p, plan.at, sandboxes)
			sandboxes++
			plans = append(plans, plan)
			continue
		}
		if gone := exited[p.Namespace+"/"+p.Name]; len(gone) > 0 {
			// The terminated status goes out at the pod's first sync, in
			// its turn among the node's pods; the restarted container's
			// statuses follow from there (replacePod).
			first, updates := n.replacePod(p, plan.at, gone, legacy)
			patched, err := sess.syncPodStatus(ctx, p.Namespace, p.Name, func(st *corev1.PodStatus) bool {
				return first(st, metav1.NewTime(s.cfg.Clock.Now()))
			})
			if err != nil {
				return nil, err
			}
			if patched {
				s.Counters.PodStatusPatches.Add(1)
			}
			synced := s.cfg.Clock.Since(began)
			for i := range updates {
				updates[i].at += synced
			}
			plan.updates = updates
			plans = append(plans, plan)
			continue
		}
		var startup []statusStep
		if legacy {
			for _, c := range p.Spec.Containers {
				if c.StartupProbe == nil || !containerStarted(p, c.Name) {
					continue
				}
				sp := probePeriod(c.StartupProbe)
				var rp time.Duration
				if c.ReadinessProbe != nil {
					rp = probePeriod(c.ReadinessProbe)
				}
				startup = append(startup, startupSteps(c.Name, time.Duration(rng.Float64()*float64(sp)), sp, plan.at[c.Name], rp)...)
			}
		}
		patched, err := sess.syncPodStatus(ctx, p.Namespace, p.Name, func(st *corev1.PodStatus) bool {
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
				// (prober/worker.go doProbe), so the flip comes at the
				// first probe (probe), not at this first sync, which finds
				// the status unchanged (measured on the hollow kubelet: 1
				// GET here, then GET+PATCH False and GET+PATCH True
				// milliseconds apart, at U(0, period) after start).
				plan.flip = true
			} else {
				// Readiness is preserved (KEP-4781); but if the node-lifecycle
				// controller marked the pod not ready while the node was away,
				// probed containers stay not ready until their probe passes
				// and the others are ready at once.
				if !wasReady {
					changed = setReadiness(st, func(c string) bool { return !probed(c) }, now)
				}
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
		if err != nil {
			return nil, err
		}
		if patched {
			s.Counters.PodStatusPatches.Add(1)
		}
		plans = append(plans, plan)
	}
	// Complete deletions the API server started while the node was away
	// (taint-based eviction, a scale-down).
	var deleted []*corev1.Pod
	for _, p := range sess.podStore.List() {
		if pod := p.(*corev1.Pod); pod.DeletionTimestamp != nil {
			deleted = append(deleted, pod)
		}
	}
	// The store lists in map order; a fixed order keeps runs repeatable.
	slices.SortFunc(deleted, func(a, b *corev1.Pod) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	if err := n.terminatePods(ctx, deleted); err != nil {
		return nil, err
	}
	return plans, nil
}

// terminatePods replays the kubelet finishing the deletions that started
// while it was away. Each pod's worker kills its containers (kuberuntime
// killContainer: a Killing event per running container), all pods at once,
// since every pod has a worker goroutine of its own (pod_workers.go). The
// status manager, one goroutine for all pods, then syncs each pod three
// times, a GET before each (status_manager.go syncPod):
//  1. the pod's first status after the restart (kubelet.go
//     SyncTerminatingPod, generateAPIPodStatus), before the kill: nothing
//     changed but the observed generation, which the graceful deletion
//     raised (pkg/api/v1/pod CalculatePodStatusObservedGeneration and
//     CalculatePodConditionObservedGeneration, PodObservedGenerationTracking):
//     status.observedGeneration and every condition's; the pod stays ready
//     as far as its Services are concerned (already terminating);
//  2. the containers terminated, the pod not ready and the terminal phase
//     (Succeeded or Failed) in one write, once the pod worker is done
//     (SyncTerminatedPod: SetPodStatus with the terminal phase; the
//     intermediate status of the kill, with the phase held back by
//     mergePodStatus while PodCouldHaveRunningContainers, is overtaken
//     before the status manager gets to it);
//  3. a sync with nothing to write, a GET and the DELETE: SyncTerminatedPod
//     waits for the volumes to be unmounted and then calls
//     statusManager.TerminatePod, whose status version says the pod is
//     finished, so canBeDeleted holds and the sync deletes the pod with
//     grace period 0 and the UID as precondition.
//
// The pods' first writes come before any pod's second one, as the status
// manager syncs the versions in the order the workers set them; the
// controllers then fold the pods' changes into fewer EndpointSlice and
// Endpoints writes than one pod after another would cause. The oracle
// (calibration case kubelet/deleted) measured 1.75 to 2 PATCHes per
// deleted pod, and on the hollow kubelet (audit log, 2026-12-02, 4 pods)
// GET, PATCH, GET, PATCH, GET, DELETE for 3 pods and GET, PATCH, GET,
// DELETE for one: now and then the status manager gets to a pod only after
// a later step and writes the steps as one.
func (n *nodeRun) terminatePods(ctx context.Context, pods []*corev1.Pod) error {
	s, sess := n.s, n.sess
	if len(pods) == 0 {
		return nil
	}
	now := metav1.NewTime(s.cfg.Clock.Now())
	for _, pod := range pods {
		for _, c := range pod.Status.ContainerStatuses {
			if c.State.Running == nil {
				continue
			}
			if _, err := sess.podEvent(ctx, pod, c.Name, "", 1, corev1.EventTypeNormal, "Killing", fmt.Sprintf("Stopping container %s", c.Name)); err != nil {
				return err
			}
		}
	}
	observed := func(generation int64) func(st *corev1.PodStatus) bool {
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
	terminal := func(st *corev1.PodStatus) bool {
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
	}
	sync := func(pod *corev1.Pod, mutate func(*corev1.PodStatus) bool) error {
		patched, err := sess.syncPodStatus(ctx, pod.Namespace, pod.Name, mutate)
		if patched {
			s.Counters.PodStatusPatches.Add(1)
		}
		return err
	}
	for _, pod := range pods {
		if err := sync(pod, observed(pod.Generation)); err != nil {
			return err
		}
	}
	for _, pod := range pods {
		if err := sync(pod, terminal); err != nil {
			return err
		}
		if err := sync(pod, func(*corev1.PodStatus) bool { return false }); err != nil {
			return err
		}
		uid := pod.UID
		zero := int64(0)
		err := sess.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero, Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("kubelet %s: deleting pod %s/%s: %w", sess.node, pod.Namespace, pod.Name, err)
		}
		s.Counters.PodsDeleted.Add(1)
	}
	return nil
}

// restartPod plans a pod's status after a reboot, as the kubelet on
// containerd writes it with a runtime that came back with every container
// exited and every sandbox not ready. The pod worker (kuberuntime SyncPod)
// hands the status manager four statuses, at offsets from the pods' first
// sync; the status manager writes them (syncStatuses):
//  1. at once: the containers terminated (exit 255, Unknown), the pod not
//     ready, PodReadyToStartContainers False, no pod IP; the worker then
//     records SandboxChanged and kills the old sandbox;
//  2. the new sandbox: PodReadyToStartContainers True, nothing else yet
//     (kuberuntime_manager.go SyncPod calls kubelet.go OnPodSandboxReady
//     after RunPodSandbox, which sets the status from a goroutine while the
//     containers are still being created);
//  3. the containers running again (restartCount+1, the old run as last
//     state; Pulled, Created and Started for each) with the new sandbox's
//     pod IP, probed ones not ready;
//  4. Ready, at the first successful readiness probe (rebootFirstProbe).
//
// Measured on the kubelet on containerd (audit log of a reboot calibration
// with bodies, 2 nodes × 8 pods, 2026-12-02): the sandboxes were ready 1.8
// to 3.3 s after the first write, one pod after another (rebootSandbox),
// the containers running 0.5 to 1.5 s after their sandbox
// (rebootContainers), and every pod got the four writes. With 5 pods per
// node the second and third were 0.2 to 0.6 s apart. When the status
// manager is behind, it writes what came meanwhile as one (syncStatuses):
// the hollow kubelet did so for most pods (2.7 to 3.4 writes per pod), and
// the kubelet on containerd in a CI run with other clusters on the same
// cores (3.1). jitters holds each readiness-probed container's worker
// sleep; index is the pod's place among the node's sandboxes.
func (n *nodeRun) restartPod(node *corev1.Node, p *corev1.Pod, jitters map[string]time.Duration, index int) []statusUpdate {
	s, sess := n.s, n.sess
	for _, v := range p.Spec.Volumes {
		if v.EmptyDir != nil && v.EmptyDir.Medium == corev1.StorageMediumMemory {
			s.Counters.MemoryEmptyDirsLost.Add(1)
		}
	}
	rng := s.rng(p.Namespace+"/"+p.Name, 5)
	sandbox := rebootSandboxBase + time.Duration((float64(index)+rng.Float64())*float64(rebootSandboxPerPod))
	running := sandbox + rebootContainersMin + time.Duration(rng.Float64()*float64(rebootContainersSpread))
	probed := func(c string) bool { _, ok := jitters[c]; return ok }
	ready := time.Duration(-1)
	for _, c := range p.Spec.Containers {
		if jitter, ok := jitters[c.Name]; ok {
			ready = max(ready, rebootFirstProbe(jitter, running, time.Duration(c.ReadinessProbe.InitialDelaySeconds)*time.Second, probePeriod(c.ReadinessProbe)))
		}
	}
	ns, name := p.Namespace, p.Name
	updates := []statusUpdate{
		{at: 0, ns: ns, name: name, mutate: func(st *corev1.PodStatus, now metav1.Time) bool {
			wasReady := podReady(st)
			changed := terminateContainers(st, 255, "Unknown", now)
			changed = setReadiness(st, func(string) bool { return false }, now) || changed
			changed = setCondition(st, corev1.PodReadyToStartContainers, corev1.ConditionFalse, "", now) || changed
			if st.PodIP != "" {
				st.PodIP, st.PodIPs = "", nil
				changed = true
			}
			if wasReady {
				s.Counters.ReadyFlipsDown.Add(1)
			}
			return changed
		}, events: func(ctx context.Context) error {
			_, err := sess.podEvent(ctx, p, "", "", 1, corev1.EventTypeNormal, "SandboxChanged", "Pod sandbox changed, it will be killed and re-created.")
			return err
		}},
		{at: sandbox, ns: ns, name: name, mutate: func(st *corev1.PodStatus, now metav1.Time) bool {
			return setCondition(st, corev1.PodReadyToStartContainers, corev1.ConditionTrue, "", now)
		}},
		{at: running, ns: ns, name: name, mutate: func(st *corev1.PodStatus, now metav1.Time) bool {
			changed := restartContainers(st, nil, 255, "Unknown", now)
			s.Counters.ContainerRestarts.Add(int64(len(st.ContainerStatuses)))
			markStarted(st)
			changed = setReadiness(st, func(c string) bool { return !probed(c) }, now) || changed
			if ip := sess.newPodIP(node); ip != "" {
				st.PodIP, st.PodIPs = ip, []corev1.PodIP{{IP: ip}}
				changed = true
			}
			if podReady(st) {
				s.Counters.ReadyFlipsUp.Add(1)
			}
			return changed
		}, events: func(ctx context.Context) error { return containerEvents(ctx, sess, p, nil) }},
	}
	if ready >= 0 {
		updates = append(updates, n.readyAtProbe(ns, name, ready))
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
//     convertToAPIContainerStatuses), so the pod is not ready. It is
//     returned as first, for the caller to write in the pod's turn among
//     the first syncs; the updates' offsets count from that write;
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
func (n *nodeRun) replacePod(p *corev1.Pod, jitters map[string]time.Duration, gone []string, legacy bool) (first func(*corev1.PodStatus, metav1.Time) bool, updates []statusUpdate) {
	s, sess := n.s, n.sess
	rng := s.rng(p.Namespace+"/"+p.Name, 6)
	running := replaceContainersMin + time.Duration(rng.Float64()*float64(replaceContainersSpread))
	isGone := func(c string) bool { return slices.Contains(gone, c) }
	ready := time.Duration(-1)
	for _, c := range p.Spec.Containers {
		jitter, probed := jitters[c.Name]
		switch {
		case !probed:
		case isGone(c.Name):
			ready = max(ready, rebootFirstProbe(jitter, running, time.Duration(c.ReadinessProbe.InitialDelaySeconds)*time.Second, probePeriod(c.ReadinessProbe)))
		case legacy:
			ready = max(ready, jitter)
		}
	}
	ns, name := p.Namespace, p.Name
	first = func(st *corev1.PodStatus, now metav1.Time) bool {
		wasReady := podReady(st)
		changed := false
		for i := range st.ContainerStatuses {
			cs := &st.ContainerStatuses[i]
			if !isGone(cs.Name) || cs.State.Running == nil {
				continue
			}
			f := false
			cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: 137, Reason: "Error", StartedAt: cs.State.Running.StartedAt, FinishedAt: now, ContainerID: cs.ContainerID,
			}}
			cs.Ready, cs.Started, changed = false, &f, true
		}
		keep := map[string]bool{}
		for _, cs := range st.ContainerStatuses {
			_, probed := jitters[cs.Name]
			keep[cs.Name] = cs.Ready && !isGone(cs.Name) && !(legacy && probed)
		}
		changed = setReadiness(st, func(c string) bool { return keep[c] }, now) || changed
		if wasReady && !podReady(st) {
			s.Counters.ReadyFlipsDown.Add(1)
		}
		return changed
	}
	updates = []statusUpdate{
		{at: running, ns: ns, name: name, mutate: func(st *corev1.PodStatus, now metav1.Time) bool {
			wasReady := podReady(st)
			changed := restartContainers(st, isGone, 137, "Error", now)
			s.Counters.ContainerRestarts.Add(int64(len(gone)))
			// Running without a startup probe: started; without a
			// readiness probe: ready at once (prober_manager.go
			// UpdatePodStatus). The others keep what they had.
			t := true
			readyNow := map[string]bool{}
			for i := range st.ContainerStatuses {
				cs := &st.ContainerStatuses[i]
				_, probed := jitters[cs.Name]
				if isGone(cs.Name) {
					cs.Started = &t
					readyNow[cs.Name] = !probed
					continue
				}
				readyNow[cs.Name] = cs.Ready
			}
			changed = setReadiness(st, func(c string) bool { return readyNow[c] }, now) || changed
			if !wasReady && podReady(st) {
				s.Counters.ReadyFlipsUp.Add(1)
			}
			return changed
		}, events: func(ctx context.Context) error { return containerEvents(ctx, sess, p, isGone) }},
	}
	if ready >= 0 {
		updates = append(updates, n.readyAtProbe(ns, name, ready))
	}
	return first, updates
}

// readyAtProbe is the status of a pod whose recreated containers pass
// their first readiness probe at: every container ready, if the pod still
// runs.
func (n *nodeRun) readyAtProbe(ns, name string, at time.Duration) statusUpdate {
	s := n.s
	return statusUpdate{at: at, ns: ns, name: name, mutate: func(st *corev1.PodStatus, now metav1.Time) bool {
		was := podReady(st)
		changed := st.Phase == corev1.PodRunning && setReadiness(st, func(string) bool { return true }, now)
		if !was && podReady(st) {
			s.Counters.ReadyFlipsUp.Add(1)
		}
		return changed
	}}
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

// rebootFirstProbe is when a readiness probe first passes on a container
// that starts running at running, for a worker that started with the
// kubelet and slept jitter first (prober/worker.go run). The worker's
// probes before then find no running container. When the container runs
// without a result, prober_manager.go UpdatePodStatus triggers a probe at
// once and the worker resets its ticker (worker.go run, manualTriggerCh);
// a trigger that comes while the worker still sleeps waits in the
// channel's buffer. A probe passes once initialDelay has gone by since the
// container started (worker.go doProbe). Measured on the kubelet on
// containerd (16 pods, period 10 s): half the pods were ready 0.15 to 0.5 s
// after their containers ran, the others 3 to 5 s after, when their
// worker's first tick came. The result comes rebootProbeLatency after the
// probe starts (the exec, and the prober's results channel to the status
// manager): the earliest measured Ready write came 0.15 s after the
// containers' one, so an idle status manager writes the two apart.
func rebootFirstProbe(jitter, running, initialDelay, period time.Duration) time.Duration {
	at := max(jitter, running)
	for at-running < initialDelay {
		at += period
	}
	return at + rebootProbeLatency
}

// rebootProbeLatency is how long after a probe of a recreated container
// starts its first Success reaches the status manager (rebootFirstProbe).
const rebootProbeLatency = 150 * time.Millisecond

// containerEvents are the pod events of starting a pod's containers again
// (those which says, every one for nil) after a reboot, or after they
// exited: for each init and app container Pulled (the image is present:
// images/image_manager.go), Created and Started (kuberuntime_container.go
// startContainer). With SandboxChanged (kuberuntime_manager.go SyncPod)
// the measured 25 events of a 5-pod reboot, 5 of them the node's.
func containerEvents(ctx context.Context, sess *session, p *corev1.Pod, which func(string) bool) error {
	for _, c := range append(append([]corev1.Container{}, p.Spec.InitContainers...), p.Spec.Containers...) {
		if which != nil && !which(c.Name) {
			continue
		}
		for _, e := range []struct{ reason, msg string }{
			{"Pulled", fmt.Sprintf("Container image %q already present on machine and can be accessed by the pod", c.Image)},
			{"Created", "Container created"},
			{"Started", "Container started"},
		} {
			if _, err := sess.podEvent(ctx, p, c.Name, "", 1, corev1.EventTypeNormal, e.reason, e.msg); err != nil {
				return err
			}
		}
	}
	return nil
}

// statusUpdate is one status a pod's worker or prober hands the status
// manager (status_manager.go SetPodStatus), at an offset from the pods'
// first sync. mutate applies it to the pod's status; events, when set, are
// what the worker records at that moment.
type statusUpdate struct {
	at       time.Duration
	ns, name string
	mutate   func(st *corev1.PodStatus, now metav1.Time) bool
	events   func(ctx context.Context) error
}

// syncStatuses plays the status manager over updates, measured from start.
// It runs in batches, as status_manager.go syncBatch does: a batch takes
// every pod with a status newer than the one it last wrote and syncs each
// (a GET and a PATCH) at its latest status, so what a pod's worker hands
// over while the status manager is busy with other pods goes out as one
// write (counted in Counters.StatusUpdatesCoalesced). A pod gone meanwhile
// is not an error; the first other error is returned at the end. The
// events of an update are sent when a batch first finds it due: on time
// while the status manager keeps up, with the batch when it is behind.
func (n *nodeRun) syncStatuses(ctx context.Context, start time.Time, updates []statusUpdate) error {
	s, sess := n.s, n.sess
	sort.SliceStable(updates, func(i, j int) bool { return updates[i].at < updates[j].at })
	var firstErr error
	for len(updates) > 0 {
		if err := poll.Sleep(ctx, s.cfg.Clock, updates[0].at-s.cfg.Clock.Since(start)); err != nil {
			return fmt.Errorf("kubelet %s: waiting for pod status: %w", sess.node, err)
		}
		now := s.cfg.Clock.Since(start)
		type key struct{ ns, name string }
		var order []key
		batch := map[key][]statusUpdate{}
		var rest []statusUpdate
		for _, u := range updates {
			if u.at > now {
				rest = append(rest, u)
				continue
			}
			k := key{u.ns, u.name}
			if _, ok := batch[k]; !ok {
				order = append(order, k)
			}
			batch[k] = append(batch[k], u)
			if u.events != nil {
				if err := u.events(ctx); err != nil && firstErr == nil {
					firstErr = err
				}
			}
		}
		for _, k := range order {
			us := batch[k]
			s.Counters.StatusUpdatesCoalesced.Add(int64(len(us) - 1))
			patched, err := sess.syncPodStatus(ctx, k.ns, k.name, func(st *corev1.PodStatus) bool {
				now := metav1.NewTime(s.cfg.Clock.Now())
				changed := false
				for _, u := range us {
					changed = u.mutate(st, now) || changed
				}
				return changed
			})
			if err != nil && !apierrors.IsNotFound(errors.Unwrap(err)) && firstErr == nil {
				firstErr = err
			}
			if patched {
				s.Counters.PodStatusPatches.Add(1)
			}
		}
		updates = rest
	}
	return firstErr
}

// probe waits for each planned first successful probe, measured from start
// (when the pods were first synced and their probe workers started), and
// writes the pod's readiness through the status manager (GET + PATCH) when
// it changes: a legacy flip writes Ready=False and then Ready=True. The
// statuses of pods recreated after a reboot, Ready among them, go through
// syncStatuses first.
func (n *nodeRun) probe(ctx context.Context, plans []probePlan, start time.Time) error {
	s, sess := n.s, n.sess
	ctx, cancel := context.WithTimeout(ctx, s.cfg.RecoveryTimeout)
	defer cancel()
	type step struct {
		at   time.Duration
		plan *probePlan
		// status, when set, is a startup step of plan (statusStep).
		status *statusStep
	}
	var steps []step
	var updates []statusUpdate // a reboot's, for the status manager
	for i := range plans {
		updates = append(updates, plans[i].updates...)
		if len(plans[i].steps) > 0 {
			for j := range plans[i].steps {
				steps = append(steps, step{plans[i].steps[j].at, &plans[i], &plans[i].steps[j]})
			}
			continue
		}
		if !plans[i].notReady && !plans[i].flip {
			continue
		}
		var last time.Duration
		for _, d := range plans[i].at {
			last = max(last, d)
		}
		steps = append(steps, step{at: last, plan: &plans[i]})
	}
	sort.SliceStable(steps, func(i, j int) bool { return steps[i].at < steps[j].at })
	var firstErr error
	if len(updates) > 0 {
		firstErr = n.syncStatuses(ctx, start, updates)
	}
	// write is one sync of the status manager; a pod gone meanwhile is
	// not an error, and the first other error is returned at the end.
	write := func(plan *probePlan, mutate func(ps *corev1.PodStatus, now metav1.Time) bool) {
		patched, err := sess.syncPodStatus(ctx, plan.ns, plan.name, func(ps *corev1.PodStatus) bool {
			return mutate(ps, metav1.NewTime(s.cfg.Clock.Now()))
		})
		if err != nil && !apierrors.IsNotFound(errors.Unwrap(err)) && firstErr == nil {
			firstErr = err
		}
		if patched {
			s.Counters.PodStatusPatches.Add(1)
		}
	}
	// flips counts the pod's readiness transitions across a write.
	flips := func(mutate func(ps *corev1.PodStatus, now metav1.Time) bool) func(ps *corev1.PodStatus, now metav1.Time) bool {
		return func(ps *corev1.PodStatus, now metav1.Time) bool {
			was := podReady(ps)
			changed := mutate(ps, now)
			if was && !podReady(ps) {
				s.Counters.ReadyFlipsDown.Add(1)
			}
			if !was && podReady(ps) {
				s.Counters.ReadyFlipsUp.Add(1)
			}
			return changed
		}
	}
	for _, st := range steps {
		if err := poll.Sleep(ctx, s.cfg.Clock, st.at-s.cfg.Clock.Since(start)); err != nil {
			return fmt.Errorf("kubelet %s: waiting to probe: %w", sess.node, err)
		}
		if st.status != nil {
			step := *st.status
			write(st.plan, flips(func(ps *corev1.PodStatus, now metav1.Time) bool {
				return ps.Phase == corev1.PodRunning && applyStatusStep(ps, step, now)
			}))
			continue
		}
		// The first successful probe: the pod is ready again.
		success := func(ps *corev1.PodStatus, now metav1.Time) bool {
			if ps.Phase != corev1.PodRunning {
				return false
			}
			changed := setReadiness(ps, func(string) bool { return true }, now)
			markStarted(ps)
			return changed
		}
		if st.plan.flip {
			// The worker's seeded Failure, then the Success about one exec
			// later (prober/worker.go doProbe).
			probed := st.plan.at
			failure := func(ps *corev1.PodStatus, now metav1.Time) bool {
				return setReadiness(ps, func(c string) bool { _, ok := probed[c]; return !ok }, now)
			}
			if sess.statusIdleAt.Load() > start.Add(st.at).UnixNano() {
				// Both came while the status manager was busy syncing
				// other statuses: its next batch writes the pod's latest
				// cached status (status_manager.go syncBatch), both updates
				// applied, so the flip never reaches the API server, only
				// Ready and ContainersReady with a new lastTransitionTime
				// (updateLastTransitionTime against the cached False).
				s.Counters.ReadyFlipsCoalesced.Add(1)
				write(st.plan, flips(func(ps *corev1.PodStatus, now metav1.Time) bool {
					f := failure(ps, now)
					return success(ps, now) || f
				}))
				continue
			}
			// An idle status manager wakes on the Failure and writes it.
			write(st.plan, flips(failure))
		}
		write(st.plan, flips(success))
	}
	return firstErr
}

// applyStatusStep sets one container's started and ready state and the
// pod's conditions from every container's readiness.
func applyStatusStep(st *corev1.PodStatus, step statusStep, now metav1.Time) bool {
	changed := false
	ready := map[string]bool{}
	for i := range st.ContainerStatuses {
		cs := &st.ContainerStatuses[i]
		ready[cs.Name] = cs.Ready
		if cs.Name != step.container {
			continue
		}
		ready[cs.Name] = step.ready
		if step.setStarted && (cs.Started == nil || *cs.Started != step.started) {
			v := step.started
			cs.Started = &v
			changed = true
		}
	}
	return setReadiness(st, func(c string) bool { return ready[c] }, now) || changed
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
