package kubelet

// This file holds a kubelet start: a kubelet restart and a reboot, both
// ending in boot, and the pod steps of the kubelet's first sync and probes.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/stormbench/stormbench/bench/storm"
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
// nothing until its process start-up (planProcessStart) is over.
func (s *Simulator) boot(ctx context.Context, r storm.Restart, rebooted bool) error {
	s.record(r, storm.StepKubeletStart)
	exec := s.cfg.Clock.Now()
	n, err := s.openSession(ctx, r)
	if err != nil {
		return err
	}
	defer n.close()
	// The start-up's plan only waits: it needs no node object.
	if err := n.play(ctx, nil, exec, planProcessStart(s.rng(r.Node, 7)), nil); err != nil {
		return fmt.Errorf("process start-up: %w", err)
	}
	sess := n.sess
	// The prober's start, which its restart grace period counts back from
	// (flipsOnRestart), is taken in NewMainKubelet
	// (prober/prober_manager.go NewManager), after the start-up.
	sess.started = s.cfg.Clock.Now()
	newBoot := ""
	if rebooted {
		// A reboot gives the machine a new boot ID
		// (/proc/sys/kernel/random/boot_id, read by cAdvisor): the first
		// node status patch reports it (nodestatus/setters.go MachineInfo).
		newBoot = bootID(s.rng(r.Node, 3))
		sess.newBootID = newBoot
	}
	nodeObj, err := n.startNode(ctx, newBoot)
	if err != nil {
		return err
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
	s.recorder(r).Synced(len(pods))
	if s.cfg.CloseWatchesAfterSync {
		sess.stopWatches()
	}
	// The status manager syncs every pod once after start (its cache is
	// empty), and the prober decides readiness.
	podSync := s.cfg.Clock.Now()
	plans, ends, err := n.startPods(ctx, nodeObj, pods, rebooted)
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
	// (ActorPods) run beside the flash (ActorNode; kubelet.go Run starts
	// them before syncLoop). The flash ends InitDuration after the pods'
	// first sync is done.
	plan := planProbes(plans, ends)
	if s.cfg.InitDuration > 0 {
		at := s.cfg.Clock.Since(podSync) + s.cfg.InitDuration
		plan = append(plan,
			Step{At: at, Actor: ActorNode, Action: ActionNodeStatus, Ready: true, Reason: reasonReady, Message: messageReady},
			// NodeReady is recorded on the transition only
			// (nodestatus/setters.go ReadyCondition).
			Step{At: at, Actor: ActorNode, Action: ActionNodeEvent, EventType: corev1.EventTypeNormal, Reason: "NodeReady", Message: fmt.Sprintf("Node %s status is now: NodeReady", r.Node)})
	}
	return n.recoverPlaying(ctx, nodeObj, podSync, plan)
}

// planProcessStart plans a kubelet process's start-up, from its exec to its
// first request: one wait of the node actor, which nothing precedes. In
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
func planProcessStart(rng *rand.Rand) Plan {
	at := processStartMin + time.Duration(rng.Float64()*float64(processStartSpread))
	return Plan{{At: at, Actor: ActorNode, Action: ActionWait}}
}

// A kubelet process's start-up lasts processStartMin plus up to
// processStartSpread (planProcessStart).
const (
	processStartMin    = 280 * time.Millisecond
	processStartSpread = 100 * time.Millisecond
)

// startNode replays a starting kubelet's node-level start-up, up to its
// pods: registration, the lease controller, the informers' sync and
// volume reconstruction, which depend on what the API server answers;
// then the planned rest (planNodeStart): the first node status (Ready, or
// NotReady for a flash), the CSINode, the ResourceSlice wipe and the
// start-up events (Rebooted too, with newBoot). It returns the node as
// the kubelet's informer has it.
func (n *nodeRun) startNode(ctx context.Context, newBoot string) (*corev1.Node, error) {
	s, sess := n.s, n.sess
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
	nodeObj := node.(*corev1.Node)
	plan := planNodeStart(nodeStart{Node: n.r.Node, Flash: s.cfg.InitDuration > 0, BootID: newBoot})
	if err := n.play(ctx, nodeObj, s.cfg.Clock.Now(), plan, nil); err != nil {
		return nil, err
	}
	return nodeObj, nil
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

// planNodeStart plans the node-level start-up after the informers' sync,
// every step at once and in the kubelet's order, for the node actor:
//   - the first node status, right after registration, beside pod sync
//     (kubelet_node_status.go fastStatusUpdateOnce, syncNodeStatus): with
//     the runtime already up it reports Ready, so a node that was Ready
//     stays Ready (measured on the hollow kubelet: one PATCH of
//     nodes/status, no Ready transition). A flash (kubernetes#124397)
//     reports NotReady instead, until the runtime, network and PLEG checks
//     pass (setNodeReadyCondition); boot plans its end;
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
