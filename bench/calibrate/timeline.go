package calibrate

import (
	"context"
	"errors"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

	"github.com/stormbench/stormbench/bench/fleet"
)

// The Ready transitions of the run's pods and nodes, as the calibration watches them.

// watch records every pod and node Ready transition of the run.
func (c *calibration) watch(ctx context.Context) (stop func(), err error) {
	f := informers.NewSharedInformerFactoryWithOptions(c.o.Target.Client, 0, informers.WithNamespace(c.ns))
	nf := informers.NewSharedInformerFactoryWithOptions(c.o.Target.Client, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = fleet.RunLabel + "=" + c.o.RunID }))
	podInf := f.Core().V1().Pods().Informer()
	nodeInf := nf.Core().V1().Nodes().Informer()
	if _, err := podInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { c.timeline.pod(o) },
		UpdateFunc: func(_, o any) { c.timeline.pod(o) },
	}); err != nil {
		return nil, err
	}
	if _, err := nodeInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { c.timeline.node(o) },
		UpdateFunc: func(_, o any) { c.timeline.node(o) },
	}); err != nil {
		return nil, err
	}
	ch := make(chan struct{})
	f.Start(ch)
	nf.Start(ch)
	for _, ok := range f.WaitForCacheSync(ctx.Done()) {
		if !ok {
			close(ch)
			return nil, errors.New("calibration: pod watch did not sync")
		}
	}
	for _, ok := range nf.WaitForCacheSync(ctx.Done()) {
		if !ok {
			close(ch)
			return nil, errors.New("calibration: node watch did not sync")
		}
	}
	return func() { close(ch); f.Shutdown(); nf.Shutdown() }, nil
}

// timeline records Ready transitions as the harness's watch sees them.
type timeline struct {
	clk clock.PassiveClock
	mu  sync.Mutex
	// pods and nodes hold the last readiness seen of each.
	pods  map[string]bool
	nodes map[string]bool
	// podFlips and nodeFlips are every transition seen.
	podFlips  []flip
	nodeFlips []flip
}

// flip is one Ready transition.
type flip struct {
	at    time.Time
	node  string
	obj   string
	ready bool
	// message is the Ready condition's message of a node going not ready.
	message string
}

func newTimeline(clk clock.PassiveClock) *timeline {
	return &timeline{clk: clk, pods: map[string]bool{}, nodes: map[string]bool{}}
}

func (t *timeline) pod(o any) {
	if p, ok := o.(*corev1.Pod); ok && p.Spec.NodeName != "" {
		t.observe(t.pods, &t.podFlips, p.Name, p.Spec.NodeName, fleet.PodReady(p), "")
	}
}

func (t *timeline) node(o any) {
	if n, ok := o.(*corev1.Node); ok {
		var message string
		if c := fleet.NodeReadyCondition(n); c != nil {
			message = c.Message
		}
		t.observe(t.nodes, &t.nodeFlips, n.Name, n.Name, fleet.NodeReady(n), message)
	}
}

// observe records obj's readiness and, when it changed since the last
// sighting, a flip.
func (t *timeline) observe(last map[string]bool, flips *[]flip, obj, node string, ready bool, message string) {
	now := t.clk.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	prev, seen := last[obj]
	last[obj] = ready
	if seen && prev != ready {
		*flips = append(*flips, flip{at: now, node: node, obj: obj, ready: ready, message: message})
	}
}

// between returns the pod and node flips in [from, to).
func (t *timeline) between(from, to time.Time) (pods, nodes []flip) {
	t.mu.Lock()
	defer t.mu.Unlock()
	in := func(fs []flip) []flip {
		var out []flip
		for _, f := range fs {
			if !f.at.Before(from) && f.at.Before(to) {
				out = append(out, f)
			}
		}
		return out
	}
	return in(t.podFlips), in(t.nodeFlips)
}

// notReadyDurations pairs each pod's Ready→NotReady flip with its next
// NotReady→Ready one; a pod still not ready at the end counts up to end.
func notReadyDurations(flips []flip, end time.Time) []time.Duration {
	byPod := map[string][]flip{}
	var order []string
	for _, f := range flips {
		if _, ok := byPod[f.obj]; !ok {
			order = append(order, f.obj)
		}
		byPod[f.obj] = append(byPod[f.obj], f)
	}
	var out []time.Duration
	for _, pod := range order {
		var down time.Time
		for _, f := range byPod[pod] {
			switch {
			case !f.ready && down.IsZero():
				down = f.at
			case f.ready && !down.IsZero():
				out = append(out, f.at.Sub(down))
				down = time.Time{}
			}
		}
		if !down.IsZero() {
			out = append(out, end.Sub(down))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
