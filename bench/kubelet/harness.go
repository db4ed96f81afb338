package kubelet

// This file holds the harness's actions: what stormbench does around a
// simulated kubelet that no kubelet does (relabelling a node so KWOK lets go
// of it or takes it back, changing it while it is down, cordon and drain,
// reading what a running kubelet already knows). They go out on the
// harness's client, counted apart from the kubelet's requests.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/stormbench/stormbench/bench/cluster"
	"github.com/stormbench/stormbench/bench/fleet"
	"github.com/stormbench/stormbench/bench/poll"
	"github.com/stormbench/stormbench/bench/storm"
)

// setKubeletLabel is a harness action: relabelling the node makes KWOK stop
// (down) or resume (up) its heartbeats.
func (s *Simulator) setKubeletLabel(ctx context.Context, node, value string) error {
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, cluster.KubeletLabel, value)
	// Harness requests retry transient failures with backoff (client-go
	// already waits out a 429's Retry-After).
	err := retryTransient(ctx, s.cfg.Clock, time.Time{}, nil, settlingAuth(s.cfg.Clock, func() error {
		_, err := s.cfg.Harness.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		return err
	}))
	if err != nil {
		return fmt.Errorf("relabelling node %s %s=%s: %w", node, cluster.KubeletLabel, value, err)
	}
	if value == cluster.KubeletDown {
		s.relabelledDown.Store(node, s.cfg.Clock.Now())
	}
	return nil
}

// applyNodeChanges is a harness action standing in for an operator changing
// the node while it is down.
func (s *Simulator) applyNodeChanges(ctx context.Context, node *corev1.Node) error {
	nc := s.cfg.NodeChanges
	if nc == nil {
		return nil
	}
	n, err := s.cfg.Harness.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	for k, v := range nc.SetLabels {
		n.Labels[k] = v
	}
	for _, k := range nc.RemoveLabels {
		if k == fleet.RunLabel || k == cluster.KubeletLabel {
			continue
		}
		delete(n.Labels, k)
	}
	for _, t := range nc.AddTaints {
		n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: t.Key, Value: t.Value, Effect: corev1.TaintEffect(t.Effect)})
	}
	_, err = s.cfg.Harness.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
	if err != nil {
		return fmt.Errorf("changing node %s during downtime: %w", node.Name, err)
	}
	return nil
}

// readLease is a harness read: the node's lease as it stands, for a
// kubelet that is already running and knows it; nil if it cannot be read.
func (s *Simulator) readLease(ctx context.Context, node string) *coordinationv1.Lease {
	lease, err := s.cfg.Harness.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		return nil
	}
	return lease
}

// listNodePods is a harness read: the node's pods, from the watch cache,
// for a kubelet whose pod cache is warm.
func (s *Simulator) listNodePods(ctx context.Context, node string) ([]corev1.Pod, error) {
	list, err := s.cfg.Harness.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node, ResourceVersion: "0"})
	if err != nil {
		return nil, fmt.Errorf("listing pods of %s: %w", node, err)
	}
	return list.Items, nil
}

// down stops the node's heartbeats for the downtime.
func (s *Simulator) down(ctx context.Context, r storm.Restart, node *corev1.Node) error {
	if err := s.setKubeletLabel(ctx, r.Node, cluster.KubeletDown); err != nil {
		return err
	}
	s.record(r, storm.StepDown)
	s.nodeDown(r.Node)
	if err := s.applyNodeChanges(ctx, node); err != nil {
		return err
	}
	return poll.Sleep(ctx, s.cfg.Clock, r.Downtime)
}

// cordon is a harness action (kubectl cordon/uncordon).
func (s *Simulator) cordon(ctx context.Context, node string, on bool) error {
	patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"unschedulable": on}})
	if _, err := s.cfg.Harness.CoreV1().Nodes().Patch(ctx, node, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("cordoning node %s: %w", node, err)
	}
	return nil
}

// drain is a harness action (kubectl drain): evict every non-DaemonSet pod
// through the Eviction API, which honours PodDisruptionBudgets (429 means
// retry later), and wait until they are gone.
func (s *Simulator) drain(ctx context.Context, node string) error {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.RecoveryTimeout)
	defer cancel()
	list, err := s.cfg.Harness.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
	if err != nil {
		return fmt.Errorf("draining %s: listing pods: %w", node, err)
	}
	for _, p := range list.Items {
		if isDaemonSetPod(&p) || p.DeletionTimestamp != nil {
			continue
		}
		if err := s.evict(ctx, node, &p); err != nil {
			return err
		}
	}
	gone := poll.Wait{Clock: s.cfg.Clock, Interval: time.Second, What: "draining " + node + ": waiting for evicted pods to go"}
	return gone.Until(ctx, func(ctx context.Context) (bool, string, error) {
		l, err := s.cfg.Harness.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
		if err != nil {
			return false, err.Error(), nil
		}
		left := 0
		for i := range l.Items {
			if !isDaemonSetPod(&l.Items[i]) {
				left++
			}
		}
		return left == 0, fmt.Sprintf("%d pods left", left), nil
	})
}

// evict evicts one pod, again every 2 s while a PodDisruptionBudget
// refuses it (429), as kubectl drain does.
func (s *Simulator) evict(ctx context.Context, node string, p *corev1.Pod) error {
	blocked := poll.Wait{Clock: s.cfg.Clock, Interval: 2 * time.Second,
		What: fmt.Sprintf("draining %s: evicting %s/%s blocked by a PodDisruptionBudget", node, p.Namespace, p.Name)}
	return blocked.Until(ctx, func(ctx context.Context) (bool, string, error) {
		ev := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace}}
		err := s.cfg.Harness.PolicyV1().Evictions(p.Namespace).Evict(ctx, ev)
		switch {
		case err == nil || apierrors.IsNotFound(err):
			s.Counters.PodsDrained.Add(1)
			return true, "", nil
		case apierrors.IsTooManyRequests(err):
			return false, err.Error(), nil
		}
		return false, "", fmt.Errorf("draining %s: evicting %s/%s: %w", node, p.Namespace, p.Name, err)
	})
}

func isDaemonSetPod(p *corev1.Pod) bool {
	return slices.ContainsFunc(p.OwnerReferences, func(o metav1.OwnerReference) bool { return o.Kind == "DaemonSet" })
}
