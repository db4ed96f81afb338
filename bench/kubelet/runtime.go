package kubelet

// This file holds a container-runtime restart: the kubelet stays up.

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/stormbench/stormbench/bench/cluster"
	"github.com/stormbench/stormbench/bench/kubelet/plan"
	"github.com/stormbench/stormbench/bench/storm"
	"github.com/stormbench/stormbench/profiles"
)

// runtimeRestart: the container runtime is down for the downtime while the
// kubelet stays up and keeps its lease. As the real kubelet did with a
// refused runtime socket (measured on the hollow kubelet, 50 s outages):
//   - exec probes error (probe.Unknown: prober.go runProbe), so readiness
//     and liveness are untouched; each errored probe records a Warning
//     "Unhealthy ... probe errored" event, which the event correlator
//     PATCHes (count+1) from its second occurrence;
//   - after runtimeDownAfter, at the next node status sync, the node
//     reports NotReady "container runtime is down"; once the runtime is
//     back, Ready again at the next runtime check and status sync;
//   - no pod status changes: the containers kept running (shims).
//
// A hung runtime (profiles.RuntimeHung): its calls block (up to the CRI timeout, 2
// minutes) instead of failing, so exec probes record no event; the node
// still reports NotReady, later (hungDownAfter), and Ready once the
// runtime answers again (measured in 50 s hangs: NotReady at about 45 s in
// one of 13, Ready within seconds of SIGCONT). Hangs beyond the CRI
// timeout are not calibrated.
func (s *Simulator) runtimeRestart(ctx context.Context, r storm.Restart, node *corev1.Node) error {
	// Harness: KWOK must stop writing this node's status while the
	// simulated kubelet stands in for it; heartbeats continue from here.
	if err := s.setKubeletLabel(ctx, r.Node, cluster.KubeletDown); err != nil {
		return err
	}
	s.record(r, storm.StepDown)
	n, err := s.openSession(ctx, r)
	if err != nil {
		return err
	}
	defer n.close()
	n.sess.knownNode = node
	start := s.cfg.Clock.Now()
	rng := s.rng(r.Node, 2)
	// The kubelet's lease controller goes on while the runtime is down:
	// it holds its lease, so it renews it (UPDATE, no GET) at its own
	// phase of the renew interval. The harness reads the lease to know
	// what the kubelet knows.
	lease := s.readLease(ctx, r.Node)
	n.startLease(ctx, lease, time.Duration(rng.Float64()*float64(defaultLeaseDuration/4)))
	// The kubelet is up and its pod cache warm: it sends no LIST; the
	// harness reads the node's pods to know what the kubelet probes.
	pods, err := s.listNodePods(ctx, r.Node)
	if err != nil {
		return err
	}
	plan := plan.RuntimeOutage(plan.Outage{
		Hung:     s.cfg.RuntimeMode == profiles.RuntimeHung,
		Downtime: r.Downtime,
		Version:  node.Status.NodeInfo.ContainerRuntimeVersion,
		Node:     r.Node,
		Pods:     pods,
	}, rng, s.rng(r.Node, 4))
	if err := n.play(ctx, node, start, plan, nil); err != nil {
		return err
	}
	return n.recover(ctx)
}
