package kubelet

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

	"github.com/stormbench/stormbench/bench/cluster"
	"github.com/stormbench/stormbench/bench/fleet"
)

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

	// transport is this kubelet's own connection pool (see cluster.NodeTransport);
	// nil when the base config brings its own transport.
	transport *http.Transport

	// noWatchList turns client-go's WatchListClient off for this kubelet's
	// reflectors: each initial sync is a LIST and then a WATCH, as a
	// kubelet started with --feature-gates=WatchListClient=false does
	// (client-go tools/cache/reflector.go: the gate, read when a reflector
	// is made, picks watch-list or list-then-watch).
	noWatchList bool
	// podCertificates starts the PodCertificateRequest informer with the
	// others (the PodCertificateRequest gate; session.startInformers).
	podCertificates bool
	// csiNodeGetsNode makes the CSI plugin's start GET the node between
	// its CSINode reads (plan.Release.CSINodeGetsNode).
	csiNodeGetsNode bool

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
	eventQ        chan func(ctx context.Context)
	eventsDone    chan struct{}
	eventsClosed  sync.Once
	eventsDropped *atomic.Int64
	// eventsCtx is the restart's context, which the event sender sends
	// on (eventsContext): set by openSession, before any event.
	eventsCtx context.Context
	// eventNano is the time stamp of the last pod event's name, kept
	// increasing so that two events of one pod never share a name.
	eventNano atomic.Int64
}

// apiLimits are a kubelet's kubeAPIQPS and kubeAPIBurst; a zero field
// keeps the kubelet's default.
type apiLimits struct{ qps, burst int }

// sessionOptions are what a simulated kubelet's configuration, version and
// gates make of its clients (Simulator.sessionOptions).
type sessionOptions struct {
	// limits is the main client's rate limit.
	limits apiLimits
	// userAgent, when set, is the clients' user agent (plan.Release.UserAgent);
	// otherwise cluster.KubeletClientConfig's.
	userAgent string
	// podCertificateAPI, when set, is the certificates.k8s.io version of
	// the PodCertificateRequest informer's client (podCertificateClient);
	// unset, the session has no such client.
	podCertificateAPI string
}

func newSession(base *rest.Config, node string, wrap func(http.RoundTripper) http.RoundTripper, clk clock.Clock, opts sessionOptions) (*session, error) {
	cfg := cluster.KubeletClientConfig(base, node, wrap)
	limits := opts.limits
	if limits.qps > 0 {
		cfg.QPS = float32(limits.qps)
	}
	if limits.burst > 0 {
		cfg.Burst = limits.burst
	}
	if opts.userAgent != "" {
		cfg.UserAgent = opts.userAgent
	}
	t, err := cluster.NodeTransport(base, cfg)
	if err != nil {
		return nil, fmt.Errorf("kubelet transport for %s: %w", node, err)
	}
	mergeHeaderWrappers(cfg)
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
	var certificates cache.Getter
	if opts.podCertificateAPI != "" {
		if certificates, err = podCertificateClient(main, httpClient, opts.podCertificateAPI); err != nil {
			return nil, fmt.Errorf("kubelet PodCertificateRequest client for %s: %w", node, err)
		}
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
			core:         client.core.RESTClient(),
			services:     services,
			storage:      client.storage.RESTClient(),
			node:         client.node.RESTClient(),
			certificates: certificates,
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
	case "podcertificaterequests":
		c = r.certificates
	}
	return cache.NewListWatchFromClient(c, resource, namespace, selector)
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
	if err := s.retry(ctx, s.getNode(ctx)); err != nil {
		return fmt.Errorf("kubelet %s: getting registered node: %w", s.node, err)
	}
	return nil
}

// getNode returns a GET of the kubelet's node from the API server.
func (s *session) getNode(ctx context.Context) func() error {
	return func() error {
		_, err := s.client.CoreV1().Nodes().Get(ctx, s.node, metav1.GetOptions{})
		return err
	}
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
		sa := cmp.Or(p.Spec.ServiceAccountName, "default")
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

// wipeResourceSlices replays the DRA plugin manager's start-up cleanup
// (cm/dra/plugin/dra_plugin_manager.go NewDRAPluginManager, in a goroutine
// of its own: wipeResourceSlices with no driver): once the node is in the
// kubelet's node lister, one DELETE of the node's ResourceSlices by field
// selector, whatever exists. DynamicResourceAllocation is on by default
// since 1.34. Measured on the kubelet on containerd: one deletecollection
// resourceslices per start (results/calibration/2026-12-02/containerd.md, in git history); the hollow
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
// and Secret volumes, 2 without volumes (results/calibration/2026-12-02/pod-features.md, in git history).
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
	return s.retry(ctx, s.getNode(ctx))
}

// csiNode replays the CSI node-info initialisation: GET the CSINode object
// and create it when missing.
func (s *session) csiNode(ctx context.Context, nodeUID types.UID) error {
	return s.retry(ctx, func() error { return s.csiNodeOnce(ctx, nodeUID) })
}

// csiNodeOnce replays the CSI plugin's start: waitForAPIServerForever GETs
// the CSINode from the watch cache (volume/csi/csi_plugin.go), then
// nodeinfomanager's tryInitializeCSINodeWithAnnotation GETs the node (from
// v1.35.4: csiNodeGetsNode) and the CSINode and creates it only when it is
// missing (measured on the hollow 1.36 kubelet: 2 GETs of csinodes and 1
// of nodes besides registration's, no write). v1.34.4's GETs the node only
// to create a missing CSINode (CreateCSINode).
func (s *session) csiNodeOnce(ctx context.Context, nodeUID types.UID) error {
	_, err := s.client.StorageV1().CSINodes().Get(ctx, s.node, metav1.GetOptions{ResourceVersion: "0"})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("kubelet %s: CSINode: %w", s.node, err)
	}
	if s.csiNodeGetsNode {
		if err := s.getNode(ctx)(); err != nil {
			return fmt.Errorf("kubelet %s: CSINode: getting its node: %w", s.node, err)
		}
	}
	_, err = s.client.StorageV1().CSINodes().Get(ctx, s.node, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		if !s.csiNodeGetsNode {
			// CreateCSINode GETs the node for its owner reference.
			if err := s.getNode(ctx)(); err != nil {
				return fmt.Errorf("kubelet %s: CSINode: getting its node: %w", s.node, err)
			}
		}
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
