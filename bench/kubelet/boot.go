package kubelet

// This file holds a kubelet start: a kubelet restart and a reboot, both
// ending in boot, and the pod steps of the kubelet's first sync and probes.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	corev1 "k8s.io/api/core/v1"

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
// container was stopped. The kubelet starts as a process does: it sends
// nothing until its process start-up (processStart) is over. Then come
// the handshakes (registration, the lease, the informers' lists and
// watches, volume reconstruction), played as the API server answers; what
// follows is one plan (planStart), decided from what they brought, and
// played once.
func (s *Simulator) boot(ctx context.Context, r storm.Restart, rebooted bool) error {
	s.record(r, storm.StepKubeletStart)
	exec := s.cfg.Clock.Now()
	n, err := s.openSession(ctx, r)
	if err != nil {
		return err
	}
	defer n.close()
	if err := poll.SleepUntil(ctx, s.cfg.Clock, exec.Add(processStart(s.rng(r.Node, 7)))); err != nil {
		return fmt.Errorf("process start-up: %w", err)
	}
	sess := n.sess
	// The prober's start, which its restart grace period counts back from
	// (flipsOnRestart), is taken in NewMainKubelet
	// (prober/prober_manager.go NewManager), after the start-up.
	sess.started = s.cfg.Clock.Now()
	in := startInput{
		Start:    nodeStart{Node: r.Node, Flash: s.cfg.InitDuration > 0},
		Rebooted: rebooted, InitDuration: s.cfg.InitDuration,
		Legacy: s.gate(profiles.GateChangeContainerStatusOnKubeletRestart), Release: releaseOf(s.cfg.Version), Seed: s.seed(),
	}
	if rebooted {
		// A reboot gives the machine a new boot ID
		// (/proc/sys/kernel/random/boot_id, read by cAdvisor): the first
		// node status patch reports it (nodestatus/setters.go MachineInfo).
		in.Start.BootID = bootID(s.rng(r.Node, 3))
		sess.newBootID = in.Start.BootID
	}
	if in.NodeObj, err = n.handshake(ctx); err != nil {
		return err
	}
	in.Pods, in.Deleted = sess.pods(), sess.deletedPods()
	// Containers that exited while the kubelet was down (ExitContainer); a
	// reboot ends them all anyway.
	in.Exited = s.takeExited(r.Node)
	return n.recoverPlaying(ctx, in.NodeObj, s.cfg.Clock.Now(), planStart(in))
}

// startInput is what a starting kubelet's plan is decided from once its
// informers have synced (planStart).
type startInput struct {
	// Start decides the node-level start-up (planNodeStart).
	Start nodeStart
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
	Release release
	// Seed draws the kubelet's jitter.
	Seed seed
}

// planStart plans a kubelet's start once its informers have synced, in
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
func planStart(in startInput) Plan {
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

// processStart is a kubelet process's start-up, from its exec to its
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
func processStart(rng *rand.Rand) time.Duration {
	return processStartMin + time.Duration(rng.Float64()*float64(processStartSpread))
}

// A kubelet process's start-up lasts processStartMin plus up to
// processStartSpread (processStart).
const (
	processStartMin    = 280 * time.Millisecond
	processStartSpread = 100 * time.Millisecond
)

// handshake replays a starting kubelet's start-up up to its plan:
// registration, the lease controller, the informers' sync and volume
// reconstruction, which depend on what the API server answers. It returns
// the node as the kubelet's informer has it.
func (n *nodeRun) handshake(ctx context.Context) (*corev1.Node, error) {
	sess := n.sess
	if err := sess.register(ctx); err != nil {
		return nil, err
	}
	// The lease controller runs from here on, beside the informers' sync
	// (kubelet.go Run); it stops when the node goes back to KWOK.
	n.startLease(ctx, nil, 0)
	if err := sess.startInformers(ctx); err != nil {
		return nil, err
	}
	// The volume manager starts beside registration (kubelet.go Run); the
	// model knows the pods on disk once the pod informer has synced, so its
	// GET comes that much later than the real one.
	if err := sess.reconstructVolumes(ctx); err != nil {
		return nil, fmt.Errorf("kubelet %s: volume reconstruction: %w", n.r.Node, err)
	}
	node, ok, _ := sess.nodeInf.GetStore().GetByKey(n.r.Node)
	if !ok {
		return nil, fmt.Errorf("kubelet %s: own node not in its informer", n.r.Node)
	}
	return node.(*corev1.Node), nil
}

// nodeStart is what decides a starting kubelet's node-level start-up once
// its informers have synced.
type nodeStart struct {
	Node string
	// Flash: the first node status is NotReady (Config.InitDuration > 0).
	Flash bool
	// BootID is the machine's new boot ID after a reboot; "" after a
	// kubelet restart.
	BootID string
}

// planNodeStart plans the node-level start-up after the informers' sync
// (planStart's first steps), every step at once and in the kubelet's
// order, for the node actor:
//   - the first node status, right after registration, beside pod sync
//     (kubelet_node_status.go fastStatusUpdateOnce, syncNodeStatus): with
//     the runtime already up it reports Ready, so a node that was Ready
//     stays Ready (measured on the hollow kubelet: one PATCH of
//     nodes/status, no Ready transition). A flash (kubernetes#124397)
//     reports NotReady instead, until the runtime, network and PLEG checks
//     pass (setNodeReadyCondition); planStart plans its end;
//   - the CSINode (volume/csi/csi_plugin.go, nodeinfomanager);
//   - the ResourceSlice wipe (cm/dra/plugin/dra_plugin_manager.go);
//   - the start-up events (startupEvents), Rebooted too after a reboot.
func planNodeStart(in nodeStart) Plan {
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
