package fleet

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"sort"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// recount is the readiness wait's count before the tally (commit 01cb628):
// every node and pod of the caches, each poll. It is the tally's reference
// in tests and its "before" in the benchmarks. NotReadyNodes are the first
// in the store's order.
func recount(plan *Plan, nodes, pods cache.Store, now time.Time) (*Readiness, []*corev1.Pod) {
	r := &Readiness{ExpectedPods: plan.ExpectedPods, PodReasons: map[string]int{}}
	readyNodes := map[string]bool{}
	for _, o := range nodes.List() {
		n := o.(*corev1.Node)
		r.Nodes++
		if NodeReady(n) {
			r.ReadyNodes++
			readyNodes[n.Name] = true
		} else if len(r.NotReadyNodes) < maxNotReadyNodes {
			r.NotReadyNodes = append(r.NotReadyNodes, n.Name)
		}
	}
	r.Nodes = max(r.Nodes, plan.Nodes)
	for _, name := range plan.StandalonePods {
		if _, ok, _ := pods.GetByKey(plan.Namespace + "/" + name); !ok {
			r.LostPods++
		}
	}
	var stale []*corev1.Pod
	for _, o := range pods.List() {
		p := o.(*corev1.Pod)
		if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		r.Pods++
		if PodReady(p) {
			r.ReadyPods++
			continue
		}
		r.PodReasons[podReason(p)]++
		if readyNodes[p.Spec.NodeName] && !plan.IsReal(p.Spec.NodeName) && staleNotReady(p, now) {
			stale = append(stale, p)
		}
	}
	return r, stale
}

// informerSim plays events as a shared informer does: the store first, then
// the handler, with the store's old object in an update.
type informerSim struct {
	store   cache.Store
	handler cache.ResourceEventHandler
}

func newInformerSim(h cache.ResourceEventHandler) *informerSim {
	return &informerSim{store: cache.NewStore(cache.MetaNamespaceKeyFunc), handler: h}
}

func (s *informerSim) set(obj any) {
	key, _ := cache.MetaNamespaceKeyFunc(obj)
	old, ok, _ := s.store.GetByKey(key)
	if ok {
		_ = s.store.Update(obj)
		s.handler.OnUpdate(old, obj)
		return
	}
	_ = s.store.Add(obj)
	s.handler.OnAdd(obj, false)
}

// remove deletes obj; tombstone delivers it as a relist does, as
// cache.DeletedFinalStateUnknown.
func (s *informerSim) remove(obj any, tombstone bool) {
	key, _ := cache.MetaNamespaceKeyFunc(obj)
	_ = s.store.Delete(obj)
	if tombstone {
		s.handler.OnDelete(cache.DeletedFinalStateUnknown{Key: key, Obj: obj})
		return
	}
	s.handler.OnDelete(obj)
}

func node(name string, ready bool) *corev1.Node {
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: st}}}}
}

// pod is a Running pod of nodeName; not Ready means marked so by the
// node-lifecycle controller a minute ago (containers still ready: stale).
func pod(name, nodeName string, ready bool) *corev1.Pod {
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	ago := metav1.NewTime(time.Unix(1000, 0).Add(-time.Minute))
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(name + "-1")},
		Spec: corev1.PodSpec{NodeName: nodeName},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
			{Type: corev1.PodReady, Status: st, LastTransitionTime: ago},
			{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: ago},
		}}}
}

func with(p *corev1.Pod, edit func(*corev1.Pod)) *corev1.Pod {
	p = p.DeepCopy()
	edit(p)
	return p
}

// tallyRig feeds one tally and the reference stores from the same events.
type tallyRig struct {
	plan         *Plan
	tally        *readinessTally
	nodes, pods  *informerSim
	now          time.Time
	t            testing.TB
	realNodeName string
}

func newTallyRig(t testing.TB, plan *Plan) *tallyRig {
	tl := newReadinessTally(plan)
	return &tallyRig{t: t, plan: plan, tally: tl, now: time.Unix(1000, 0),
		nodes: newInformerSim(handlers(tl.setNode, tl.deleteNode)), pods: newInformerSim(handlers(tl.setPod, tl.deletePod))}
}

// check compares the tally's read with a full recount of the stores.
func (g *tallyRig) check(step string) *Readiness {
	g.t.Helper()
	var stale []*corev1.Pod
	got := g.tally.read(g.plan, staleCandidates(g.plan, g.now, &stale))
	want, wantStale := recount(g.plan, g.nodes.store, g.pods.store, g.now)
	// The recount names the first not-Ready nodes in the store's order,
	// the tally the first by name.
	var notReady []string
	for _, o := range g.nodes.store.List() {
		if n := o.(*corev1.Node); !NodeReady(n) {
			notReady = append(notReady, n.Name)
		}
	}
	sort.Strings(notReady)
	want.NotReadyNodes = notReady[:min(len(notReady), maxNotReadyNodes)]
	if len(want.NotReadyNodes) == 0 {
		want.NotReadyNodes = nil
	}
	if !reflect.DeepEqual(got, want) {
		g.t.Errorf("%s: tally %+v, recount %+v", step, *got, *want)
	}
	if a, b := podNames(stale), podNames(wantStale); !reflect.DeepEqual(a, b) {
		g.t.Errorf("%s: stale pods %v, recount %v", step, a, b)
	}
	if got.String() != want.String() {
		g.t.Errorf("%s: tally says %q, recount %q", step, got, want)
	}
	return got
}

func podNames(pods []*corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	sort.Strings(out)
	return out
}

// TestReadinessTally plays informer events and checks that the tally's
// counts equal a full recount after every event, and are what the case
// says they are.
func TestReadinessTally(t *testing.T) {
	type event func(g *tallyRig)
	setNode := func(n *corev1.Node) event { return func(g *tallyRig) { g.nodes.set(n) } }
	setPod := func(p *corev1.Pod) event { return func(g *tallyRig) { g.pods.set(p) } }
	dupPod := func(old, p *corev1.Pod) event {
		return func(g *tallyRig) { g.pods.set(p); g.pods.handler.OnUpdate(old, p) }
	}
	delPod := func(p *corev1.Pod, tombstone bool) event { return func(g *tallyRig) { g.pods.remove(p, tombstone) } }
	delNode := func(n *corev1.Node, tombstone bool) event { return func(g *tallyRig) { g.nodes.remove(n, tombstone) } }
	a, b := pod("a", "n1", true), pod("b", "n1", true)
	sa := pod("s", "n2", true) // standalone
	type counts struct{ nodes, readyNodes, pods, readyPods, lost, stale int }
	for _, tc := range []struct {
		name   string
		events []event
		want   counts
		says   string
	}{
		{"empty fleet", nil, counts{nodes: 2, lost: 1}, "2/2 nodes not Ready; 2/2 pods not Ready: 2 not created yet (check the workload controllers)"},
		{"all created and Ready", []event{setNode(node("n1", true)), setNode(node("n2", true)), setPod(a), setPod(b), setPod(sa)},
			counts{nodes: 2, readyNodes: 2, pods: 3, readyPods: 3}, "all Ready"},
		{"a node heartbeat and a duplicate update", []event{setNode(node("n1", true)), setNode(node("n1", true)), setNode(node("n2", true)),
			setPod(a), setPod(b), setPod(sa), dupPod(a, a)},
			counts{nodes: 2, readyNodes: 2, pods: 3, readyPods: 3}, "all Ready"},
		{"a pod flips not Ready, the update delivered twice", []event{setNode(node("n1", true)), setNode(node("n2", true)),
			setPod(a), setPod(b), setPod(sa), dupPod(a, pod("a", "n1", false))},
			counts{nodes: 2, readyNodes: 2, pods: 3, readyPods: 2, stale: 1}, "1/3 pods not Ready: 1 Running (not ready)"},
		{"a pod flips not Ready and back", []event{setNode(node("n1", true)), setNode(node("n2", true)),
			setPod(a), setPod(b), setPod(sa), setPod(pod("a", "n1", false)), setPod(a)},
			counts{nodes: 2, readyNodes: 2, pods: 3, readyPods: 3}, "all Ready"},
		{"a node goes not Ready: its pods are not stale", []event{setNode(node("n1", true)), setNode(node("n2", true)),
			setPod(a), setPod(b), setPod(sa), setNode(node("n1", false)), setPod(pod("a", "n1", false)), setPod(pod("b", "n1", false))},
			counts{nodes: 2, readyNodes: 1, pods: 3, readyPods: 1}, "1/2 nodes not Ready (n1); 2/3 pods not Ready: 2 Running (not ready)"},
		{"a standalone pod evicted is lost", []event{setNode(node("n1", true)), setNode(node("n2", true)),
			setPod(a), setPod(b), setPod(sa), delPod(sa, false)},
			counts{nodes: 2, readyNodes: 2, pods: 2, readyPods: 2, lost: 1}, "all Ready"},
		{"a standalone pod's deletion seen on a relist (tombstone), twice", []event{setNode(node("n1", true)), setNode(node("n2", true)),
			setPod(a), setPod(b), setPod(sa), delPod(sa, true), delPod(sa, true)},
			counts{nodes: 2, readyNodes: 2, pods: 2, readyPods: 2, lost: 1}, "all Ready"},
		{"a pod being deleted, then replaced by a Pending one", []event{setNode(node("n1", true)), setNode(node("n2", true)),
			setPod(a), setPod(b), setPod(sa),
			setPod(with(b, func(p *corev1.Pod) { ts := metav1.NewTime(time.Unix(900, 0)); p.DeletionTimestamp = &ts })),
			delPod(b, false),
			setPod(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b", UID: "b-2"}, Status: corev1.PodStatus{Phase: corev1.PodPending}})},
			counts{nodes: 2, readyNodes: 2, pods: 3, readyPods: 2}, "1/3 pods not Ready: 1 Pending"},
		{"a pod replaced under its name without a delete event (relist)", []event{setNode(node("n1", true)), setNode(node("n2", true)),
			setPod(a), setPod(b), setPod(sa),
			setPod(with(pod("b", "", false), func(p *corev1.Pod) {
				p.UID = "b-2"
				p.Status = corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
					Reason: "Unschedulable", Message: "0/2 nodes are available"}}}
			}))},
			counts{nodes: 2, readyNodes: 2, pods: 3, readyPods: 2}, "1/3 pods not Ready: 1 Pending (Unschedulable: 0/2 nodes are available)"},
		{"finished pods are not counted", []event{setNode(node("n1", true)), setNode(node("n2", true)),
			setPod(a), setPod(sa), setPod(with(b, func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }))},
			counts{nodes: 2, readyNodes: 2, pods: 2, readyPods: 2}, "1/3 pods not Ready: 1 not created yet (check the workload controllers)"},
		{"a node deleted, and one more than planned", []event{setNode(node("n1", true)), setNode(node("n2", true)), setNode(node("n3", false)),
			delNode(node("n1", true), false), delNode(node("n3", false), true),
			setPod(a), setPod(b), setPod(sa)},
			counts{nodes: 2, readyNodes: 1, pods: 3, readyPods: 3}, "1/2 nodes not Ready"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan := &Plan{Namespace: "ns", Nodes: 2, ExpectedPods: 3, StandalonePods: []string{"s"}}
			g := newTallyRig(t, plan)
			g.check("before any event")
			for i, ev := range tc.events {
				ev(g)
				g.check(fmt.Sprintf("after event %d", i))
			}
			var stale []*corev1.Pod
			r := g.tally.read(plan, staleCandidates(plan, g.now, &stale))
			got := counts{r.Nodes, r.ReadyNodes, r.Pods, r.ReadyPods, r.LostPods, len(stale)}
			if got != tc.want {
				t.Errorf("counts %+v, want %+v", got, tc.want)
			}
			if r.String() != tc.says {
				t.Errorf("says %q, want %q", r, tc.says)
			}
		})
	}
}

// TestReadinessTallyRandom plays a long seeded sequence of random events
// (nodes and pods flipping, deleted, replaced, duplicated, tombstoned) and
// compares the tally with a recount after each.
func TestReadinessTallyRandom(t *testing.T) {
	plan := &Plan{Namespace: "ns", Nodes: 8, ExpectedPods: 40, RealNodes: []string{"n7"}}
	for i := 0; i < 40; i += 4 {
		plan.StandalonePods = append(plan.StandalonePods, fmt.Sprintf("p%02d", i))
	}
	g := newTallyRig(t, plan)
	rng := rand.New(rand.NewPCG(1, 50))
	phases := []corev1.PodPhase{corev1.PodRunning, corev1.PodRunning, corev1.PodPending, corev1.PodSucceeded, corev1.PodFailed}
	for step := range 5000 {
		switch k := rng.IntN(10); {
		case k < 2:
			n := node(fmt.Sprintf("n%d", rng.IntN(9)), rng.IntN(3) > 0)
			if rng.IntN(8) == 0 {
				g.nodes.remove(n, rng.IntN(2) == 0)
			} else {
				g.nodes.set(n)
			}
		default:
			p := pod(fmt.Sprintf("p%02d", rng.IntN(44)), fmt.Sprintf("n%d", rng.IntN(9)), rng.IntN(2) == 0)
			p.Status.Phase = phases[rng.IntN(len(phases))]
			if rng.IntN(10) == 0 {
				ts := metav1.NewTime(g.now)
				p.DeletionTimestamp = &ts
			}
			if rng.IntN(6) == 0 {
				p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
					Reason: "Unschedulable", Message: fmt.Sprintf("0/%d nodes are available", rng.IntN(3))})
			}
			switch r := rng.IntN(10); {
			case r == 0:
				g.pods.remove(p, rng.IntN(2) == 0)
			case r == 1:
				key, _ := cache.MetaNamespaceKeyFunc(p)
				old, _, _ := g.pods.store.GetByKey(key)
				g.pods.set(p)
				g.pods.handler.OnUpdate(old, p) // delivered twice
			default:
				g.pods.set(p)
			}
		}
		g.check(fmt.Sprintf("step %d", step))
		if t.Failed() {
			return
		}
	}
}

func TestFirstNames(t *testing.T) {
	set := map[string]struct{}{}
	for _, n := range []string{"n9", "n3", "n7", "n1", "n5", "n2", "n8"} {
		set[n] = struct{}{}
	}
	for n, want := range map[int][]string{1: {"n1"}, 5: {"n1", "n2", "n3", "n5", "n7"}, 9: {"n1", "n2", "n3", "n5", "n7", "n8", "n9"}} {
		if got := firstNames(set, n); !reflect.DeepEqual(got, want) {
			t.Errorf("firstNames(%d) = %v, want %v", n, got, want)
		}
	}
	if got := firstNames(nil, 5); got != nil {
		t.Errorf("firstNames of nothing = %v", got)
	}
}

// TestSlimNode: what the readiness wait reads from a node (its name and
// Ready condition) is the same after the transform, for a node Ready, not
// Ready and without the condition; the rest of the node is gone.
func TestSlimNode(t *testing.T) {
	for _, tc := range []struct {
		name string
		node *corev1.Node
	}{
		{"ready", node("n1", true)},
		{"not ready", node("n1", false)},
		{"no Ready condition yet", &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			full := tc.node.DeepCopy()
			full.Labels = map[string]string{RunLabel: "r"}
			full.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kwok"}}
			full.Spec.PodCIDR = "10.128.0.0/24"
			full.Status.Conditions = append([]corev1.NodeCondition{{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse}}, full.Status.Conditions...)
			full.Status.NodeInfo.KubeletVersion = "fake"
			out, err := SlimNode(full.DeepCopy())
			if err != nil {
				t.Fatal(err)
			}
			slim := out.(*corev1.Node)
			if slim.Name != full.Name || NodeReady(slim) != NodeReady(full) ||
				!reflect.DeepEqual(NodeReadyCondition(slim), NodeReadyCondition(full)) {
				t.Errorf("slim node reads differently: %+v", slim)
			}
			if slim.Labels != nil || slim.ManagedFields != nil || slim.Spec.PodCIDR != "" || slim.Status.NodeInfo.KubeletVersion != "" ||
				len(slim.Status.Conditions) > 1 {
				t.Errorf("the slim node keeps what nobody reads: %+v", slim)
			}
		})
	}
	// A tombstone or another object passes through.
	if out, err := SlimNode("not an object"); err != nil || out != "not an object" {
		t.Errorf("non-object: %v, %v", out, err)
	}
}
