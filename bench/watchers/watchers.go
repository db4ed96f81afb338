package watchers

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	"github.com/stormbench/stormbench/bench/cluster"
	"github.com/stormbench/stormbench/bench/measure"
	"github.com/stormbench/stormbench/bench/poll"
	"github.com/stormbench/stormbench/bench/result"
	"github.com/stormbench/stormbench/bench/storm"
	"github.com/stormbench/stormbench/profiles"
)

// Name is the population's measurement name in results.
const Name = "steadyWatches"

// MergeRule is how shards' steady-watch figures combine: each shard holds
// the watches of its own nodes, so every figure is summed.
func MergeRule() result.MergeRule { return result.MergeRule{Scope: result.PerShard} }

// Figures of the measurement, labelled by result.LabelComponent and, for
// events and bytes, also by result.LabelResource.
const (
	// FigureWatchers is the population: nodes × watches per node.
	FigureWatchers = "watchers"
	// FigureOpenAtStormStart is the watches open (their response headers
	// received) when the storm started.
	FigureOpenAtStormStart = "watchers_open_at_storm_start"
	// FigureEvents is the ADDED, MODIFIED and DELETED events delivered in
	// the storm window.
	FigureEvents = "events"
	// FigureBookmarks is the BOOKMARK events delivered in the storm window.
	FigureBookmarks = "bookmarks"
	// FigureBytes is the bytes of watch frames delivered in the storm
	// window, framing included (the response body, before TLS).
	FigureBytes = "bytes"
	// FigureRenewed is watches that the API server ended at their
	// timeoutSeconds and that were reopened from their last
	// resourceVersion, as a reflector does every 5–10 minutes.
	FigureRenewed = "watches_renewed"
	// FigureReconnects is watches reopened after an error (a failed
	// request, a non-200 answer, a broken stream), with backoff.
	FigureReconnects = "reconnects"
	// FigureResyncs is watches opened with their initial events
	// (sendInitialEvents): after a 410 Expired, and a rebooted node's
	// kube-proxy starting again.
	FigureResyncs = "resyncs"
)

// Reflector timing (k8s.io/client-go tools/cache/reflector.go): watches ask
// for a timeout of minWatchTimeout × (1 + rand), and failures back off from
// 800 ms to 30 s (NewReflectorWithOptions' backoff manager).
const (
	minWatchTimeout = 5 * time.Minute
	backoffInitial  = 800 * time.Millisecond
	backoffMax      = 30 * time.Second
)

// openTimeout bounds Start's wait for the whole population to open.
const openTimeout = 5 * time.Minute

// kubeProxyUser is kube-proxy's user: the bootstrap RBAC policy binds
// system:node-proxier (list and watch Services, EndpointSlices,
// ServiceCIDRs, Nodes) to it (k8s.io/kubernetes
// plugin/pkg/auth/authorizer/rbac/bootstrappolicy policy.go;
// apiserver user.KubeProxy).
const kubeProxyUser = "system:kube-proxy"

// protobufStream is what the kubelet and kube-proxy accept: protobuf, their
// default content type, or JSON.
const protobufStream = "application/vnd.kubernetes.protobuf,application/json"

// Options configure a Population.
type Options struct {
	// Watches chooses the components; nil, or neither set, holds nothing.
	Watches *profiles.SteadyWatches
	// StormKind is the storm's kind (profiles.StormKubelet, ...): what a
	// restart takes down.
	StormKind string
	// Base is the harness's rest.Config: the watches impersonate each
	// node's kubelet and kube-proxy with its credentials.
	Base *rest.Config
	// Skip leaves nodes out (real kubelets, which hold their own); optional.
	Skip func(node string) bool
	// ShardIndex and ShardCount split the nodes between the processes of a
	// sharded run, as storm.Deal deals them; ShardCount 0 or 1 holds every
	// node.
	ShardIndex, ShardCount int
	// Accept is the Accept header of the watches; default protobuf, then
	// JSON, as the components ask.
	Accept string
}

// stats are one (component, resource)'s cumulative counters.
type stats struct {
	component, resource string
	events, bookmarks   atomic.Int64
	bytes               atomic.Int64
	renewed, reconnects atomic.Int64
	resyncs             atomic.Int64
	// open is the watches open now.
	open atomic.Int64
}

type snapshot struct {
	events, bookmarks, bytes, renewed, reconnects, resyncs int64
}

func (s *stats) snapshot() snapshot {
	return snapshot{s.events.Load(), s.bookmarks.Load(), s.bytes.Load(), s.renewed.Load(), s.reconnects.Load(), s.resyncs.Load()}
}

// plus is s plus k times o, counter by counter.
func (s snapshot) plus(k int64, o snapshot) snapshot {
	return snapshot{s.events + k*o.events, s.bookmarks + k*o.bookmarks, s.bytes + k*o.bytes,
		s.renewed + k*o.renewed, s.reconnects + k*o.reconnects, s.resyncs + k*o.resyncs}
}

// opener starts component's watches on node and returns what closes them.
// initial asks for their initial events (a restarted process); otherwise
// they resume from the population's latest resourceVersion of each
// collection.
type opener func(component, node string, initial bool) (closeWatches func())

// nodeWatches is one node's open watch groups, by component; a missing
// entry is closed.
type nodeWatches map[string]func()

// Population is the steady watch population of one variant's storm, and
// the measurement reporting it.
type Population struct {
	opts       Options
	components []string
	open       opener

	// stats by component and resource, fixed at New.
	stats map[string]*stats

	// latest is, per collection, the resourceVersion of the last event or
	// bookmark any of the population's watches received (or of its start
	// LIST): where reopened watches resume. Fixed keys, set at New; the
	// values are atomic, so a write fanned out to every node costs each
	// watch one store.
	latest map[string]*atomic.Pointer[string]

	clk clock.Clock
	url *url.URL

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex
	nodes    map[string]nodeWatches
	watchers map[string]int // by component
	begun    bool
	stopped  bool

	startMu     sync.Mutex
	stormStart  time.Time
	atStart     map[string]snapshot
	openAtStart map[string]int64
}

var _ measure.Measurement = (*Population)(nil)

// New returns the population opts describe. It holds nothing until Start,
// and nothing at all when opts.Watches enables no component.
func New(opts Options) *Population {
	p := &Population{opts: opts, clk: clock.RealClock{}, stats: map[string]*stats{}, latest: map[string]*atomic.Pointer[string]{},
		nodes: map[string]nodeWatches{}, watchers: map[string]int{}}
	if w := opts.Watches; w != nil {
		if w.Kubelet {
			p.components = append(p.components, ComponentKubelet)
		}
		if w.KubeProxy {
			p.components = append(p.components, ComponentKubeProxy)
		}
	}
	p.opts.Accept = cmp.Or(p.opts.Accept, protobufStream)
	for _, c := range p.components {
		for _, sp := range specsOf(c, "") {
			p.stats[statsKey(c, sp.resource)] = &stats{component: c, resource: sp.resource}
			if p.latest[sp.collection()] == nil {
				p.latest[sp.collection()] = &atomic.Pointer[string]{}
			}
		}
	}
	p.open = p.openWatches
	return p
}

func statsKey(component, resource string) string { return component + "/" + resource }

// Enabled reports whether the population holds any watch.
func (p *Population) Enabled() bool { return len(p.components) > 0 }

// With returns ctors with the population's measurement added when it is
// enabled, for measure.NewSetFrom.
func (p *Population) With(ctors map[string]measure.Constructor) map[string]measure.Constructor {
	if p.Enabled() {
		ctors[Name] = func(profiles.Measurements) (measure.Measurement, error) { return p, nil }
	}
	return ctors
}

// Name implements measure.Measurement.
func (p *Population) Name() string { return Name }

// goesDown reports whether a restart of kind stops component: the kubelet
// stops in a kubelet restart and a reboot; kube-proxy, a pod of the node,
// keeps running through kubelet and runtime restarts and stops only with
// the node.
func goesDown(component, kind string) bool {
	switch component {
	case ComponentKubelet:
		return kind == profiles.StormKubelet || kind == profiles.StormReboot
	case ComponentKubeProxy:
		return kind == profiles.StormReboot
	}
	return false
}

// NodeDown closes the watches of node's components that its restart stops
// (kubelet.NodeLifecycle, as NodeUp).
func (p *Population) NodeDown(node string) {
	p.withNode(node, func(nw nodeWatches, c string) {
		if closeWatches, ok := nw[c]; ok && goesDown(c, p.opts.StormKind) {
			closeWatches()
			delete(nw, c)
		}
	})
}

// NodeUp reopens node's closed watches when the node is handed back to
// KWOK: the kubelet's resume where the population is (the simulated
// kubelet synced its own while it stood in), kube-proxy's start over with
// their initial events, as a kube-proxy starting on a rebooted node does.
func (p *Population) NodeUp(node string) {
	p.withNode(node, func(nw nodeWatches, c string) {
		if _, ok := nw[c]; !ok {
			nw[c] = p.open(c, node, c == ComponentKubeProxy)
		}
	})
}

// withNode calls f with node's watches and each component, under the lock,
// while the population holds the node's watches.
func (p *Population) withNode(node string, f func(nw nodeWatches, component string)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if nw := p.nodes[node]; p.begun && !p.stopped && nw != nil {
		for _, c := range p.components {
			f(nw, c)
		}
	}
}

// begin opens every node's watches.
func (p *Population) begin(nodes []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.begun = true
	for _, n := range nodes {
		nw := nodeWatches{}
		for _, c := range p.components {
			nw[c] = p.open(c, n, false)
			p.watchers[c] += WatchesPerNode(c)
		}
		p.nodes[n] = nw
	}
}

// Start lists the fleet's nodes, reads each watched collection's current
// resourceVersion (one LIST with limit=1 per collection: the population
// stands for components that synced long ago, so it starts without initial
// events), opens every node's watches and waits until all are open.
func (p *Population) Start(ctx context.Context, env *measure.Env) error {
	if !p.Enabled() {
		return nil
	}
	if p.opts.Base == nil {
		return errors.New("steady watches: no base rest.Config")
	}
	p.clk = env.Clock
	u, _, err := rest.DefaultServerUrlFor(p.opts.Base)
	if err != nil {
		return fmt.Errorf("steady watches: API server URL: %w", err)
	}
	p.url = u
	if _, err = rest.TLSConfigFor(p.opts.Base); err != nil {
		return fmt.Errorf("steady watches: TLS configuration: %w", err)
	}
	list, err := env.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: env.NodeSelector, ResourceVersion: "0"})
	if err != nil {
		return fmt.Errorf("steady watches: listing the fleet's nodes: %w", err)
	}
	names := make([]string, 0, len(list.Items))
	for _, n := range list.Items {
		if p.opts.Skip == nil || !p.opts.Skip(n.Name) {
			names = append(names, n.Name)
		}
	}
	names = storm.Deal(names, p.opts.ShardIndex, p.opts.ShardCount)
	if err := p.listResourceVersions(ctx); err != nil {
		return err
	}
	p.ctx, p.cancel = context.WithCancel(context.WithoutCancel(ctx))
	p.begin(names)
	total := int64(0)
	for _, c := range p.components {
		total += int64(p.watchers[c])
	}
	w := poll.Wait{Clock: p.clk, Interval: 100 * time.Millisecond, Timeout: openTimeout, What: fmt.Sprintf("steady watches: waiting for %d watches to open", total)}
	return w.Until(ctx, func(context.Context) (bool, string, error) {
		var open int64
		for _, s := range p.stats {
			open += s.open.Load()
		}
		return open >= total, fmt.Sprintf("%d open", open), nil
	})
}

// clientConfig is component's identity on node: the simulated kubelet's
// (system:node:<node>, cluster.KubeletClientConfig), or kube-proxy's.
func (p *Population) clientConfig(component, node string) *rest.Config {
	if component == ComponentKubelet {
		return cluster.KubeletClientConfig(p.opts.Base, node, nil)
	}
	cfg := rest.CopyConfig(p.opts.Base)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: kubeProxyUser, Groups: []string{"system:authenticated"}}
	cfg.UserAgent = "kube-proxy/v1.36.3 (linux/amd64) stormbench"
	cfg.WrapTransport = nil
	return cfg
}

// openWatches is the production opener: component's watches on node, one
// goroutine each, over one connection of their own
// (cluster.NodeTransport): each node's kubelet and kube-proxy is a process
// with its own connection, and a restarted one dials a new one. A base
// config with a transport or dialer of its own keeps it.
func (p *Population) openWatches(component, node string, initial bool) func() {
	ctx, cancel := context.WithCancel(p.ctx)
	cfg := p.clientConfig(component, node) // a copy of its own
	t, err := cluster.NodeTransport(p.opts.Base, cfg)
	var c *http.Client
	if err == nil {
		c, err = rest.HTTPClientFor(cfg)
	}
	if err != nil {
		// Only a broken base config gets here, and Start already used it.
		cancel()
		return func() {}
	}
	var wg sync.WaitGroup
	for _, sp := range specsOf(component, node) {
		st := p.stats[statsKey(component, sp.resource)]
		wg.Add(1)
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			defer wg.Done()
			p.watch(ctx, c, st, sp, initial)
		}()
	}
	return func() {
		cancel()
		if t == nil {
			return
		}
		// The process is gone: its connection closes once its streams
		// have.
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			wg.Wait()
			t.CloseIdleConnections()
		}()
	}
}

// MarkStormStart implements measure.Measurement: the storm window's
// counters start here.
func (p *Population) MarkStormStart(t time.Time) {
	p.startMu.Lock()
	defer p.startMu.Unlock()
	p.stormStart = t
	p.atStart = map[string]snapshot{}
	p.openAtStart = map[string]int64{}
	for k, s := range p.stats {
		p.atStart[k] = s.snapshot()
		p.openAtStart[s.component] += s.open.Load()
	}
}

// Gather implements measure.Measurement: the population's size, the
// watches open at the storm's start, and what was delivered since, per
// component (and per resource for events and bytes).
func (p *Population) Gather(context.Context) (result.Measurement, error) {
	p.startMu.Lock()
	defer p.startMu.Unlock()
	m := result.Measurement{Name: Name}
	if p.atStart == nil {
		return m, errors.New("steady watches: the storm never started")
	}
	end := p.clk.Now()
	m.Windows = []result.Window{{Name: result.WindowStorm, Start: p.stormStart, End: end}}
	p.mu.Lock()
	watchers := maps.Clone(p.watchers)
	p.mu.Unlock()
	sums := map[string]snapshot{}
	val := func(name, unit string, v int64, labels map[string]string) {
		m.Values = append(m.Values, result.Value{Name: name, Window: result.WindowStorm, Unit: unit, Value: float64(v), Labels: labels})
	}
	for _, k := range slices.Sorted(maps.Keys(p.stats)) {
		s := p.stats[k]
		d := s.snapshot().plus(-1, p.atStart[k])
		labels := map[string]string{result.LabelComponent: s.component, result.LabelResource: s.resource}
		val(FigureEvents, result.UnitEvents, d.events, labels)
		val(FigureBytes, result.UnitBytes, d.bytes, labels)
		sums[s.component] = sums[s.component].plus(1, d)
	}
	for _, c := range p.components {
		labels := map[string]string{result.LabelComponent: c}
		s := sums[c]
		val(FigureWatchers, result.UnitCount, int64(watchers[c]), labels)
		val(FigureOpenAtStormStart, result.UnitCount, p.openAtStart[c], labels)
		val(FigureEvents, result.UnitEvents, s.events, labels)
		val(FigureBookmarks, result.UnitEvents, s.bookmarks, labels)
		val(FigureBytes, result.UnitBytes, s.bytes, labels)
		val(FigureRenewed, result.UnitCount, s.renewed, labels)
		val(FigureReconnects, result.UnitCount, s.reconnects, labels)
		val(FigureResyncs, result.UnitCount, s.resyncs, labels)
		if open := p.openAtStart[c]; open < int64(watchers[c]) {
			m.Warnings = append(m.Warnings, fmt.Sprintf("%s: %d of %d steady watches were open when the storm started", c, open, watchers[c]))
		}
	}
	m.Sort()
	return m, nil
}

// Dispose implements measure.Measurement: every watch closes and its
// goroutine ends.
func (p *Population) Dispose() {
	p.mu.Lock()
	if p.stopped {
		p.mu.Unlock()
		return
	}
	p.stopped = true
	for _, nw := range p.nodes {
		for c, closeWatches := range nw {
			closeWatches()
			delete(nw, c)
		}
	}
	p.mu.Unlock()
	if p.cancel != nil {
		p.cancel()
	}
	p.wg.Wait()
}
