package fleet

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/stormbench/stormbench/bench/poll"
)

// StaleReadinessFixer acts as the kubelet of a pod's node for a pod whose
// Ready condition the node-lifecycle controller set to False while the node
// was late with its heartbeats, and which KWOK never sets back
// (kubernetes-sigs/kwok#1464). A real kubelet's status manager would write
// Ready=True again, since its own view of the pod differs.
type StaleReadinessFixer func(ctx context.Context, pod *corev1.Pod) error

// fixParallelism bounds the stale-readiness fixes in flight. Each pod's node
// has its own status manager in a real cluster, so fixes of different pods
// go out side by side; the bound keeps a fleet-wide episode (thousands of
// pods marked not ready at once) from opening thousands of requests.
const fixParallelism = 16

// fixQueue runs stale-readiness fixes beside the readiness loop, so that a
// slow API server delays the fixes, not the loop's view of the fleet. A pod
// is fixed by one call at a time; a pod still stale after its fix is tried
// again on a later snapshot (the status manager's next syncBatch).
type fixQueue struct {
	ctx    context.Context
	cancel context.CancelFunc
	fix    StaleReadinessFixer
	fixed  *atomic.Int64
	sem    *semaphore.Weighted
	wg     sync.WaitGroup
	mu     sync.Mutex
	busy   map[types.UID]bool
}

func newFixQueue(ctx context.Context, fix StaleReadinessFixer, fixed *atomic.Int64) *fixQueue {
	ctx, cancel := context.WithCancel(ctx)
	return &fixQueue{ctx: ctx, cancel: cancel, fix: fix, fixed: fixed, sem: semaphore.NewWeighted(fixParallelism), busy: map[types.UID]bool{}}
}

// add starts fixes for the stale pods not already being fixed, as many as
// there are free slots; the rest wait for a later call.
func (q *fixQueue) add(stale []*corev1.Pod) {
	if q.fix == nil {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, p := range stale {
		if q.busy[p.UID] {
			continue
		}
		if !q.sem.TryAcquire(1) {
			return
		}
		q.busy[p.UID] = true
		q.wg.Add(1)
		go func(p *corev1.Pod) {
			defer q.wg.Done()
			if err := q.fix(q.ctx, p); err == nil {
				q.fixed.Add(1)
			}
			q.mu.Lock()
			delete(q.busy, p.UID)
			q.mu.Unlock()
			q.sem.Release(1)
		}(p)
	}
}

// wait cancels the fixes in flight and waits for them to return.
func (q *fixQueue) wait() {
	q.cancel()
	q.wg.Wait()
}

// staleAfter is how long a pod must look stale before it is fixed, so that
// transient states and the storm's own readiness changes are left alone.
const staleAfter = 5 * time.Second

// readinessWatch holds informer caches of the run's nodes and pods, so that
// waiting for readiness costs the API server one watch each instead of a
// LIST of every pod per poll, and a tally their handlers keep, so that a
// poll reads counters instead of recounting the caches.
type readinessWatch struct {
	nodes, pods cache.SharedIndexInformer
	tally       *readinessTally
	stop        chan struct{}
}

func (f *Fleet) watchReadiness(ctx context.Context) (*readinessWatch, error) {
	w := &readinessWatch{stop: make(chan struct{}), tally: newReadinessTally(f.plan)}
	// The caches hold every node and pod of the fleet while the wait
	// lasts; they keep only what readiness and the stale-readiness fixer
	// read (SlimNode, SlimPod).
	nf := informers.NewSharedInformerFactoryWithOptions(f.client, 0, informers.WithTransform(SlimNode), informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.LabelSelector = f.RunSelector()
	}))
	pf := informers.NewSharedInformerFactoryWithOptions(f.client, 0, informers.WithTransform(SlimPod), informers.WithNamespace(f.plan.Namespace))
	w.nodes = nf.Core().V1().Nodes().Informer()
	w.pods = pf.Core().V1().Pods().Informer()
	nreg, err := w.nodes.AddEventHandler(handlers(w.tally.setNode, w.tally.deleteNode))
	if err != nil {
		return nil, fmt.Errorf("watching the fleet's nodes: %w", err)
	}
	preg, err := w.pods.AddEventHandler(handlers(w.tally.setPod, w.tally.deletePod))
	if err != nil {
		return nil, fmt.Errorf("watching the fleet's pods: %w", err)
	}
	nf.Start(w.stop)
	pf.Start(w.stop)
	sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	// The handlers' sync, not only the caches': the tally has counted the
	// initial lists before the first poll reads it.
	if !cache.WaitForCacheSync(sctx.Done(), w.nodes.HasSynced, w.pods.HasSynced, nreg.HasSynced, preg.HasSynced) {
		close(w.stop)
		return nil, fmt.Errorf("watching the fleet's nodes and pods: caches did not sync: %w", sctx.Err())
	}
	return w, nil
}

// staleNotReady: Running, containers ready, pod not ready for a while: the
// node-lifecycle controller's MarkPodsNotReady signature.
func staleNotReady(p *corev1.Pod, now time.Time) bool {
	if p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil {
		return false
	}
	var ready, containers *corev1.PodCondition
	for i := range p.Status.Conditions {
		switch p.Status.Conditions[i].Type {
		case corev1.PodReady:
			ready = &p.Status.Conditions[i]
		case corev1.ContainersReady:
			containers = &p.Status.Conditions[i]
		}
	}
	return ready != nil && containers != nil && ready.Status == corev1.ConditionFalse &&
		containers.Status == corev1.ConditionTrue && now.Sub(ready.LastTransitionTime.Time) > staleAfter
}

// WaitEndpointsReady waits until every endpoint in the run's EndpointSlices
// is ready, that is until the EndpointSlice controller has caught up with
// the pods' readiness: the last step of a full recovery. The not-ready
// endpoints are counted from an informer's events (endpointTally), so a
// poll reads a counter instead of listing every slice of the fleet.
func (f *Fleet) WaitEndpointsReady(ctx context.Context, timeout time.Duration) error {
	stop := make(chan struct{})
	defer close(stop)
	t := &endpointTally{bySlice: map[podKey]int{}}
	factory := informers.NewSharedInformerFactoryWithOptions(f.client, 0, informers.WithNamespace(f.plan.Namespace), informers.WithTransform(SlimEndpointSlice))
	inf := factory.Discovery().V1().EndpointSlices().Informer()
	reg, err := inf.AddEventHandler(handlers(t.set, t.delete))
	if err != nil {
		return fmt.Errorf("watching the EndpointSlices: %w", err)
	}
	factory.Start(stop)
	w := poll.Wait{Clock: f.clock, Interval: time.Second, Timeout: timeout, What: "waiting for the EndpointSlices to catch up"}
	return w.Until(ctx, func(ctx context.Context) (bool, string, error) {
		if !inf.HasSynced() || !reg.HasSynced() {
			return false, "the EndpointSlices not listed yet", nil
		}
		notReady := t.read()
		return notReady == 0, fmt.Sprintf("%d endpoints not ready", notReady), nil
	})
}

// endpointTally counts the not-ready endpoints of EndpointSlices by slice,
// from an informer's events: an event sets its slice's count, so duplicate
// events count once.
type endpointTally struct {
	mu       sync.Mutex
	bySlice  map[podKey]int
	notReady int
}

func (t *endpointTally) set(s *discoveryv1.EndpointSlice) {
	n := notReadyEndpoints(s)
	k := podKey{s.Namespace, s.Name}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.notReady += n - t.bySlice[k]
	t.bySlice[k] = n
}

func (t *endpointTally) delete(k podKey) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.notReady -= t.bySlice[k]
	delete(t.bySlice, k)
}

func (t *endpointTally) read() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.notReady
}

// notReadyEndpoints counts a slice's endpoints whose Ready condition is not
// true (unset counts as not ready, as the wait always did).
func notReadyEndpoints(s *discoveryv1.EndpointSlice) int {
	n := 0
	for _, ep := range s.Endpoints {
		if ep.Conditions.Ready == nil || !*ep.Conditions.Ready {
			n++
		}
	}
	return n
}

// SlimEndpointSlice is an informer transform for the EndpointSlice wait's
// cache, which reads only a slice's identity and its endpoints' conditions:
// addresses, target references, node names, zones, hints, ports and labels
// are dropped after decoding. Other objects only lose their managedFields.
func SlimEndpointSlice(obj any) (any, error) {
	s, ok := obj.(*discoveryv1.EndpointSlice)
	if !ok {
		return StripManagedFields(obj)
	}
	slim := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: s.Name, Namespace: s.Namespace, UID: s.UID, ResourceVersion: s.ResourceVersion},
		Endpoints:  make([]discoveryv1.Endpoint, len(s.Endpoints)),
	}
	for i, ep := range s.Endpoints {
		slim.Endpoints[i].Conditions = ep.Conditions
	}
	return slim, nil
}

// SlimPod is an informer transform for stormbench's fleet-wide pod caches
// (readiness, recovery): they hold every pod of the fleet for the whole run,
// 50,000 at 5,000 nodes, and read only a pod's identity, node, deletion,
// phase, conditions and container states. The rest of a pod (its spec's
// containers, volumes and tolerations, images and IDs in its status) is
// most of its size in memory and is dropped after decoding, so the request
// on the wire does not change. Other objects only lose their managedFields.
func SlimPod(obj any) (any, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return StripManagedFields(obj)
	}
	slim := &corev1.Pod{
		ObjectMeta: slimMeta(p.ObjectMeta),
		Spec:       corev1.PodSpec{NodeName: p.Spec.NodeName},
		Status: corev1.PodStatus{
			Phase:      p.Status.Phase,
			Conditions: p.Status.Conditions,
		},
	}
	if n := len(p.Status.ContainerStatuses); n > 0 {
		slim.Status.ContainerStatuses = make([]corev1.ContainerStatus, n)
		for i, c := range p.Status.ContainerStatuses {
			slim.Status.ContainerStatuses[i] = corev1.ContainerStatus{
				Name: c.Name, Ready: c.Ready, Started: c.Started, RestartCount: c.RestartCount, State: c.State,
			}
		}
	}
	return slim, nil
}

// SlimNode is an informer transform for the readiness wait's node cache,
// which holds every node of the fleet and reads only a node's name and its
// Ready condition. A KWOK node's status (its other conditions, capacity,
// allocatable, addresses, node info, images), spec, labels and annotations
// are dropped after
// decoding, so the request on the wire does not change. Other objects only
// lose their managedFields.
func SlimNode(obj any) (any, error) {
	n, ok := obj.(*corev1.Node)
	if !ok {
		return StripManagedFields(obj)
	}
	slim := &corev1.Node{ObjectMeta: slimMeta(n.ObjectMeta)}
	// The Ready condition alone, copied: the others (and their messages)
	// would stay alive through a shared slice.
	if c := NodeReadyCondition(n); c != nil {
		slim.Status.Conditions = []corev1.NodeCondition{*c}
	}
	return slim, nil
}

// slimMeta is what the slim pods and nodes keep of an object's metadata:
// its identity, creation and deletion.
func slimMeta(m metav1.ObjectMeta) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: m.Name, Namespace: m.Namespace, UID: m.UID, ResourceVersion: m.ResourceVersion,
		CreationTimestamp: m.CreationTimestamp, DeletionTimestamp: m.DeletionTimestamp}
}

// StripManagedFields is an informer transform that drops managedFields from
// cached objects, as kube-controller-manager's informers do: they are a
// large share of every object and nothing in stormbench reads them. It runs
// after decoding, so the requests on the wire do not change.
func StripManagedFields(obj any) (any, error) {
	if a, err := meta.Accessor(obj); err == nil && a.GetManagedFields() != nil {
		a.SetManagedFields(nil)
	}
	return obj, nil
}
