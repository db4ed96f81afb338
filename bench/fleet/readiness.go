package fleet

import (
	"cmp"
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// How much of the fleet is Ready, and why the rest is not.

// Readiness is a snapshot of how much of the fleet is Ready.
type Readiness struct {
	// Nodes, ReadyNodes count the run's nodes.
	Nodes, ReadyNodes int
	// ExpectedPods is what the plan produces; Pods, ReadyPods what exists.
	ExpectedPods, Pods, ReadyPods int
	// LostPods counts standalone pods that no longer exist (evicted; no
	// controller replaces them).
	LostPods int
	// NotReadyNodes names some nodes that are not Ready.
	NotReadyNodes []string
	// PodReasons counts not-Ready pods by "Phase (Reason: message)".
	PodReasons map[string]int
}

// Complete reports whether everything is Ready.
func (r *Readiness) Complete() bool {
	return r.ReadyNodes == r.Nodes && r.ReadyPods >= r.ExpectedPods-r.LostPods && r.Pods == r.ReadyPods
}

func (r *Readiness) String() string {
	var parts []string
	if r.ReadyNodes < r.Nodes {
		s := fmt.Sprintf("%d/%d nodes not Ready", r.Nodes-r.ReadyNodes, r.Nodes)
		if len(r.NotReadyNodes) > 0 {
			s += " (" + strings.Join(r.NotReadyNodes, ", ") + ")"
		}
		parts = append(parts, s)
	}
	notReady := max(r.ExpectedPods-r.LostPods-r.ReadyPods, r.Pods-r.ReadyPods)
	if notReady > 0 {
		s := fmt.Sprintf("%d/%d pods not Ready", notReady, r.ExpectedPods-r.LostPods)
		var reasons []string
		for k, v := range r.PodReasons {
			reasons = append(reasons, fmt.Sprintf("%d %s", v, k))
		}
		sort.Strings(reasons)
		if missing := r.ExpectedPods - r.LostPods - r.Pods; missing > 0 {
			reasons = append(reasons, fmt.Sprintf("%d not created yet (check the workload controllers)", missing))
		}
		if len(reasons) > 0 {
			s += ": " + strings.Join(reasons, ", ")
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		return "all Ready"
	}
	return strings.Join(parts, "; ")
}

// Readiness lists the run's nodes and pods and counts what is Ready.
func (f *Fleet) Readiness(ctx context.Context) (*Readiness, error) {
	sel := metav1.ListOptions{LabelSelector: f.RunSelector(), ResourceVersion: "0"}
	nodes, err := f.client.CoreV1().Nodes().List(ctx, sel)
	if err != nil {
		return nil, fmt.Errorf("listing nodes: %w", err)
	}
	pods, err := f.client.CoreV1().Pods(f.plan.Namespace).List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return nil, fmt.Errorf("listing pods: %w", err)
	}
	t := newReadinessTally(f.plan)
	for i := range nodes.Items {
		t.setNode(&nodes.Items[i])
	}
	for i := range pods.Items {
		t.setPod(&pods.Items[i])
	}
	return t.read(f.plan, nil), nil
}

func podReason(p *corev1.Pod) string {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status != corev1.ConditionTrue {
			msg := c.Message
			if len(msg) > 120 {
				msg = msg[:120] + "..."
			}
			return fmt.Sprintf("%s (%s: %s)", p.Status.Phase, c.Reason, msg)
		}
	}
	phase := cmp.Or(string(p.Status.Phase), "Pending")
	if p.Spec.NodeName != "" {
		// The common reasons are constants: the tally computes a reason
		// on every event of a not-Ready pod.
		switch phase {
		case "Running":
			return "Running (not ready)"
		case "Pending":
			return "Pending (not ready)"
		}
		return phase + " (not ready)"
	}
	return phase
}

// NodeReady reports whether a node's Ready condition is True.
func NodeReady(n *corev1.Node) bool {
	c := NodeReadyCondition(n)
	return c != nil && c.Status == corev1.ConditionTrue
}

// NodeReadyCondition returns a node's Ready condition, nil without one.
func NodeReadyCondition(n *corev1.Node) *corev1.NodeCondition {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == corev1.NodeReady {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}

// PodReady reports whether a pod's Ready condition is True.
func PodReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
