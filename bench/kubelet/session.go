package kubelet

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/kubernetes/scheme"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	nodev1client "k8s.io/client-go/kubernetes/typed/node/v1"
	resourcev1client "k8s.io/client-go/kubernetes/typed/resource/v1"
	storagev1client "k8s.io/client-go/kubernetes/typed/storage/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/utils/clock"

	"github.com/stormbench/stormbench/bench/fleet"
	"github.com/stormbench/stormbench/bench/poll"
)

// Client settings of a kubelet (pkg/kubelet/apis/config/v1beta1/defaults.go:
// KubeAPIQPS 50, KubeAPIBurst 100, ContentType application/vnd.kubernetes.protobuf).
const (
	kubeletQPS         = 50
	kubeletBurst       = 100
	kubeletContentType = "application/vnd.kubernetes.protobuf"
	// nodeLeaseNamespace holds node leases (pkg/kubelet/kubelet.go).
	nodeLeaseNamespace = corev1.NamespaceNodeLease
)

// NodeUser returns the user name a node's kubelet authenticates as.
func NodeUser(node string) string { return "system:node:" + node }

// ClientConfig returns the rest.Config of node's simulated kubelet: the
// harness's credentials impersonating system:node:<node> in group
// system:nodes, with the kubelet's QPS, burst and protobuf content type.
// wrap, when set, records every request.
func ClientConfig(base *rest.Config, node string, wrap func(http.RoundTripper) http.RoundTripper) *rest.Config {
	cfg := rest.CopyConfig(base)
	cfg.Impersonate = rest.ImpersonationConfig{
		UserName: NodeUser(node),
		Groups:   []string{"system:nodes", "system:authenticated"},
	}
	cfg.QPS = kubeletQPS
	cfg.Burst = kubeletBurst
	cfg.ContentType = kubeletContentType
	cfg.AcceptContentTypes = kubeletContentType + ",application/json"
	cfg.UserAgent = "kubelet/v1.36.3 (linux/amd64) stormbench"
	cfg.WrapTransport = nil
	if wrap != nil {
		cfg.Wrap(wrap)
	}
	return cfg
}

// kubeletClient is the part of a clientset a simulated kubelet uses: core
// (pods, nodes, services, events, tokens, secrets, configmaps), storage
// (CSINode, CSIDriver), node (RuntimeClass) and coordination (Lease).
// A *kubernetes.Clientset satisfies it; newKubeletClient builds only these
// four groups, because a full clientset is some fifty REST clients, about
// 25 KiB per kubelet and two per kubelet (main and heartbeat), held by
// every kubelet syncing in a storm. The requests are the same.
type kubeletClient interface {
	CoreV1() corev1client.CoreV1Interface
	StorageV1() storagev1client.StorageV1Interface
	NodeV1() nodev1client.NodeV1Interface
	CoordinationV1() coordinationv1client.CoordinationV1Interface
	ResourceV1() resourcev1client.ResourceV1Interface
}

type groupClients struct {
	core         *corev1client.CoreV1Client
	storage      *storagev1client.StorageV1Client
	node         *nodev1client.NodeV1Client
	coordination *coordinationv1client.CoordinationV1Client
	resource     *resourcev1client.ResourceV1Client
}

func (c *groupClients) CoreV1() corev1client.CoreV1Interface          { return c.core }
func (c *groupClients) StorageV1() storagev1client.StorageV1Interface { return c.storage }
func (c *groupClients) NodeV1() nodev1client.NodeV1Interface          { return c.node }
func (c *groupClients) CoordinationV1() coordinationv1client.CoordinationV1Interface {
	return c.coordination
}
func (c *groupClients) ResourceV1() resourcev1client.ResourceV1Interface { return c.resource }

// withRateLimiter returns a copy of cfg with one token-bucket rate limiter
// for every client built from it, as a clientset's groups share one
// (kubernetes.NewForConfigAndClient).
func withRateLimiter(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	if cfg.RateLimiter == nil && cfg.QPS > 0 {
		cfg.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(cfg.QPS, cfg.Burst)
	}
	return cfg
}

// newKubeletClient is kubernetes.NewForConfigAndClient for the four groups
// (core/v1 with its pods decoded by coreClient)
// of kubeletClient; cfg comes from withRateLimiter, so they share one rate
// limiter.
func newKubeletClient(cfg *rest.Config, httpClient *http.Client) (*groupClients, error) {
	var c groupClients
	var err error
	if c.core, err = coreClient(cfg, httpClient); err != nil {
		return nil, err
	}
	if c.storage, err = storagev1client.NewForConfigAndClient(cfg, httpClient); err != nil {
		return nil, err
	}
	if c.node, err = nodev1client.NewForConfigAndClient(cfg, httpClient); err != nil {
		return nil, err
	}
	if c.coordination, err = coordinationv1client.NewForConfigAndClient(cfg, httpClient); err != nil {
		return nil, err
	}
	if c.resource, err = resourcev1client.NewForConfigAndClient(cfg, httpClient); err != nil {
		return nil, err
	}
	return &c, nil
}

// session is one running simulated kubelet: its clients and the informers it
// holds open while it is up.
type session struct {
	node   string
	client kubeletClient
	// lists builds the list-watches of the kubelet's informers and
	// reflectors (restListWatches on a real API server).
	lists listWatchSource
	// heartbeat is the separate client the kubelet uses for leases and node
	// status (kubelet.go: heartbeatClient).
	heartbeat kubeletClient
	clk       clock.Clock
	// started is when this kubelet started (the prober manager's start).
	started time.Time
	// statusIdleAt is when the status manager's last pod status sync
	// ended (syncPodStatus), in Unix nanoseconds: before it, the status
	// manager was busy.
	statusIdleAt atomic.Int64
	// lastIP is the offset in the node's pod CIDR of the last pod IP this
	// boot handed out (newPodIP).
	lastIP uint32

	stopOnce sync.Once
	stop     chan struct{}
	wg       sync.WaitGroup

	// syncTimeout bounds every wait for an initial sync, and retries.
	syncTimeout time.Duration
	// retries counts retried requests; may be nil.
	retries *atomic.Int64
	// gaveUp is told about pod status syncs dropped after their retry
	// budget; may be nil.
	gaveUp func(pod string, err error)

	// transport is this kubelet's own connection pool (see nodeTransport);
	// nil when the base config brings its own transport.
	transport *http.Transport

	// noWatchList turns client-go's WatchListClient off for this kubelet's
	// reflectors: each initial sync is a LIST and then a WATCH, as a
	// kubelet started with --feature-gates=WatchListClient=false does
	// (client-go tools/cache/reflector.go: the gate, read when a reflector
	// is made, picks watch-list or list-then-watch).
	noWatchList bool

	// leaseRenewed is when the lease controller last renewed the lease
	// (UnixNano; 0 before the first renewal), and leaseInterval its renew
	// interval then: the handback to KWOK waits for the next renewal.
	leaseRenewed, leaseInterval atomic.Int64

	nodeInf cache.SharedIndexInformer
	// podStore is the store of the pod source reflector.
	podStore *podStore
	// knownNode is the node as the kubelet knew it without an informer (a
	// runtime restart's kubelet keeps running); patchedReady is the Ready
	// status it last patched (patchNodeReady). newBootID, when set, is a
	// boot ID the next node status patch reports (after a reboot), and
	// newRuntimeVersion a nodeInfo.containerRuntimeVersion (its runtime
	// down, then back).
	knownNode         *corev1.Node
	patchedReady      corev1.ConditionStatus
	newBootID         string
	newRuntimeVersion string

	// events is the kubelet's event client (cmd/kubelet/app/server.go
	// EventClient): the same connection, a rate limiter of its own
	// (eventRecordQPS 50, eventBurst 100). Events are recorded
	// asynchronously, as client-go's broadcaster sends them from its own
	// goroutine (tools/record/event.go StartRecordingToSink): they never
	// hold up the start-up sequence. eventQ is that queue (1,000 deep, as
	// the broadcaster's; an event that finds it full is dropped).
	events        corev1client.EventsGetter
	eventQ        chan func()
	eventsDone    chan struct{}
	eventsClosed  sync.Once
	eventsDropped *atomic.Int64
	// eventNano is the time stamp of the last pod event's name, kept
	// increasing so that two events of one pod never share a name.
	eventNano atomic.Int64
}

// eventQueueLength is the broadcaster's queue (tools/record/event.go
// maxQueuedEvents).
const eventQueueLength = 1000

// Event client limits: the kubelet's defaults (KubeletConfiguration
// eventRecordQPS, eventBurst).
const (
	eventQPS   = 50
	eventBurst = 100
)

// heartbeatTimeout is the heartbeat client's timeout: the smaller of the
// node status update frequency (10 s) and the lease duration (40 s)
// (cmd/kubelet/app/server.go heartbeatClientConfig).
const heartbeatTimeout = 10 * time.Second

// recordEvent queues an event send; it never blocks.
func (s *session) recordEvent(send func()) {
	select {
	case s.eventQ <- send:
	default:
		if s.eventsDropped != nil {
			s.eventsDropped.Add(1)
		}
	}
}

// sendEvents sends queued events one after another until the queue closes.
func (s *session) sendEvents() {
	defer close(s.eventsDone)
	for send := range s.eventQ {
		send()
	}
}

// flushEvents closes the event queue and waits until every queued event
// was sent (or gave up after its retries).
func (s *session) flushEvents() {
	if s.eventQ == nil {
		return
	}
	s.eventsClosed.Do(func() { close(s.eventQ) })
	<-s.eventsDone
}

// apiLimits are a kubelet's kubeAPIQPS and kubeAPIBurst; a zero field
// keeps the kubelet's default.
type apiLimits struct{ qps, burst int }

func newSession(base *rest.Config, node string, wrap func(http.RoundTripper) http.RoundTripper, clk clock.Clock, limits apiLimits) (*session, error) {
	cfg := ClientConfig(base, node, wrap)
	if limits.qps > 0 {
		cfg.QPS = float32(limits.qps)
	}
	if limits.burst > 0 {
		cfg.Burst = limits.burst
	}
	t, err := nodeTransport(base, cfg)
	if err != nil {
		return nil, fmt.Errorf("kubelet transport for %s: %w", node, err)
	}
	// The main client's group clients share one rate limiter, as a
	// clientset's do (kubernetes.NewForConfig); the Service client below
	// shares it too. The heartbeat client has its own, as the kubelet's.
	main := withRateLimiter(cfg)
	// One http.Client for both, over the kubelet's own transport.
	httpClient, err := rest.HTTPClientFor(main)
	if err != nil {
		return nil, fmt.Errorf("kubelet HTTP client for %s: %w", node, err)
	}
	client, err := newKubeletClient(main, httpClient)
	if err != nil {
		return nil, fmt.Errorf("kubelet client for %s: %w", node, err)
	}
	services, err := serviceClient(main, httpClient)
	if err != nil {
		return nil, fmt.Errorf("kubelet Service client for %s: %w", node, err)
	}
	// The heartbeat client: no rate limit, a timeout
	// (cmd/kubelet/app/server.go heartbeatClientConfig).
	heartbeat := rest.CopyConfig(cfg)
	heartbeat.QPS = -1
	heartbeat.Timeout = heartbeatTimeout
	hbHTTP, err := rest.HTTPClientFor(heartbeat)
	if err != nil {
		return nil, fmt.Errorf("kubelet heartbeat HTTP client for %s: %w", node, err)
	}
	hb, err := newKubeletClient(heartbeat, hbHTTP)
	if err != nil {
		return nil, fmt.Errorf("kubelet heartbeat client for %s: %w", node, err)
	}
	ec := rest.CopyConfig(cfg)
	ec.QPS, ec.Burst = eventQPS, eventBurst
	events, err := corev1client.NewForConfigAndClient(withRateLimiter(ec), httpClient)
	if err != nil {
		return nil, fmt.Errorf("kubelet event client for %s: %w", node, err)
	}
	return startSession(node, sessionClients{
		client:    client,
		heartbeat: hb,
		events:    events,
		lists: restListWatches{
			core:     client.core.RESTClient(),
			services: services,
			storage:  client.storage.RESTClient(),
			node:     client.node.RESTClient(),
		},
		transport: t,
	}, clk), nil
}

// sessionFactory opens the session of a node's simulated kubelet. The
// simulator's is newSession on its rest.Config; a test's builds the
// session on a fake clientset (sessionClients).
type sessionFactory func(node string) (*session, error)

// sessionClients are what a session talks through: newSession builds them
// for a real API server; a test can build them on a fake clientset, which
// satisfies kubeletClient.
type sessionClients struct {
	// client is the main client (rate limited, QPS 50, burst 100).
	client kubeletClient
	// heartbeat is the client for leases and node status.
	heartbeat kubeletClient
	// events is the event client, with its own rate limiter.
	events corev1client.EventsGetter
	// lists builds the informers' and reflectors' list-watches.
	lists listWatchSource
	// transport is the session's own connection pool, closed with it; nil
	// when there is none to close.
	transport *http.Transport
}

// startSession returns the session of node's kubelet over c, with its
// event sender running.
func startSession(node string, c sessionClients, clk clock.Clock) *session {
	s := &session{node: node, client: c.client, lists: c.lists, heartbeat: c.heartbeat, events: c.events, clk: clk, transport: c.transport, stop: make(chan struct{}), syncTimeout: 10 * time.Minute}
	s.startEvents()
	return s
}

// startEvents starts the event sender.
func (s *session) startEvents() {
	s.eventQ = make(chan func(), eventQueueLength)
	s.eventsDone = make(chan struct{})
	go s.sendEvents()
}

// serviceClient is the core/v1 REST client of the kubelet's Service
// informer: same requests, connection and rate limiter as the main client,
// but Services are decoded to their identity only (serviceIdentities).
func serviceClient(cfg *rest.Config, httpClient *http.Client) (rest.Interface, error) {
	c := rest.CopyConfig(cfg)
	gv := corev1.SchemeGroupVersion
	c.GroupVersion = &gv
	c.APIPath = "/api"
	c.NegotiatedSerializer = serviceIdentitySerializer
	return rest.RESTClientForConfigAndClient(c, httpClient)
}

// serviceIdentitySerializer is the core/v1 client serializer with Services
// decoded to their identity; built once, shared by every session.
var serviceIdentitySerializer = serviceIdentities{rest.CodecFactoryForGeneratedClient(scheme.Scheme, scheme.Codecs).WithoutConversion()}

// nodeTransport gives cfg a transport of its own, so each simulated kubelet
// holds its own connection to the API server, as a real kubelet process
// does, and a restarted kubelet opens a new one (a full TLS handshake).
//
// Sharing client-go's cached transport between all simulated kubelets is
// not only unfaithful (one connection instead of one per node) but also
// dearer: kube-apiserver allows 100 concurrent HTTP/2 streams per
// connection by default (k8s.io/apiserver/pkg/server/secure_serving.go),
// a storm of a few hundred kubelets holds thousands of watches, and the
// HTTP/2 client then dials a burst of extra connections whenever every
// connection is full. Measured on a 300-node all-at-once storm: 1,108
// connections (and TLS handshakes) with the shared transport; see
// results/scale/PROFILE.md.
//
// cfg's TLS settings (base's, parsed once: see baseTLS) move into the
// transport; its auth, impersonation and
// wrappers stay on cfg. A config that already carries a transport or a
// custom dialer or proxy is left as it is (client-go's shared transport).
func nodeTransport(base, cfg *rest.Config) (*http.Transport, error) {
	if cfg.Transport != nil || cfg.Dial != nil || cfg.Proxy != nil {
		return nil, nil
	}
	tlsConf, err := tlsConfigFor(base)
	if err != nil {
		return nil, err
	}
	t := utilnet.SetTransportDefaults(&http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		TLSHandshakeTimeout: 10 * time.Second,
		TLSClientConfig:     tlsConf,
		MaxIdleConnsPerHost: 25,
		DialContext:         (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		DisableCompression:  cfg.DisableCompression,
	})
	cfg.Transport = t
	cfg.TLSClientConfig = rest.TLSClientConfig{}
	return t, nil
}

// baseTLS caches, per base config, the TLS configuration of its
// credentials: rest.TLSConfigFor reads and parses the certificate and key
// files on every call, and every restarted kubelet needs them. Each
// transport gets its own clone. Impersonation does not change TLS, so the
// base's configuration is every simulated kubelet's.
var baseTLS sync.Map // *rest.Config -> *tls.Config

func tlsConfigFor(base *rest.Config) (*tls.Config, error) {
	if c, ok := baseTLS.Load(base); ok {
		return c.(*tls.Config).Clone(), nil
	}
	c, err := rest.TLSConfigFor(base)
	if err != nil || c == nil {
		return c, err
	}
	baseTLS.Store(base, c)
	return c.Clone(), nil
}

// run runs an informer's or a reflector's Run until the session stops.
// The kubelet feeds its pod source and its Secret and ConfigMap caches
// through bare reflectors, not informers (config/apiserver.go
// NewSourceApiserver, util/manager/watch_based_manager.go startReflector);
// an informer would add a queue, an indexer and four goroutines to each,
// thousands of them in a storm, and no request.
func (s *session) run(run func(stop <-chan struct{})) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		run(s.stop)
	}()
}

// stopWatches stops every informer (closing its watch) and waits for them.
func (s *session) stopWatches() {
	s.stopOnce.Do(func() { close(s.stop) })
	s.wg.Wait()
}

// close ends the session: its watches, then its connection (the kubelet
// process is gone, or stormbench hands the node back to KWOK).
func (s *session) close() {
	s.stopWatches()
	s.flushEvents()
	if s.transport != nil {
		s.transport.CloseIdleConnections()
	}
}

func (s *session) waitSynced(ctx context.Context, what string, infs ...cache.SharedIndexInformer) error {
	synced := make([]cache.InformerSynced, len(infs))
	for i, inf := range infs {
		synced[i] = inf.HasSynced
	}
	return s.waitFor(ctx, what, synced...)
}

// waitFor waits for caches to sync. A real kubelet keeps retrying its
// LIST/WATCH for as long as it takes (reflectors back off on 429s and
// errors), so the only bound is the session's sync timeout, the storm's
// recovery timeout.
func (s *session) waitFor(ctx context.Context, what string, synced ...cache.InformerSynced) error {
	start := s.clk.Now()
	ctx, cancel := context.WithTimeout(ctx, s.syncTimeout)
	defer cancel()
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return fmt.Errorf("kubelet %s: %s caches did not sync within %s: %w", s.node, what, s.clk.Since(start).Round(time.Second), ctx.Err())
	}
	return nil
}

// listWatch is the list-watch of resource in namespace, filtered by
// selector, under this kubelet's WatchListClient setting.
func (s *session) listWatch(resource, namespace string, selector fields.Selector) cache.ListerWatcher {
	lw := s.lists.listWatch(resource, namespace, selector)
	if s.noWatchList {
		return listThenWatch{lw}
	}
	return lw
}

// listWatchSource builds the list-watches of a kubelet's informers and
// reflectors: the seam where a test puts a fake clientset, whose
// RESTClient() cannot serve cache.NewListWatchFromClient.
type listWatchSource interface {
	// listWatch returns the list-watch of resource (pods, nodes, services,
	// csidrivers, runtimeclasses, secrets or configmaps) in namespace,
	// filtered by the field selector.
	listWatch(resource, namespace string, selector fields.Selector) cache.ListerWatcher
}

// restListWatches lists and watches through the REST clients of the
// kubelet's main client, as client-go's informers do
// (cache.NewListWatchFromClient): core/v1 for pods, nodes, Secrets and
// ConfigMaps, the Service client for Services (serviceClient), storage/v1
// for CSIDrivers and node/v1 for RuntimeClasses.
type restListWatches struct {
	core, services, storage, node cache.Getter
}

var _ listWatchSource = restListWatches{}

func (r restListWatches) listWatch(resource, namespace string, selector fields.Selector) cache.ListerWatcher {
	c := r.core
	switch resource {
	case "services":
		c = r.services
	case "csidrivers":
		c = r.storage
	case "runtimeclasses":
		c = r.node
	}
	return cache.NewListWatchFromClient(c, resource, namespace, selector)
}

// listThenWatch makes a reflector list and then watch, whatever the
// process-wide WatchListClient gate says: client-go disables watch-list
// for a ListerWatcher that reports it does not support its semantics
// (util/watchlist DoesClientNotSupportWatchListSemantics), so the gate can
// differ per simulated kubelet and per variant.
type listThenWatch struct{ cache.ListerWatcher }

func (listThenWatch) IsWatchListSemanticsUnSupported() bool { return true }

func newInformer(lw cache.ListerWatcher, obj runtime.Object) cache.SharedIndexInformer {
	// Resync 0, as the kubelet's informers. The model reads no
	// managedFields; dropping them after decoding keeps the caches small and
	// changes nothing on the wire.
	inf := cache.NewSharedIndexInformer(lw, obj, 0, cache.Indexers{})
	_ = inf.SetTransform(fleet.StripManagedFields)
	return inf
}

// register replays registerWithAPIServer (kubelet_node_status.go): POST the
// node, which exists already (409), then GET it to reconcile. Our node
// object matches what is registered, so no PATCH follows.
func (s *session) register(ctx context.Context) error {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{
		Name: s.node,
		Labels: map[string]string{
			corev1.LabelHostname:   s.node,
			corev1.LabelOSStable:   "linux",
			corev1.LabelArchStable: "amd64",
		},
	}}
	err := s.retry(ctx, func() error {
		_, err := s.client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
		return err
	})
	switch {
	case err == nil:
		return fmt.Errorf("kubelet %s: registration created a node that should have existed", s.node)
	case apierrors.IsAlreadyExists(err):
	default:
		return fmt.Errorf("kubelet %s: registering node: %w", s.node, err)
	}
	if err := s.retry(ctx, func() error {
		_, err := s.client.CoreV1().Nodes().Get(ctx, s.node, metav1.GetOptions{})
		return err
	}); err != nil {
		return fmt.Errorf("kubelet %s: getting registered node: %w", s.node, err)
	}
	return nil
}

// startInformers replays the kubelet's informers (kubelet.go NewMainKubelet):
// its own Node by metadata.name; Services with spec.clusterIP!=None
// (kubelet.go: headless services are not needed for env vars); CSIDrivers
// (volume plugin manager) and RuntimeClasses (runtimeclass.NewManager); then,
// once the node has synced, its pods by spec.nodeName in all namespaces
// (config/apiserver.go NewSourceApiserver).
func (s *session) startInformers(ctx context.Context) error {
	s.nodeInf = newInformer(s.listWatch("nodes", metav1.NamespaceAll,
		fields.OneTermEqualSelector(metav1.ObjectNameField, s.node)), &corev1.Node{})
	s.run(s.nodeInf.Run)
	// Same requests as the kubelet's informers, into stores that keep
	// nothing (see sinkStore).
	var sinks []*sinkStore
	for _, r := range []struct {
		lw  cache.ListerWatcher
		obj runtime.Object
	}{
		{s.listWatch("services", metav1.NamespaceAll, fields.OneTermNotEqualSelector("spec.clusterIP", corev1.ClusterIPNone)), &corev1.Service{}},
		{s.listWatch("csidrivers", metav1.NamespaceAll, fields.Everything()), &storagev1.CSIDriver{}},
		{s.listWatch("runtimeclasses", metav1.NamespaceAll, fields.Everything()), &nodev1.RuntimeClass{}},
	} {
		sink := &sinkStore{}
		sinks = append(sinks, sink)
		s.run(cache.NewReflector(r.lw, r.obj, sink, 0).Run)
	}
	// The pod source starts once the node informer has synced, checking
	// every WaitForAPIServerSyncPeriod (1 s; config/apiserver.go
	// NewSourceApiserver): a just-started informer has not synced at the
	// first check, so the pod watch opens a second after start (measured
	// on the hollow kubelet: 1.0 s).
	nodeSynced := poll.Wait{Clock: s.clk, Interval: time.Second, What: "kubelet " + s.node + ": waiting for the node informer"}
	if err := nodeSynced.Until(ctx, func(context.Context) (bool, string, error) { return s.nodeInf.HasSynced(), "", nil }); err != nil {
		return err
	}
	// The pod source: a reflector into a store, resync 0
	// (config/apiserver.go NewSourceApiserver).
	s.podStore = newPodStore()
	s.run(cache.NewReflector(s.listWatch("pods", metav1.NamespaceAll,
		fields.OneTermEqualSelector("spec.nodeName", s.node)), &corev1.Pod{}, s.podStore, 0).Run)
	if err := s.waitFor(ctx, "pod", s.podStore.HasSynced); err != nil {
		return err
	}
	synced := make([]cache.InformerSynced, len(sinks))
	for i, sk := range sinks {
		synced[i] = sk.HasSynced
	}
	return s.waitFor(ctx, "service, CSIDriver and RuntimeClass", synced...)
}

// pods returns the node's pods from the kubelet's pod source, by name.
func (s *session) pods() []*corev1.Pod {
	var out []*corev1.Pod
	for _, o := range s.podStore.List() {
		p := o.(*corev1.Pod)
		if p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Namespace+"/"+out[i].Name < out[j].Namespace+"/"+out[j].Name })
	return out
}

// objectRef is a Secret or ConfigMap a pod references. volume says it is
// mounted (a volume, or a projected volume's source): the volume manager
// sets such volumes up again on every sync, and its Get is what stops the
// watch of an immutable object.
type objectRef struct {
	kind, ns, name string
	volume         bool
}

// podObjectRefs returns the Secrets and ConfigMaps a pod references, where
// the kubelet's Secret and ConfigMap managers find them when it registers
// the pod (pkg/api/v1/pod/util.go VisitPodSecretNames and
// VisitPodConfigmapNames): image pull secrets; every init, regular and
// ephemeral container's envFrom and env valueFrom; Secret and ConfigMap
// volumes, projected volumes' sources, and the Secrets of CSI and other
// volume plugins. Empty names are skipped.
func podObjectRefs(p *corev1.Pod) []objectRef {
	var refs []objectRef
	add := func(kind, name string, volume bool) {
		if name != "" {
			refs = append(refs, objectRef{kind, p.Namespace, name, volume})
		}
	}
	for _, s := range p.Spec.ImagePullSecrets {
		add("secrets", s.Name, false)
	}
	// Each container's env and envFrom, without copying the containers
	// (this runs for every pod of every restarted kubelet).
	env := func(envFrom []corev1.EnvFromSource, vars []corev1.EnvVar) {
		for _, e := range envFrom {
			if e.SecretRef != nil {
				add("secrets", e.SecretRef.Name, false)
			}
			if e.ConfigMapRef != nil {
				add("configmaps", e.ConfigMapRef.Name, false)
			}
		}
		for _, e := range vars {
			if e.ValueFrom == nil {
				continue
			}
			if r := e.ValueFrom.SecretKeyRef; r != nil {
				add("secrets", r.Name, false)
			}
			if r := e.ValueFrom.ConfigMapKeyRef; r != nil {
				add("configmaps", r.Name, false)
			}
		}
	}
	for _, cs := range [][]corev1.Container{p.Spec.InitContainers, p.Spec.Containers} {
		for i := range cs {
			env(cs[i].EnvFrom, cs[i].Env)
		}
	}
	for i := range p.Spec.EphemeralContainers {
		env(p.Spec.EphemeralContainers[i].EnvFrom, p.Spec.EphemeralContainers[i].Env)
	}
	for _, v := range p.Spec.Volumes {
		switch src := v.VolumeSource; {
		case src.Secret != nil:
			add("secrets", src.Secret.SecretName, true)
		case src.ConfigMap != nil:
			add("configmaps", src.ConfigMap.Name, true)
		case src.Projected != nil:
			for _, ps := range src.Projected.Sources {
				if ps.Secret != nil {
					add("secrets", ps.Secret.Name, true)
				}
				if ps.ConfigMap != nil {
					add("configmaps", ps.ConfigMap.Name, true)
				}
			}
		case src.CSI != nil && src.CSI.NodePublishSecretRef != nil:
			add("secrets", src.CSI.NodePublishSecretRef.Name, true)
		case src.AzureFile != nil:
			add("secrets", src.AzureFile.SecretName, true)
		case src.CephFS != nil && src.CephFS.SecretRef != nil:
			add("secrets", src.CephFS.SecretRef.Name, true)
		case src.Cinder != nil && src.Cinder.SecretRef != nil:
			add("secrets", src.Cinder.SecretRef.Name, true)
		case src.FlexVolume != nil && src.FlexVolume.SecretRef != nil:
			add("secrets", src.FlexVolume.SecretRef.Name, true)
		case src.RBD != nil && src.RBD.SecretRef != nil:
			add("secrets", src.RBD.SecretRef.Name, true)
		case src.ScaleIO != nil && src.ScaleIO.SecretRef != nil:
			add("secrets", src.ScaleIO.SecretRef.Name, true)
		case src.ISCSI != nil && src.ISCSI.SecretRef != nil:
			add("secrets", src.ISCSI.SecretRef.Name, true)
		case src.StorageOS != nil && src.StorageOS.SecretRef != nil:
			add("secrets", src.StorageOS.SecretRef.Name, true)
		}
	}
	return refs
}

// objectStore is the store of one Secret's or ConfigMap's reflector: it
// keeps nothing (sinkStore) but whether the object is immutable.
type objectStore struct {
	sinkStore
	immutable atomic.Bool
}

func (s *objectStore) Transformer() cache.TransformFunc {
	return func(obj any) (any, error) {
		switch o := obj.(type) {
		case *corev1.Secret:
			s.immutable.Store(o.Immutable != nil && *o.Immutable)
		case *corev1.ConfigMap:
			s.immutable.Store(o.Immutable != nil && *o.Immutable)
		}
		return identityOnly(obj)
	}
}

// watchPodObjects replays the watch-based Secret and ConfigMap managers
// (util/manager/watch_based_manager.go): one reflector per distinct object
// the node's pods reference (podObjectRefs), listing and watching it by
// metadata.name. The watch of an immutable object ends at the first Get
// that finds it immutable (objectCache.Get: item.stop). After a restart
// that Get is the volume manager's set-up of a mounted object, right after
// the sync; an object only used for environment variables is read when a
// container starts, not after a kubelet restart, so its watch stays.
// It returns how many reflectors it started (an immutable object's too).
func (s *session) watchPodObjects(ctx context.Context, pods []*corev1.Pod) (int, error) {
	type key struct{ kind, ns, name string }
	mounted := map[key]bool{}
	var keys []key
	for _, p := range pods {
		for _, r := range podObjectRefs(p) {
			k := key{r.kind, r.ns, r.name}
			if _, seen := mounted[k]; !seen {
				keys = append(keys, k)
			}
			mounted[k] = mounted[k] || r.volume
		}
	}
	synced := make([]cache.InformerSynced, 0, len(keys))
	stores := make([]*objectStore, len(keys))
	stops := make([]chan struct{}, len(keys))
	for i, r := range keys {
		var obj runtime.Object = &corev1.ConfigMap{}
		if r.kind == "secrets" {
			obj = &corev1.Secret{}
		}
		// newReflectorLocked: the object by metadata.name, a 30-minute
		// MinWatchTimeout; synced once the store has been replaced
		// (cacheStore.Replace). Nothing reads a Secret's data here, so the
		// store keeps nothing.
		stores[i], stops[i] = &objectStore{}, make(chan struct{})
		synced = append(synced, stores[i].HasSynced)
		reflector := cache.NewReflectorWithOptions(
			s.listWatch(r.kind, r.ns, fields.OneTermEqualSelector(metav1.ObjectNameField, r.name)),
			obj, stores[i], cache.ReflectorOptions{
				Name:            fmt.Sprintf("object-%q/%q", r.ns, r.name),
				MinWatchTimeout: 30 * time.Minute,
			})
		own := stops[i]
		s.run(func(stop <-chan struct{}) {
			both := make(chan struct{})
			go func() {
				select {
				case <-stop:
				case <-own:
				}
				close(both)
			}()
			reflector.Run(both)
		})
	}
	if err := s.waitFor(ctx, "secret and configmap", synced...); err != nil {
		return 0, err
	}
	for i, k := range keys {
		if mounted[k] && stores[i].immutable.Load() {
			close(stops[i])
		}
	}
	return len(keys), nil
}

// requestTokens replays the token manager (token/token_manager.go): its cache
// is in memory only, so after a restart every projected service-account
// token is requested again, bound to its pod. The volume manager mounts
// every volume in an operation of its own, in parallel
// (volume/util/operationexecutor, nestedpendingoperations: one goroutine
// per volume), so the TokenRequests go out at once, paced only by the
// kubelet's client rate limiter, not one after another.
func (s *session) requestTokens(ctx context.Context, pods []*corev1.Pod) (int, error) {
	var n atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	for _, p := range pods {
		sa := p.Spec.ServiceAccountName
		if sa == "" {
			sa = "default"
		}
		for _, v := range p.Spec.Volumes {
			if v.Projected == nil {
				continue
			}
			for _, src := range v.Projected.Sources {
				t := src.ServiceAccountToken
				if t == nil {
					continue
				}
				tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
					ExpirationSeconds: t.ExpirationSeconds,
					BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: p.Name, UID: p.UID},
				}}
				if t.Audience != "" {
					tr.Spec.Audiences = []string{t.Audience}
				}
				g.Go(func() error {
					if err := s.retry(gctx, func() error {
						_, err := s.client.CoreV1().ServiceAccounts(p.Namespace).CreateToken(gctx, sa, tr, metav1.CreateOptions{})
						return err
					}); err != nil {
						return fmt.Errorf("kubelet %s: token for pod %s/%s: %w", s.node, p.Namespace, p.Name, err)
					}
					n.Add(1)
					return nil
				})
			}
		}
	}
	err := g.Wait()
	return int(n.Load()), err
}

// defaultLeaseDuration is the kubelet's nodeLeaseDurationSeconds default,
// used when the lease has none.
const defaultLeaseDuration = 40 * time.Second

// renewLeaseOnce renews the node's lease. With the lease last written
// (latest) it sends only the UPDATE, as the lease controller does once it
// holds a lease; without, or on a conflict, it GETs (creating the lease if
// missing) first. It returns the lease as written.
func (s *session) renewLeaseOnce(ctx context.Context, latest *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	leases := s.heartbeat.CoordinationV1().Leases(nodeLeaseNamespace)
	if latest != nil {
		l := latest.DeepCopy()
		now := metav1.NewMicroTime(s.clk.Now())
		l.Spec.RenewTime = &now
		out, err := leases.Update(ctx, l, metav1.UpdateOptions{})
		if err == nil {
			return out, nil
		}
		if !apierrors.IsConflict(err) {
			return nil, fmt.Errorf("kubelet %s: renewing lease: %w", s.node, err)
		}
	}
	l, err := leases.Get(ctx, s.node, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		dur := int32(defaultLeaseDuration / time.Second)
		holder := s.node
		now := metav1.NewMicroTime(s.clk.Now())
		l = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: s.node, Namespace: nodeLeaseNamespace},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &dur, RenewTime: &now}}
		return leases.Create(ctx, l, metav1.CreateOptions{})
	}
	if err != nil {
		return nil, fmt.Errorf("kubelet %s: getting lease: %w", s.node, err)
	}
	now := metav1.NewMicroTime(s.clk.Now())
	l.Spec.RenewTime = &now
	out, err := leases.Update(ctx, l, metav1.UpdateOptions{})
	if err != nil {
		if apierrors.IsConflict(err) {
			// Someone else wrote it between our GET and UPDATE; the next
			// renewal starts from a fresh GET.
			return nil, nil
		}
		return nil, fmt.Errorf("kubelet %s: renewing lease: %w", s.node, err)
	}
	return out, nil
}

// startLeaseController runs the node lease controller while the kubelet
// starts up, as Kubelet.Run does (kubelet.go: `go
// kl.nodeLeaseController.Run(...)`, started before and independently of the
// informers' sync): the first renewal at once, then one every quarter of the
// lease's duration (nodeLeaseRenewIntervalFraction 0.25), sending only the
// UPDATE once it holds the lease. A kubelet that renewed only after its
// informers synced would leave its lease stale for the whole sync, and on a
// busy API server past the node-monitor grace period, so the node-lifecycle
// controller would mark the node Unknown and its pods not ready.
//
// A failed renewal (or a conflict) is retried after a backoff from 200 ms
// doubling up to 7 s, starting again from a GET, as the lease controller's
// backoffEnsureLease does. The returned stop ends the loop and waits for
// it; call it before handing the node back to KWOK.
func (s *session) startLeaseController(ctx context.Context) (stop func()) {
	return s.startLeaseControllerFrom(ctx, nil, 0)
}

// startLeaseControllerFrom runs the lease controller of a kubelet that is
// already running: it knows its lease (latest, as read by the harness), so
// it sends no GET, and its next renewal comes after first (the rest of its
// renew interval), not at once.
func (s *session) startLeaseControllerFrom(ctx context.Context, latest *coordinationv1.Lease, first time.Duration) (stop func()) {
	const minBackoff, maxBackoff = 200 * time.Millisecond, 7 * time.Second
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if first > 0 && poll.Sleep(ctx, s.clk, first) != nil {
			return
		}
		backoff := minBackoff
		for {
			l, err := s.renewLeaseOnce(ctx, latest)
			if ctx.Err() != nil {
				return
			}
			latest = l
			wait := defaultLeaseDuration / 4
			if err == nil && l != nil {
				s.leaseRenewed.Store(s.clk.Now().UnixNano())
				if l.Spec.LeaseDurationSeconds != nil && *l.Spec.LeaseDurationSeconds > 0 {
					s.leaseInterval.Store(int64(time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second / 4))
				} else {
					s.leaseInterval.Store(int64(wait))
				}
			}
			switch {
			case err != nil || l == nil:
				if err != nil && s.retries != nil {
					s.retries.Add(1)
				}
				wait, backoff = backoff, min(2*backoff, maxBackoff)
			case l.Spec.LeaseDurationSeconds != nil && *l.Spec.LeaseDurationSeconds > 0:
				wait, backoff = time.Duration(*l.Spec.LeaseDurationSeconds)*time.Second/4, minBackoff
			default:
				backoff = minBackoff
			}
			if poll.Sleep(ctx, s.clk, wait) != nil {
				return
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { cancel(); <-done }) }
}

// nextLeaseRenewal is when the lease controller would renew the lease
// next, after its last renewal; zero before the first one.
func (s *session) nextLeaseRenewal() time.Time {
	last := s.leaseRenewed.Load()
	if last == 0 {
		return time.Time{}
	}
	return time.Unix(0, last).Add(time.Duration(s.leaseInterval.Load()))
}

// wipeResourceSlices replays the DRA plugin manager's start-up cleanup
// (cm/dra/plugin/dra_plugin_manager.go NewDRAPluginManager, in a goroutine
// of its own: wipeResourceSlices with no driver): once the node is in the
// kubelet's node lister, one DELETE of the node's ResourceSlices by field
// selector, whatever exists. DynamicResourceAllocation is on by default
// since 1.34. Measured on the kubelet on containerd: one deletecollection
// resourceslices per start (results/calibration/2026-12-02/containerd.md); the hollow
// kubelet's stub container manager has no DRA manager and sends none.
// Errors are dropped (see below).
func (s *session) wipeResourceSlices(ctx context.Context) {
	sel := fields.OneTermEqualSelector("spec.nodeName", s.node).String()
	// A failure never holds the real kubelet's start up (the wipe runs in
	// a goroutine of its own and backs off); a cluster without the
	// resource.k8s.io/v1 API answers 404. Neither stops the restart here.
	_ = s.retry(ctx, func() error {
		return s.client.ResourceV1().ResourceSlices().DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{FieldSelector: sel})
	})
}

// reconstructVolumes replays the volume manager's reconstruction at start
// (volumemanager/reconciler/reconciler.go Run, reconstruct.go
// reconstructVolumes and updateReconstructedFromNodeStatus): the reconciler
// scans the pod volume directories the kubelet left on disk, adds every
// volume it finds to its actual state as uncertain, and then GETs its Node
// once to take the device paths from node.status.volumesAttached. A node
// whose pods have no volumes sends nothing. Measured on the hollow kubelet:
// 3 GETs of nodes per restart with pods carrying a projected token, ConfigMap
// and Secret volumes, 2 without volumes (results/calibration/2026-12-02/pod-features.md).
// The directories are those of every pod the kubelet had started (a start
// time or a phase past Pending), deleted ones included (kubelet_volumes.go
// cleanupOrphanedPodDirs removes them only after the pod is gone). The
// real GET comes as soon as the reconciler runs; the model's waits for its
// pod informer (see boot).
func (s *session) reconstructVolumes(ctx context.Context) error {
	if !slices.ContainsFunc(s.podStore.List(), func(o any) bool {
		p := o.(*corev1.Pod)
		ran := p.Status.StartTime != nil || (p.Status.Phase != corev1.PodPending && p.Status.Phase != "")
		return ran && len(p.Spec.Volumes) > 0
	}) {
		return nil
	}
	return s.retry(ctx, func() error {
		_, err := s.client.CoreV1().Nodes().Get(ctx, s.node, metav1.GetOptions{})
		return err
	})
}

// csiNode replays the CSI node-info initialisation: GET the CSINode object
// and create it when missing.
func (s *session) csiNode(ctx context.Context, nodeUID types.UID) error {
	return s.retry(ctx, func() error { return s.csiNodeOnce(ctx, nodeUID) })
}

// csiNodeOnce replays the CSI plugin's start: waitForAPIServerForever GETs
// the CSINode from the watch cache (volume/csi/csi_plugin.go), then
// nodeinfomanager's tryInitializeCSINodeWithAnnotation GETs the node and
// the CSINode and creates it only when it is missing (measured on the
// hollow kubelet: 2 GETs of csinodes and 1 of nodes besides
// registration's, no write).
func (s *session) csiNodeOnce(ctx context.Context, nodeUID types.UID) error {
	_, err := s.client.StorageV1().CSINodes().Get(ctx, s.node, metav1.GetOptions{ResourceVersion: "0"})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("kubelet %s: CSINode: %w", s.node, err)
	}
	if _, err := s.client.CoreV1().Nodes().Get(ctx, s.node, metav1.GetOptions{}); err != nil {
		return fmt.Errorf("kubelet %s: CSINode: getting its node: %w", s.node, err)
	}
	_, err = s.client.StorageV1().CSINodes().Get(ctx, s.node, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = s.client.StorageV1().CSINodes().Create(ctx, fleet.CSINode(s.node, nodeUID), metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			err = nil
		}
	}
	if err != nil {
		return fmt.Errorf("kubelet %s: CSINode: %w", s.node, err)
	}
	return nil
}

// event posts a node event, as the kubelet's recorder does (core/v1 events in
// the default namespace, involvedObject the node).
func (s *session) event(ctx context.Context, nodeUID types.UID, typ, reason, msg string) error {
	now := metav1.NewTime(s.clk.Now())
	ev := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{GenerateName: s.node + ".", Namespace: metav1.NamespaceDefault},
		InvolvedObject: corev1.ObjectReference{Kind: "Node", Name: s.node, UID: types.UID(s.node), APIVersion: "v1"},
		Reason:         reason, Message: msg, Type: typ,
		Source:         corev1.EventSource{Component: "kubelet", Host: s.node},
		FirstTimestamp: now, LastTimestamp: now, Count: 1,
		ReportingController: "kubelet", ReportingInstance: s.node,
	}
	s.recordEvent(func() {
		_ = s.retry(ctx, func() error {
			_, err := s.events.Events(metav1.NamespaceDefault).Create(ctx, ev, metav1.CreateOptions{})
			return err
		})
	})
	return nil
}

// podEvent records an event about a pod or one of its containers as the
// kubelet's recorder does: the first occurrence is created; a repeat of the
// same event (name given) is PATCHed with its new count and last
// timestamp, as client-go's event correlator aggregates it
// (tools/record/events_cache.go, eventLogger). It returns the event name.
func (s *session) podEvent(ctx context.Context, pod *corev1.Pod, container, name string, count int32, typ, reason, msg string) (string, error) {
	now := metav1.NewTime(s.clk.Now())
	// A container's event points at it; a pod's (container "") at the pod.
	fieldPath := ""
	if container != "" {
		fieldPath = "spec.containers{" + container + "}"
		for _, c := range pod.Spec.InitContainers {
			if c.Name == container {
				fieldPath = "spec.initContainers{" + container + "}"
			}
		}
	}
	if name != "" {
		patch := fmt.Sprintf(`{"count":%d,"lastTimestamp":%q,"message":%q}`, count, now.UTC().Format(time.RFC3339), msg)
		s.recordEvent(func() {
			err := s.retry(ctx, func() error {
				_, err := s.events.Events(pod.Namespace).Patch(ctx, name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{})
				return err
			})
			if apierrors.IsNotFound(err) {
				// Gone (the event TTL): the correlator's PATCH fails and
				// the event is not recorded again until its next repeat.
				return
			}
		})
		return name, nil
	}
	// The recorder names an event after its object and the time
	// (tools/record/event.go makeEvent); kept increasing here, so that two
	// events of one pod in the same instant get two names.
	nano := now.UnixNano()
	for {
		last := s.eventNano.Load()
		if nano <= last {
			nano = last + 1
		}
		if s.eventNano.CompareAndSwap(last, nano) {
			break
		}
	}
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", pod.Name, nano), Namespace: pod.Namespace},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID, APIVersion: "v1",
			FieldPath: fieldPath},
		Reason: reason, Message: msg, Type: typ,
		Source:         corev1.EventSource{Component: "kubelet", Host: s.node},
		FirstTimestamp: now, LastTimestamp: now, Count: count,
		ReportingController: "kubelet", ReportingInstance: s.node,
	}
	s.recordEvent(func() {
		_ = s.retry(ctx, func() error {
			_, err := s.events.Events(pod.Namespace).Create(ctx, ev, metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				return nil
			}
			return err
		})
	})
	return ev.Name, nil
}
