package churn

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/stormbench/stormbench/bench/fleet"
	"github.com/stormbench/stormbench/bench/measure"
	"github.com/stormbench/stormbench/bench/measure/internal/track"
	"github.com/stormbench/stormbench/bench/poll"
	"github.com/stormbench/stormbench/bench/result"
)

// Options configure the endpointSlices measurement.
type Options struct {
	// Watchers opens this many extra watches on the run's EndpointSlices,
	// each decoding every event and discarding it, to load the API server's
	// watch fan-out the way kube-proxies would.
	Watchers int
	// SyncTimeout bounds the initial list of the watches; default 2m.
	SyncTimeout time.Duration
}

// Churn watches the run namespace's EndpointSlices and Services
// from before the storm and counts churn with a SliceTracker.
type Churn struct {
	opts Options

	env     *measure.Env
	tracker *SliceTracker
	stop    chan struct{}
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	once    sync.Once

	watcherEvents   atomic.Int64
	watcherRestarts atomic.Int64
	mu              sync.Mutex
	watcherErr      []string
}

var _ measure.Measurement = (*Churn)(nil)

// New validates opts and returns the measurement.
func New(opts Options) (*Churn, error) {
	if opts.Watchers < 0 {
		return nil, fmt.Errorf("watchers %d must not be negative", opts.Watchers)
	}
	if opts.SyncTimeout == 0 {
		opts.SyncTimeout = 2 * time.Minute
	}
	return &Churn{opts: opts, stop: make(chan struct{})}, nil
}

// Name implements Measurement.
func (m *Churn) Name() string { return Name }

// Start opens the EndpointSlice and Service informers of env.Namespace,
// waits for their initial lists, then starts the extra watchers.
func (m *Churn) Start(ctx context.Context, env *measure.Env) error {
	if env.Namespace == "" {
		return errors.New("env.Namespace is empty")
	}
	m.env = env
	m.tracker = NewSliceTracker(env.Clock)
	// The tracker reads endpoints, not managedFields: an EndpointSlice's
	// managedFields name every endpoint again.
	factory := informers.NewSharedInformerFactoryWithOptions(env.Client, 0, informers.WithNamespace(env.Namespace),
		informers.WithTransform(fleet.StripManagedFields))
	slices := factory.Discovery().V1().EndpointSlices().Informer()
	services := factory.Core().V1().Services().Informer()
	if _, err := slices.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			if s, ok := obj.(*discoveryv1.EndpointSlice); ok {
				m.tracker.OnAdd(s, initial)
			}
		},
		UpdateFunc: func(old, cur any) {
			o, _ := old.(*discoveryv1.EndpointSlice)
			if c, ok := cur.(*discoveryv1.EndpointSlice); ok {
				m.tracker.OnUpdate(o, c)
			}
		},
		DeleteFunc: func(obj any) {
			if s, ok := track.UnwrapTombstone(obj).(*discoveryv1.EndpointSlice); ok {
				m.tracker.OnDelete(s)
			}
		},
	}); err != nil {
		return fmt.Errorf("watching EndpointSlices: %w", err)
	}
	if _, err := services.AddEventHandler(track.Handler(func(s *corev1.Service, deleted bool) {
		m.tracker.OnService(s.Namespace, s.Name, deleted)
	})); err != nil {
		return fmt.Errorf("watching Services: %w", err)
	}
	factory.Start(m.stop)
	// Shutdown waits for the informer goroutines; run it when disposing.
	m.wg.Go(func() {
		<-m.stop
		factory.Shutdown()
	})
	if err := track.WaitForSync(ctx, m.opts.SyncTimeout, "EndpointSlices and Services of namespace "+env.Namespace, slices.HasSynced, services.HasSynced); err != nil {
		return err
	}
	if m.opts.Watchers > 0 {
		wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		m.cancel = cancel
		rv := slices.LastSyncResourceVersion()
		for range m.opts.Watchers {
			m.wg.Go(func() { m.runWatcher(wctx, rv) })
		}
	}
	return nil
}

// runWatcher is one extra watcher: it watches the run's EndpointSlices from
// rv, lets the client decode every event into an EndpointSlice and drops
// it, and re-watches from the last resourceVersion it saw when the server
// ends the watch.
func (m *Churn) runWatcher(ctx context.Context, rv string) {
	client := m.env.Client.DiscoveryV1().EndpointSlices(m.env.Namespace)
	for ctx.Err() == nil {
		w, err := client.Watch(ctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true})
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			m.watcherError(err)
			if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
				rv = ""
			}
			_ = poll.Sleep(ctx, m.env.Clock, time.Second)
			continue
		}
		rv = m.drain(ctx, w, rv)
		if ctx.Err() == nil {
			m.watcherRestarts.Add(1)
		}
	}
}

// drain consumes one watch and returns the last resourceVersion seen.
func (m *Churn) drain(ctx context.Context, w watch.Interface, rv string) string {
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return rv
		case ev, ok := <-w.ResultChan():
			if !ok {
				return rv
			}
			switch ev.Type {
			case watch.Error:
				m.watcherError(apierrors.FromObject(ev.Object))
				return "" // typically 410 Gone: start again from now
			case watch.Bookmark:
			default:
				m.watcherEvents.Add(1)
			}
			if o, ok := ev.Object.(metav1.Object); ok && o.GetResourceVersion() != "" {
				rv = o.GetResourceVersion()
			}
		}
	}
}

func (m *Churn) watcherError(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.watcherErr) < track.MaxWarnings {
		m.watcherErr = append(m.watcherErr, fmt.Sprintf("extra watcher: %v", err))
	}
}

// MarkStormStart implements Measurement.
func (m *Churn) MarkStormStart(t time.Time) {
	if m.tracker != nil {
		m.tracker.MarkStormStart(t)
	}
}

// Gather implements Measurement. The watches keep running until Dispose.
func (m *Churn) Gather(context.Context) (result.Measurement, error) {
	if m.tracker == nil {
		return result.Measurement{Name: m.Name()}, errors.New("not started")
	}
	out := churnResult(m.tracker.Snapshot(), m.env.Nodes)
	if m.opts.Watchers > 0 {
		out.Values = append(out.Values,
			result.Value{Name: SliceWatcherEvents, Unit: result.UnitEvents, Value: float64(m.watcherEvents.Load())},
			result.Value{Name: SliceWatcherRestarts, Unit: result.UnitCount, Value: float64(m.watcherRestarts.Load())})
	}
	m.mu.Lock()
	out.Warnings = append(out.Warnings, m.watcherErr...)
	m.mu.Unlock()
	return out, nil
}

// Dispose stops the informers and watchers and waits for them.
func (m *Churn) Dispose() {
	m.once.Do(func() {
		if m.cancel != nil {
			m.cancel()
		}
		close(m.stop)
	})
	m.wg.Wait()
}
