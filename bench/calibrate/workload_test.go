package calibrate

import (
	"fmt"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/stormbench/stormbench/bench/fleet"
)

// TestFleetPlan: the calibration's fleet as the run's fleet builder gets
// it: K simulated nodes under the fleet's names, 2K bystanders named and
// labelled as such, K real nodes, and per restarted node the objects its pod
// features reference and its Service, before its pinned Deployment.
func TestFleetPlan(t *testing.T) {
	o := Options{RunID: "cal", Nodes: 2, PodsPerNode: 5, ProbePeriod: 2 * time.Second, PodFeatures: []string{PodFeatureObjectRefs}}
	c := &calibration{o: o, ns: o.RunID, probe: ProbeExec}
	for i := range o.Nodes {
		c.sim.nodes = append(c.sim.nodes, fleet.NodeName(o.RunID, i))
		c.real.nodes = append(c.real.nodes, fmt.Sprintf("cal-real-%d", i))
	}
	for j := range Bystanders(o.Nodes) {
		c.bystanders = append(c.bystanders, fmt.Sprintf("cal-bystander-%d", j))
	}
	p := c.fleetPlan()
	if p.Nodes != 8 || len(p.KWOKNodes) != 6 || !slices.Equal(p.RealNodes, c.real.nodes) || p.ExpectedPods != 20 || p.Services != 4 || p.Namespace != "cal" {
		t.Fatalf("plan: %d nodes (%d KWOK, real %v), %d pods, %d services in %s; want 8 (6, %v), 20, 4 in cal", p.Nodes, len(p.KWOKNodes), p.RealNodes, p.ExpectedPods, p.Services, p.Namespace, c.real.nodes)
	}
	if _, err := fleet.FromPlan(nil, p, fleet.Options{CreateParallelism: 1}, nil); err != nil {
		t.Fatalf("the fleet refuses the plan: %v", err)
	}
	var kwok []string
	for _, s := range p.KWOKNodes {
		n, err := fleet.BuildNode(s)
		if err != nil {
			t.Fatal(err)
		}
		kwok = append(kwok, n.Name+"/"+n.Labels[RoleLabel])
	}
	if want := []string{"cal-node-00000/", "cal-node-00001/", "cal-bystander-0/bystander", "cal-bystander-1/bystander", "cal-bystander-2/bystander", "cal-bystander-3/bystander"}; !slices.Equal(kwok, want) {
		t.Errorf("KWOK nodes (name/role) %v, want %v", kwok, want)
	}
	var kinds []string
	seenDeployment := false
	for _, obj := range p.Objects {
		a, err := meta.Accessor(obj)
		if err != nil {
			t.Fatal(err)
		}
		kind := fmt.Sprintf("%T", obj)
		kinds = append(kinds, kind)
		if d, ok := obj.(*appsv1.Deployment); ok {
			seenDeployment = true
			node := d.Spec.Template.Spec.NodeSelector[corev1.LabelHostname]
			if node != d.Name || *d.Spec.Replicas != 5 || len(d.Spec.Template.Spec.Containers[0].EnvFrom) != 1 {
				t.Errorf("deployment %s: pinned to %q, %d replicas, envFrom %v", d.Name, node, *d.Spec.Replicas, d.Spec.Template.Spec.Containers[0].EnvFrom)
			}
		} else if seenDeployment {
			t.Errorf("%s %s after a Deployment: what a pod references goes first", kind, a.GetName())
		}
		if a.GetNamespace() != "cal" || a.GetLabels()[fleet.RunLabel] != "cal" {
			t.Errorf("%s %s: namespace %q, run label %q", kind, a.GetName(), a.GetNamespace(), a.GetLabels()[fleet.RunLabel])
		}
	}
	count := func(obj runtime.Object) int {
		return len(slices.DeleteFunc(slices.Clone(kinds), func(k string) bool { return k != fmt.Sprintf("%T", obj) }))
	}
	// Per node: 3 ConfigMaps and a Secret (object-refs), a Service, a Deployment.
	for obj, want := range map[runtime.Object]int{&corev1.ConfigMap{}: 12, &corev1.Secret{}: 4, &corev1.Service{}: 4, &appsv1.Deployment{}: 4} {
		if got := count(obj); got != want {
			t.Errorf("%T: %d objects, want %d", obj, got, want)
		}
	}
}
