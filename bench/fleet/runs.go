package fleet

import (
	"context"
	"fmt"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/stormbench/stormbench/bench/cluster"
)

// RunObjects counts what one run left in a cluster.
type RunObjects struct {
	// RunID is the run label value.
	RunID string `json:"runID"`
	// Nodes and Namespaces count objects carrying the run label.
	Nodes      int `json:"nodes"`
	Namespaces int `json:"namespaces"`
	// DownNodes counts nodes still relabelled away from KWOK.
	DownNodes int `json:"downNodes"`
}

// ListRuns finds every run that has nodes or namespaces in the cluster, by
// the run label.
func ListRuns(ctx context.Context, client kubernetes.Interface) ([]RunObjects, error) {
	runs := map[string]*RunObjects{}
	get := func(id string) *RunObjects {
		if runs[id] == nil {
			runs[id] = &RunObjects{RunID: id}
		}
		return runs[id]
	}
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: RunLabel})
	if err != nil {
		return nil, fmt.Errorf("listing nodes: %w", err)
	}
	for _, n := range nodes.Items {
		r := get(n.Labels[RunLabel])
		r.Nodes++
		if n.Labels[cluster.KubeletLabel] != cluster.KubeletUp {
			r.DownNodes++
		}
	}
	nss, err := client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: RunLabel})
	if err != nil {
		return nil, fmt.Errorf("listing namespaces: %w", err)
	}
	for _, ns := range nss.Items {
		get(ns.Labels[RunLabel]).Namespaces++
	}
	out := make([]RunObjects, 0, len(runs))
	for _, r := range runs {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].RunID < out[j].RunID })
	return out, nil
}
