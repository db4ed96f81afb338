package fleet

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/stormbench/stormbench/bench/cluster"
	"github.com/stormbench/stormbench/profiles"
)

func TestBuildNode(t *testing.T) {
	tests := []struct {
		index    int
		wantName string
		wantCIDR string
	}{
		{0, "r1-node-00000", "10.128.0.0/24"},
		{255, "r1-node-00255", "10.128.255.0/24"},
		{256, "r1-node-00256", "10.129.0.0/24"},
		{MaxNodes - 1, "r1-node-32767", "10.255.255.0/24"},
	}
	for _, tt := range tests {
		n, err := BuildNode(NodeSpec{RunID: "r1", Index: tt.index, CPU: "32", Memory: "256Gi", Pods: 30})
		if err != nil {
			t.Fatal(err)
		}
		if n.Name != tt.wantName || n.Spec.PodCIDR != tt.wantCIDR || len(n.Spec.PodCIDRs) != 1 || n.Spec.PodCIDRs[0] != tt.wantCIDR {
			t.Errorf("index %d: name %s cidr %s %v, want %s %s", tt.index, n.Name, n.Spec.PodCIDR, n.Spec.PodCIDRs, tt.wantName, tt.wantCIDR)
		}
		if n.Spec.ProviderID != "kwok://"+tt.wantName {
			t.Errorf("providerID %q", n.Spec.ProviderID)
		}
		for k, v := range map[string]string{RunLabel: "r1", TypeLabel: "kwok", cluster.KubeletLabel: cluster.KubeletUp, corev1.LabelHostname: tt.wantName} {
			if n.Labels[k] != v {
				t.Errorf("label %s = %q, want %q", k, n.Labels[k], v)
			}
		}
		if n.Annotations[KwokAnnotation] != "fake" {
			t.Errorf("annotation %s = %q", KwokAnnotation, n.Annotations[KwokAnnotation])
		}
		if len(n.Spec.Taints) != 1 || n.Spec.Taints[0].Key != KwokTaintKey || n.Spec.Taints[0].Effect != corev1.TaintEffectNoSchedule {
			t.Errorf("taints %v", n.Spec.Taints)
		}
		if got := n.Status.Allocatable.Pods().Value(); got != 30 {
			t.Errorf("allocatable pods %d", got)
		}
		if n.Status.Capacity.Cpu().String() != "32" || n.Status.Capacity.Memory().String() != "256Gi" {
			t.Errorf("capacity %v", n.Status.Capacity)
		}
	}
}

func TestBuildNodeBadInput(t *testing.T) {
	for _, s := range []NodeSpec{
		{RunID: "r", Index: -1, CPU: "1", Memory: "1Gi"},
		{RunID: "r", Index: MaxNodes, CPU: "1", Memory: "1Gi"},
		{RunID: "r", Index: 0, CPU: "lots", Memory: "1Gi"},
		{RunID: "r", Index: 0, CPU: "1", Memory: "1 gig"},
	} {
		if _, err := BuildNode(s); err == nil {
			t.Errorf("BuildNode(%+v) accepted bad input", s)
		}
	}
}

func TestPodCIDRsUnique(t *testing.T) {
	seen := map[string]int{}
	for i := 0; i < MaxNodes; i++ {
		c := PodCIDR(i)
		if j, ok := seen[c]; ok {
			t.Fatalf("nodes %d and %d share %s", i, j, c)
		}
		seen[c] = i
	}
}

func TestPlan(t *testing.T) {
	tests := []struct {
		nodes, podsPerNode int
	}{{10, 10}, {50, 10}, {100, 20}, {3, 4}}
	for _, tt := range tests {
		p := &profiles.Profile{Fleet: profiles.Fleet{Nodes: tt.nodes, PodsPerNode: tt.podsPerNode}}
		profiles.SetDefaults(p)
		plan, err := NewPlan("r1", p.Fleet)
		if err != nil {
			t.Fatal(err)
		}
		want := tt.nodes * tt.podsPerNode
		// Objects come in whole replicas, so the total is near the target.
		if diff := plan.ExpectedPods - want; diff < -want/5-10 || diff > want/5+10 {
			t.Errorf("%d×%d: %d pods planned, want about %d", tt.nodes, tt.podsPerNode, plan.ExpectedPods, want)
		}
		if plan.Services == 0 || len(plan.StandalonePods) == 0 {
			t.Errorf("%d×%d: %d services, %d standalone pods", tt.nodes, tt.podsPerNode, plan.Services, len(plan.StandalonePods))
		}
		// Dependencies first: no pod-producing object before a ConfigMap.
		seenWorkload := false
		for _, o := range plan.Objects {
			switch o.(type) {
			case *corev1.ConfigMap, *corev1.Secret, *corev1.Service:
				if seenWorkload {
					t.Fatalf("%T after a workload object", o)
				}
			default:
				seenWorkload = true
			}
		}
	}
	p := &profiles.Profile{Fleet: profiles.Fleet{Nodes: 10, PodsPerNode: 1, Workloads: []profiles.WorkloadShare{{Template: "daemonset"}, {Template: "web-http", Share: 1}}}}
	profiles.SetDefaults(p)
	plan, err := NewPlan("r1", p.Fleet)
	if err != nil {
		t.Fatal(err)
	}
	if plan.ExpectedPods != 10 {
		t.Errorf("one pod per node is the DaemonSet's: %d pods planned", plan.ExpectedPods)
	}
}

func TestReadinessString(t *testing.T) {
	r := &Readiness{Nodes: 50, ReadyNodes: 48, NotReadyNodes: []string{"a", "b"}, ExpectedPods: 2000, Pods: 1990, ReadyPods: 1963,
		PodReasons: map[string]int{"Pending (Unschedulable: 0/50 nodes are available)": 25, "Running (not ready)": 2}}
	want := "2/50 nodes not Ready (a, b); 37/2000 pods not Ready: 2 Running (not ready), 25 Pending (Unschedulable: 0/50 nodes are available), 10 not created yet (check the workload controllers)"
	if got := r.String(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if r.Complete() {
		t.Error("incomplete fleet reported complete")
	}
	done := &Readiness{Nodes: 2, ReadyNodes: 2, ExpectedPods: 10, Pods: 9, ReadyPods: 9, LostPods: 1}
	if !done.Complete() {
		t.Error("a fleet whose only missing pod is a lost standalone pod is complete")
	}
}

// TestBuildNodeNamedAndLabelled: a name and labels of the spec's replace
// the index's name (and the hostname label and provider ID with it) and
// are added to the labels; the index still fixes the CIDR.
func TestBuildNodeNamedAndLabelled(t *testing.T) {
	n, err := BuildNode(NodeSpec{RunID: "r1", Index: 3, Name: "r1-bystander-0", Labels: map[string]string{"role": "bystander", TypeLabel: "kwok"}, CPU: "32", Memory: "256Gi", Pods: 30})
	if err != nil {
		t.Fatal(err)
	}
	if n.Name != "r1-bystander-0" || n.Labels[corev1.LabelHostname] != n.Name || n.Spec.ProviderID != "kwok://r1-bystander-0" {
		t.Errorf("name %q, hostname label %q, providerID %q; want all r1-bystander-0", n.Name, n.Labels[corev1.LabelHostname], n.Spec.ProviderID)
	}
	if n.Labels["role"] != "bystander" || n.Labels[RunLabel] != "r1" || n.Labels["stormbench.io/index"] != "3" {
		t.Errorf("labels %v: want role=bystander beside the run and index labels", n.Labels)
	}
	if n.Spec.PodCIDR != PodCIDR(3) {
		t.Errorf("cidr %s, want %s", n.Spec.PodCIDR, PodCIDR(3))
	}
}

func TestFromPlanChecksThePlan(t *testing.T) {
	good := &Plan{RunID: "r1", Nodes: 3, KWOKNodes: []NodeSpec{{RunID: "r1"}, {RunID: "r1", Index: 1}}, RealNodes: []string{"r1-real-0"}}
	for _, tc := range []struct {
		name    string
		plan    *Plan
		opts    Options
		wantErr string
	}{
		{"ok", good, Options{CreateParallelism: 4}, ""},
		{"count", &Plan{RunID: "r1", Nodes: 4, KWOKNodes: good.KWOKNodes, RealNodes: good.RealNodes}, Options{CreateParallelism: 4}, "plan of 4 nodes lists 2 KWOK and 1 real"},
		{"parallelism", good, Options{}, "parallelism 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := FromPlan(nil, tc.plan, tc.opts, nil)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("err = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

// TestNewPlanKWOKNodes: a profile's plan lists its KWOK nodes, sized by the
// profile, before its real ones.
func TestNewPlanKWOKNodes(t *testing.T) {
	f := profiles.Fleet{Nodes: 4, RealKubelets: 1, NodeCPU: "8", NodeMemory: "32Gi", MaxPodsPerNode: 50, PodsPerNode: 1}
	p, err := NewPlan("r1", f)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.KWOKNodes) != 3 || len(p.RealNodes) != 1 || p.RealNodes[0] != NodeName("r1", 3) {
		t.Fatalf("KWOK nodes %d, real %v; want 3 and [%s]", len(p.KWOKNodes), p.RealNodes, NodeName("r1", 3))
	}
	for i, s := range p.KWOKNodes {
		if want := (NodeSpec{RunID: "r1", Index: i, CPU: "8", Memory: "32Gi", Pods: 50}); !reflect.DeepEqual(s, want) {
			t.Errorf("KWOK node %d: %+v, want %+v", i, s, want)
		}
	}
}
