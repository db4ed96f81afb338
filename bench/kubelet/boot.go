package kubelet

// This file holds a kubelet start: a kubelet restart and a reboot, both
// ending in boot, which plays the handshake and then the start's plan.

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/stormbench/stormbench/bench/kubelet/plan"
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
// nothing until its process start-up (plan.ProcessStart) is over. Then come
// the handshakes (registration, the lease, the informers' lists and
// watches, volume reconstruction), played as the API server answers; what
// follows is one plan (plan.Start), decided from what they brought, and
// played once.
func (s *Simulator) boot(ctx context.Context, r storm.Restart, rebooted bool) error {
	s.record(r, storm.StepKubeletStart)
	exec := s.cfg.Clock.Now()
	n, err := s.openSession(ctx, r)
	if err != nil {
		return err
	}
	defer n.close()
	if err := poll.SleepUntil(ctx, s.cfg.Clock, exec.Add(plan.ProcessStart(s.rng(r.Node, 7)))); err != nil {
		return fmt.Errorf("process start-up: %w", err)
	}
	sess := n.sess
	// The prober's start, which its restart grace period counts back from
	// (flipsOnRestart), is taken in NewMainKubelet
	// (prober/prober_manager.go NewManager), after the start-up.
	sess.started = s.cfg.Clock.Now()
	in := plan.StartInput{
		Start:    plan.NodeStart{Node: r.Node, Flash: s.cfg.InitDuration > 0},
		Rebooted: rebooted, InitDuration: s.cfg.InitDuration,
		Legacy: s.gate(profiles.GateChangeContainerStatusOnKubeletRestart), Release: plan.ReleaseOf(s.cfg.Version), Seed: s.seed(),
	}
	if rebooted {
		// A reboot gives the machine a new boot ID
		// (/proc/sys/kernel/random/boot_id, read by cAdvisor): the first
		// node status patch reports it (nodestatus/setters.go MachineInfo).
		in.Start.BootID = plan.BootID(s.rng(r.Node, 3))
		sess.newBootID = in.Start.BootID
	}
	if in.NodeObj, err = n.handshake(ctx); err != nil {
		return err
	}
	in.Pods, in.Deleted = sess.pods(), sess.deletedPods()
	// Containers that exited while the kubelet was down (ExitContainer); a
	// reboot ends them all anyway.
	in.Exited = s.takeExited(r.Node)
	return n.recoverPlaying(ctx, in.NodeObj, s.cfg.Clock.Now(), plan.Start(in))
}

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
