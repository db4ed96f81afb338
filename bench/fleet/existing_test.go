package fleet

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/stormbench/stormbench/profiles"
)

// TestUpCreatesOnlyWhatIsMissing: on a fleet whose nodes and objects exist
// (a rerun, a restored snapshot) no create is sent for them; what is
// missing is created. Table: how much of the plan exists beforehand.
func TestUpCreatesOnlyWhatIsMissing(t *testing.T) {
	p := &profiles.Profile{Fleet: profiles.Fleet{Nodes: 3, PodsPerNode: 10}}
	profiles.SetDefaults(p)
	for _, tc := range []struct {
		name                string
		nodesBefore, before int // existing nodes; existing objects (of the plan, in order)
	}{
		{"nothing", 0, 0},
		{"half", 1, -2},
		{"everything", 3, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := fake.NewClientset()
			f, err := New(client, "r1", p.Fleet, nil)
			if err != nil {
				t.Fatal(err)
			}
			objs := f.plan.Objects
			n := tc.before
			switch n {
			case -1:
				n = len(objs)
			case -2:
				n = len(objs) / 2
			}
			var pre []runtime.Object
			for i := 0; i < tc.nodesBefore; i++ {
				node, err := BuildNode(NodeSpec{RunID: "r1", Index: i, CPU: p.Fleet.NodeCPU, Memory: p.Fleet.NodeMemory, Pods: p.Fleet.MaxPodsPerNode})
				if err != nil {
					t.Fatal(err)
				}
				pre = append(pre, node)
			}
			for _, o := range objs[:n] {
				pre = append(pre, o.DeepCopyObject())
			}
			client = fake.NewClientset(pre...)
			f.client = client
			if err := f.createNodes(context.Background()); err != nil {
				t.Fatal(err)
			}
			if err := f.createObjects(context.Background()); err != nil {
				t.Fatal(err)
			}
			creates := map[string]int{}
			for _, a := range client.Actions() {
				if c, ok := a.(k8stesting.CreateAction); ok && a.GetVerb() == "create" {
					creates[c.GetResource().Resource]++
				}
			}
			if got, want := creates["nodes"], 3-tc.nodesBefore; got != want {
				t.Errorf("created %d nodes, want %d", got, want)
			}
			// Standalone pods are listed first like every other kind: an
			// existing one is not created again (a 409 each, issue 45).
			standalone := 0
			for _, o := range objs {
				if _, isPod := o.(*corev1.Pod); isPod {
					standalone++
				}
			}
			if standalone == 0 {
				t.Fatal("the plan holds no standalone pod: the test cannot see pods re-created")
			}
			total := 0
			for r, c := range creates {
				if r != "nodes" && r != "csinodes" {
					total += c
				}
			}
			if want := len(objs) - n; total != want {
				t.Errorf("created %d workload objects, want the %d missing (%v)", total, want, creates)
			}
		})
	}
}
