package fleet

import (
	"maps"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/cache"
)

// readinessTally keeps the fleet's readiness counts up to date from its
// informers' events, so that the readiness wait reads counters instead of
// recounting every pod and node each second: its work grows with the
// fleet's changes, not with its size. The recount was 26.8 % of stormbench's
// CPU at 5,000 nodes (issue 50).
//
// Each object's last counted state is kept by key, and an event sets the
// state its object is in now: a duplicate event, an update whose old object
// the tally never saw (a relist), or a pod replaced under the same name
// count once. Only the not-Ready nodes and pods are kept by name, so the
// reasons and the stale-readiness candidates cost what is not Ready.
type readinessTally struct {
	mu sync.Mutex
	// nodes is every node's Ready state by name.
	nodes         map[string]bool
	readyNodes    int
	notReadyNodes map[string]struct{}
	// pods is every pod's counted state.
	pods      map[podKey]podState
	live      int
	readyPods int
	// notReady holds the live pods that are not Ready, with their reason.
	notReady map[podKey]notReadyPod
	reasons  map[string]int
	// standalone is the plan's standalone pods; present counts those in
	// the cache (LostPods is the rest).
	standalone map[podKey]struct{}
	present    int
}

type podKey struct{ namespace, name string }

// podState is what a pod contributes to the counts.
type podState uint8

const (
	// podLive: not being deleted and not finished (Readiness.Pods).
	podLive podState = 1 << iota
	// podIsReady: live and Ready (Readiness.ReadyPods).
	podIsReady
)

type notReadyPod struct {
	pod    *corev1.Pod
	reason string
}

func newReadinessTally(plan *Plan) *readinessTally {
	t := &readinessTally{
		nodes: map[string]bool{}, notReadyNodes: map[string]struct{}{},
		pods: map[podKey]podState{}, notReady: map[podKey]notReadyPod{}, reasons: map[string]int{},
		standalone: make(map[podKey]struct{}, len(plan.StandalonePods)),
	}
	for _, name := range plan.StandalonePods {
		t.standalone[podKey{plan.Namespace, name}] = struct{}{}
	}
	return t
}

// handlers feed a tally from an informer: they call set with an added
// object of type T and an update's new one (an update is counted by its
// new object alone), del with the key of a deleted one (deletedKey).
func handlers[T any](set func(T), del func(podKey)) cache.ResourceEventHandlerFuncs {
	add := func(obj any) {
		if o, ok := obj.(T); ok {
			set(o)
		}
	}
	return cache.ResourceEventHandlerFuncs{AddFunc: add, UpdateFunc: func(_, obj any) { add(obj) }, DeleteFunc: func(obj any) {
		if k, ok := deletedKey(obj); ok {
			del(k)
		}
	}}
}

func (t *readinessTally) setNode(n *corev1.Node) {
	ready := NodeReady(n)
	t.mu.Lock()
	defer t.mu.Unlock()
	was, had := t.nodes[n.Name]
	if had && was == ready {
		return // a heartbeat: nothing to count
	}
	if had {
		t.forgetNode(n.Name, was)
	}
	t.nodes[n.Name] = ready
	if ready {
		t.readyNodes++
	} else {
		t.notReadyNodes[n.Name] = struct{}{}
	}
}

func (t *readinessTally) deleteNode(k podKey) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if was, had := t.nodes[k.name]; had {
		t.forgetNode(k.name, was)
		delete(t.nodes, k.name)
	}
}

func (t *readinessTally) forgetNode(name string, ready bool) {
	if ready {
		t.readyNodes--
	} else {
		delete(t.notReadyNodes, name)
	}
}

func (t *readinessTally) setPod(p *corev1.Pod) {
	k := podKey{p.Namespace, p.Name}
	var st podState
	if p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
		st = podLive
		if PodReady(p) {
			st |= podIsReady
		}
	}
	var reason string
	if st == podLive {
		reason = podReason(p) // outside the lock: it formats
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	was, had := t.pods[k]
	if had && was == st && st != podLive {
		return // Ready and still Ready (or still not live): nothing to count
	}
	if had {
		t.forgetPod(k, was)
	} else if _, ok := t.standalone[k]; ok {
		t.present++
	}
	t.pods[k] = st
	if st&podLive == 0 {
		return
	}
	t.live++
	if st&podIsReady != 0 {
		t.readyPods++
		return
	}
	t.notReady[k] = notReadyPod{pod: p, reason: reason}
	t.reasons[reason]++
}

func (t *readinessTally) deletePod(k podKey) {
	t.mu.Lock()
	defer t.mu.Unlock()
	was, had := t.pods[k]
	if !had {
		return
	}
	t.forgetPod(k, was)
	delete(t.pods, k)
	if _, ok := t.standalone[k]; ok {
		t.present--
	}
}

// forgetPod takes back what a pod's state st added to the counts.
func (t *readinessTally) forgetPod(k podKey, st podState) {
	if st&podLive == 0 {
		return
	}
	t.live--
	if st&podIsReady != 0 {
		t.readyPods--
		return
	}
	if np, ok := t.notReady[k]; ok {
		if t.reasons[np.reason]--; t.reasons[np.reason] == 0 {
			delete(t.reasons, np.reason)
		}
		delete(t.notReady, k)
	}
}

// read is the fleet's readiness by the counts; stale, when set, is asked
// about every live pod that is not Ready, with whether its node is Ready.
// Its cost grows with what is not Ready, not with the fleet.
func (t *readinessTally) read(plan *Plan, stale func(p *corev1.Pod, nodeReady bool)) *Readiness {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := &Readiness{
		Nodes: max(len(t.nodes), plan.Nodes), ReadyNodes: t.readyNodes,
		ExpectedPods: plan.ExpectedPods, Pods: t.live, ReadyPods: t.readyPods,
		LostPods:      len(t.standalone) - t.present,
		NotReadyNodes: firstNames(t.notReadyNodes, maxNotReadyNodes),
		PodReasons:    maps.Clone(t.reasons),
	}
	if stale != nil {
		for _, np := range t.notReady {
			stale(np.pod, t.nodes[np.pod.Spec.NodeName])
		}
	}
	return r
}

// maxNotReadyNodes is how many not-Ready nodes a Readiness names.
const maxNotReadyNodes = 5

// firstNames returns the n smallest names of set, sorted, in one pass.
func firstNames(set map[string]struct{}, n int) []string {
	var out []string
	for name := range set {
		if len(out) == n && strings.Compare(name, out[n-1]) >= 0 {
			continue
		}
		i := len(out)
		for i > 0 && out[i-1] > name {
			i--
		}
		if len(out) < n {
			out = append(out, "")
		}
		copy(out[i+1:], out[i:len(out)-1])
		out[i] = name
	}
	return out
}

// deletedKey is the namespace and name of a deleted object, or of the
// object a tombstone (cache.DeletedFinalStateUnknown) stands for.
func deletedKey(obj any) (podKey, bool) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		ns, name, err := cache.SplitMetaNamespaceKey(d.Key)
		return podKey{ns, name}, err == nil
	}
	a, err := meta.Accessor(obj)
	if err != nil {
		return podKey{}, false
	}
	return podKey{a.GetNamespace(), a.GetName()}, true
}

// staleCandidates wraps staleNotReady for the tally's read: a pod of a Ready
// KWOK node whose readiness looks stale (see StaleReadinessFixer).
func staleCandidates(plan *Plan, now time.Time, out *[]*corev1.Pod) func(*corev1.Pod, bool) {
	return func(p *corev1.Pod, nodeReady bool) {
		// A real kubelet's pods are its own to fix (the fixer stands in
		// for KWOK, kwok#1464).
		if nodeReady && !plan.IsReal(p.Spec.NodeName) && staleNotReady(p, now) {
			*out = append(*out, p)
		}
	}
}
