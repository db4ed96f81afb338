package calibrate

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/stormbench/stormbench/bench/fleet"
	"github.com/stormbench/stormbench/bench/measure/recovery"
)

// The Ready transitions of the run's pods and nodes, as the calibration
// watches them: recorded by the recovery measurement's tracker
// (recovery.Tracker), the one Ready tracker of runs and
// calibrations.

// watch records every pod and node Ready transition of the run.
func (c *calibration) watch(ctx context.Context) (stop func(), err error) {
	f := informers.NewSharedInformerFactoryWithOptions(c.o.Target.Client, 0, informers.WithNamespace(c.ns))
	nf := informers.NewSharedInformerFactoryWithOptions(c.o.Target.Client, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = fleet.RunLabel + "=" + c.o.RunID }))
	ch := make(chan struct{})
	stop = func() { close(ch); f.Shutdown(); nf.Shutdown() }
	watches := []struct {
		what    string
		f       informers.SharedInformerFactory
		inf     cache.SharedIndexInformer
		observe func(any)
	}{{"pod", f, f.Core().V1().Pods().Informer(), c.observePod}, {"node", nf, nf.Core().V1().Nodes().Informer(), c.observeNode}}
	for _, w := range watches {
		if _, err := w.inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: w.observe, UpdateFunc: func(_, o any) { w.observe(o) }}); err != nil {
			stop()
			return nil, err
		}
		w.f.Start(ch)
	}
	for _, w := range watches {
		if !cache.WaitForCacheSync(ctx.Done(), w.inf.HasSynced) {
			stop()
			return nil, fmt.Errorf("calibration: %s watch did not sync", w.what)
		}
	}
	return stop, nil
}

// observePod records a scheduled pod's readiness in the tracker.
func (c *calibration) observePod(o any) {
	if p, ok := o.(*corev1.Pod); ok && p.Spec.NodeName != "" {
		c.tracker.ObservePod(p, false)
	}
}

// observeNode records a node's readiness in the tracker.
func (c *calibration) observeNode(o any) {
	if n, ok := o.(*corev1.Node); ok {
		c.tracker.ObserveNode(n)
	}
}

// notReadyDurations pairs each pod's Ready→NotReady flip with its next
// NotReady→Ready one; a pod still not ready at the end counts up to the
// end of its node's window, endOf(node).
func notReadyDurations(flips []recovery.Transition, endOf func(node string) time.Time) []time.Duration {
	byPod := map[string][]recovery.Transition{}
	for _, f := range flips {
		byPod[f.Object] = append(byPod[f.Object], f)
	}
	var out []time.Duration // sorted at the end: the pods' order does not matter
	for _, pf := range byPod {
		var down time.Time
		node := pf[0].Node
		for _, f := range pf {
			switch {
			case !f.Ready && down.IsZero():
				down = f.At
			case f.Ready && !down.IsZero():
				out = append(out, f.At.Sub(down))
				down = time.Time{}
			}
		}
		if !down.IsZero() {
			out = append(out, endOf(node).Sub(down))
		}
	}
	slices.Sort(out)
	return out
}
