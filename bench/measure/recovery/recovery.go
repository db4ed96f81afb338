package recovery

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/stormbench/stormbench/bench/fleet"
	"github.com/stormbench/stormbench/bench/measure"
	"github.com/stormbench/stormbench/bench/measure/internal/track"
	"github.com/stormbench/stormbench/bench/result"
	"github.com/stormbench/stormbench/bench/storm"
)

// Options configure the recovery measurement.
type Options struct {
	// PerPod records per-pod recovery (a pod watch on the run namespace).
	PerPod bool
	// SyncTimeout bounds the initial list of the watches; default 2m.
	SyncTimeout time.Duration
}

// Recovery is the recovery measurement: it watches the run's nodes, pods
// and EndpointSlices from before the storm with a Tracker, and at
// Gather matches what it saw with the times the storm's restarts took their
// nodes down (env.Outcomes).
type Recovery struct {
	opts Options

	env     *measure.Env
	tracker *Tracker
	leases  *LeaseTracker
	stormMu sync.Mutex
	stormAt time.Time
	stop    chan struct{}
	wg      sync.WaitGroup
	once    sync.Once
}

var _ measure.Measurement = (*Recovery)(nil)

// New returns the measurement.
func New(opts Options) *Recovery {
	if opts.SyncTimeout <= 0 {
		opts.SyncTimeout = 2 * time.Minute
	}
	return &Recovery{opts: opts, stop: make(chan struct{})}
}

// Name implements Measurement.
func (m *Recovery) Name() string { return Name }

// Start opens the node (env.NodeSelector), pod and EndpointSlice informers
// and waits for their initial lists.
func (m *Recovery) Start(ctx context.Context, env *measure.Env) error {
	if env.Namespace == "" {
		return errors.New("env.Namespace is empty")
	}
	m.env = env
	m.tracker = NewTracker(env.Clock)
	// Nothing here reads managedFields; the caches keep them out.
	strip := informers.WithTransform(fleet.StripManagedFields)
	nodeFactory := informers.NewSharedInformerFactoryWithOptions(env.Client, 0, strip,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = env.NodeSelector }))
	// The namespace's pods (PerPod) are the whole fleet's: the cache keeps
	// only what the tracker reads (fleet.SlimPod; slices lose managedFields).
	nsFactory := informers.NewSharedInformerFactoryWithOptions(env.Client, 0, informers.WithTransform(fleet.SlimPod), informers.WithNamespace(env.Namespace))

	// Node leases, for the healthy nodes' renewals (LeaseTracker). They
	// carry no labels; a lease of a node outside the run is never matched
	// with the run's nodes, so it only costs its cache entry.
	m.leases = NewLeaseTracker()
	leaseFactory := informers.NewSharedInformerFactoryWithOptions(env.Client, 0, strip, informers.WithNamespace(corev1.NamespaceNodeLease))
	leases := leaseFactory.Coordination().V1().Leases().Informer()

	nodes := nodeFactory.Core().V1().Nodes().Informer()
	slices := nsFactory.Discovery().V1().EndpointSlices().Informer()
	synced := []cache.InformerSynced{nodes.HasSynced, slices.HasSynced, leases.HasSynced}
	handlers := map[cache.SharedIndexInformer]cache.ResourceEventHandler{
		nodes: track.Handler(func(n *corev1.Node, deleted bool) {
			if !deleted {
				m.tracker.ObserveNode(n)
			}
		}),
		leases: track.Handler(func(l *coordinationv1.Lease, deleted bool) {
			if deleted || l.Spec.RenewTime == nil {
				return
			}
			var d time.Duration
			if l.Spec.LeaseDurationSeconds != nil {
				d = time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
			}
			m.leases.Observe(l.Name, d, l.Spec.RenewTime.Time)
		}),
		slices: track.Handler(m.tracker.ObserveSlice),
	}
	if m.opts.PerPod {
		pods := nsFactory.Core().V1().Pods().Informer()
		synced = append(synced, pods.HasSynced)
		handlers[pods] = track.Handler(m.tracker.ObservePod)
	}
	for inf, h := range handlers {
		if _, err := inf.AddEventHandler(h); err != nil {
			return fmt.Errorf("adding a watch handler: %w", err)
		}
	}
	nodeFactory.Start(m.stop)
	nsFactory.Start(m.stop)
	leaseFactory.Start(m.stop)
	m.wg.Go(func() {
		<-m.stop
		nodeFactory.Shutdown()
		nsFactory.Shutdown()
		leaseFactory.Shutdown()
	})
	return track.WaitForSync(ctx, m.opts.SyncTimeout, "nodes, pods and EndpointSlices", synced...)
}

// MarkStormStart implements Measurement. Restart times come from the
// storm's outcomes; the start bounds the healthy nodes' lease window.
func (m *Recovery) MarkStormStart(t time.Time) {
	m.stormMu.Lock()
	defer m.stormMu.Unlock()
	m.stormAt = t
}

// Gather implements Measurement.
func (m *Recovery) Gather(context.Context) (result.Measurement, error) {
	if m.tracker == nil {
		return result.Measurement{Name: m.Name()}, errors.New("not started")
	}
	outcomes := m.env.Outcomes.All()
	out, err := recoveryResult(m.tracker.Compute(outcomes), m.opts.PerPod)
	m.stormMu.Lock()
	from := m.stormAt
	m.stormMu.Unlock()
	if !from.IsZero() {
		out.Values = append(out.Values, m.leases.Compute(outcomes, from, m.env.Clock.Now()).values()...)
	}
	if storm.Restarts(outcomes) == 0 {
		out.Warnings = append(out.Warnings, "no restart of the storm took its node down: nothing to measure recovery from")
	}
	return out, err
}

// Dispose stops the watches and waits for them.
func (m *Recovery) Dispose() {
	m.once.Do(func() { close(m.stop) })
	m.wg.Wait()
}
