package plan

import (
	"fmt"
	"math/rand/v2"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// A kubelet's start once its informers have synced: the node-level start-up, the pods' first syncs, and the process start-up before it all.

// StartInput is what a starting kubelet's plan is decided from once its
// informers have synced (Start).
type StartInput struct {
	// Start decides the node-level start-up (planNodeStart).
	Start NodeStart
	// NodeObj is the node as the kubelet's informer has it: admission's
	// re-run reads its allocatable, and a reboot's pod IPs its CIDR.
	NodeObj *corev1.Node
	// Pods are the live pods the pod source lists (session.pods);
	// Deleted those whose deletion started while the kubelet was away
	// (session.deletedPods). Both by namespace and name.
	Pods, Deleted []*corev1.Pod
	// Exited are the containers that exited while the kubelet was down,
	// by "ns/pod".
	Exited map[string][]string
	// Rebooted says every container was stopped.
	Rebooted bool
	// InitDuration is the NotReady flash's length (Config.InitDuration);
	// 0: none.
	InitDuration time.Duration
	// Legacy is ChangeContainerStatusOnKubeletRestart.
	Legacy bool
	// Release is what the kubelet's release does differently.
	Release Release
	// Seed draws the kubelet's jitter.
	Seed Seed
}

// Start plans a kubelet's start once its informers have synced, in
// the kubelet's order. The node actor: the node-level start-up
// (planNodeStart); the watches of the objects the pods reference and
// their tokens, after which the pod source counts as synced; the pods'
// first syncs (planPods) and the deleted pods' (planDeletions); and the
// end of a NotReady flash. The pods actor, once the first syncs are over:
// the status writes that follow them, and the deleted pods' ends.
//
// Pod sync does not wait for a NotReady flash to end. The flash is the
// first node status going out before the runtime check's first pass
// (kubelet.go Run starts updateRuntimeUp at once; the status setter's
// runtimeErrors says "container runtime status check may not have
// completed yet" until then), and syncLoop skips pod work only while that
// check has not passed (kubelet.go syncLoop "Skipping pod
// synchronization"): a few milliseconds, against the node's NotReady until
// its next status update. So the status manager and the probers
// (ActorPods) run beside the flash (ActorNode; kubelet.go Run starts them
// before syncLoop). The flash ends InitDuration after the pods' first
// syncs are done.
func Start(in StartInput) Plan {
	plan := planNodeStart(in.Start)
	plan = append(plan,
		Step{Actor: ActorNode, Action: ActionObjectWatches, Pods: in.Pods},
		Step{Actor: ActorNode, Action: ActionTokens, Pods: in.Pods},
		Step{Actor: ActorNode, Action: ActionPodsSynced, Pods: in.Pods})
	if in.Rebooted {
		plan = append(plan, Step{Actor: ActorNode, Action: ActionPodIPs})
	}
	plan = append(plan, Step{Actor: ActorNode, Action: ActionMark, Mark: MarkPodSync})
	syncs, later := planPods(in)
	deletions, ends := planDeletions(in.Deleted, in.Seed)
	plan = append(append(plan, syncs...), deletions...)
	plan = append(plan, Step{Actor: ActorNode, Action: ActionMark, Mark: MarkSyncsDone})
	if in.InitDuration > 0 {
		plan = append(plan,
			Step{At: in.InitDuration, From: MarkSyncsDone, Actor: ActorNode, Action: ActionNodeStatus, Ready: true, Reason: reasonReady, Message: messageReady},
			// NodeReady is recorded on the transition only
			// (nodestatus/setters.go ReadyCondition).
			Step{At: in.InitDuration, From: MarkSyncsDone, Actor: ActorNode, Action: ActionNodeEvent, EventType: corev1.EventTypeNormal, Reason: "NodeReady", Message: fmt.Sprintf("Node %s status is now: NodeReady", in.Start.Node)})
	}
	// The pods actor starts once the first syncs are over.
	plan = append(plan, Step{From: MarkSyncsDone, Actor: ActorPods, Action: ActionWait})
	return append(append(plan, ends...), later...)
}

// ProcessStart is a kubelet process's start-up, from its exec to its
// first request, which nothing precedes. In
// v1.36.3 that is cmd/kubelet/app/server.go: the command's flag and config
// loading and UnsecuredDependencies, then run: buildKubeletClientConfig and
// the clients, BuildAuth, kubelet.PreInitRuntimeService (the CRI
// connection) and getCgroupDriverFromCRI, cadvisor.New,
// cm.NewContainerManager; then RunKubelet → createAndInitKubelet →
// NewMainKubelet (pkg/kubelet/kubelet.go), whose informers
// (kubeInformers.Start) send the first requests; registration, the lease
// and the pods follow from Kubelet.Run.
//
// The wait is drawn per restart from rng, uniform in
// [processStartMin, processStartMin+processStartSpread). Measured with the
// calibration's restarts staggered (calibrate --stagger 1s: one real
// kubelet starting at a time), on the v1.36.3 kubelet on containerd, the
// reference: its first request came 0.29 to 0.43 s after its exec, median
// 0.32 s (15 restarts: kubelet/legacy, kubelet/preserve and
// kubelet/preserve+tcp, 5 nodes each); this draw spans 0.28 to 0.38 s,
// median 0.33 s. A fixed value would start every kubelet of a wave on the
// same millisecond. The hollow kubelet starts faster, 0.11 to 0.25 s in
// the same runs: its stub container manager and fake cAdvisor skip
// cadvisor.New's and NewContainerManager's host probing, which a kubelet
// on a real node does. With ten real kubelets started at once on a
// 2-core machine the start-up took 0.5 to 1.4 s: that is the oracle's
// host, not the kubelet's, and the model's host is not the node's.
func ProcessStart(rng *rand.Rand) time.Duration {
	return processStartMin + time.Duration(rng.Float64()*float64(processStartSpread))
}

// A kubelet process's start-up lasts processStartMin plus up to
// processStartSpread (ProcessStart).
const (
	processStartMin    = 280 * time.Millisecond
	processStartSpread = 100 * time.Millisecond
)

// NodeStart is what decides a starting kubelet's node-level start-up once
// its informers have synced.
type NodeStart struct {
	Node string
	// Flash: the first node status is NotReady (Config.InitDuration > 0).
	Flash bool
	// BootID is the machine's new boot ID after a reboot; "" after a
	// kubelet restart.
	BootID string
}

// planNodeStart plans the node-level start-up after the informers' sync
// (Start's first steps), every step at once and in the kubelet's
// order, for the node actor:
//   - the first node status, right after registration, beside pod sync
//     (kubelet_node_status.go fastStatusUpdateOnce, syncNodeStatus): with
//     the runtime already up it reports Ready, so a node that was Ready
//     stays Ready (measured on the hollow kubelet: one PATCH of
//     nodes/status, no Ready transition). A flash (kubernetes#124397)
//     reports NotReady instead, until the runtime, network and PLEG checks
//     pass (setNodeReadyCondition); Start plans its end;
//   - the CSINode (volume/csi/csi_plugin.go, nodeinfomanager);
//   - the ResourceSlice wipe (cm/dra/plugin/dra_plugin_manager.go);
//   - the start-up events (startupEvents), Rebooted too after a reboot.
func planNodeStart(in NodeStart) Plan {
	status := Step{Actor: ActorNode, Action: ActionNodeStatus, Ready: true, Reason: reasonReady, Message: messageReady}
	if in.Flash {
		status.Ready, status.Reason, status.Message = false, reasonNotReady, "container runtime status check may not have completed yet"
	}
	plan := Plan{status, {Actor: ActorNode, Action: ActionCSINode}, {Actor: ActorNode, Action: ActionResourceSliceWipe}}
	for _, e := range startupEvents(in.Node, in.BootID) {
		plan = append(plan, Step{Actor: ActorNode, Action: ActionNodeEvent, EventType: e.typ, Reason: e.reason, Message: e.msg})
	}
	return plan
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

// BootID returns a random boot ID, formatted as the kernel's (a UUID).
func BootID(rng *rand.Rand) string {
	var b [16]byte
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // variant
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// The Ready condition's reasons and messages (nodestatus/setters.go
// ReadyCondition).
const (
	reasonReady    = "KubeletReady"
	messageReady   = "kubelet is posting ready status"
	reasonNotReady = "KubeletNotReady"
)

// planPods plans the pods' part of a start (Start): for the node
// actor, each live pod's first sync in the kubelet's order (admission's
// re-run rejecting it, or the status manager's first sync, decided as
// data); for the pods actor, what follows: the statuses of pods recreated
// after a reboot or replaced after their containers exited, a startup
// probe's writes, and each pod's first successful probe.
func planPods(in StartInput) (syncs, later Plan) {
	rng := in.Seed.Rng(in.Start.Node, 1)
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
			var startup []StatusStep
			if in.Legacy {
				startup = legacyStartupSteps(p, at, rng)
			}
			sync.Startup = len(startup) > 0
			syncs = append(syncs, sync)
			for _, st := range startup {
				later = append(later, Step{
					At: st.At, From: MarkPodSync, Actor: ActorPods, Action: ActionPodStartup, Namespace: p.Namespace, Name: p.Name,
					Container: st.Container, Ready: st.Ready, Started: st.Started, SetStarted: st.SetStarted,
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
func updateSteps(updates []StatusUpdate, from Mark) Plan {
	var steps Plan
	for i := range updates {
		u := &updates[i]
		steps = append(steps, Step{At: u.At, From: from, Actor: ActorPods, Action: ActionPodStatus, Namespace: u.Pod.Namespace, Name: u.Pod.Name, Update: u})
	}
	return steps
}
