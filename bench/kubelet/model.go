package kubelet

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	"github.com/stormbench/stormbench/bench/cluster"
	"github.com/stormbench/stormbench/bench/fleet"
	"github.com/stormbench/stormbench/bench/kubelet/plan"
	"github.com/stormbench/stormbench/bench/kubeversion"
	"github.com/stormbench/stormbench/bench/measure/self"
	"github.com/stormbench/stormbench/bench/poll"
	"github.com/stormbench/stormbench/bench/storm"
	"github.com/stormbench/stormbench/profiles"
)

// Config configures the simulated kubelets of one storm.
type Config struct {
	// Base is the harness's rest.Config; kubelet clients impersonate nodes
	// with its credentials.
	Base *rest.Config
	// Harness is the harness's client, used for what a kubelet would not
	// do (relabelling a node so KWOK lets go of it, cordon, drain). Wrap it so
	// its requests are counted apart from the kubelet's.
	Harness kubernetes.Interface
	// Wrap records every kubelet request; optional.
	Wrap func(http.RoundTripper) http.RoundTripper
	// KubeAPIQPS and KubeAPIBurst are the kubelets' main-client rate limit
	// (KubeletConfiguration kubeAPIQPS, kubeAPIBurst); 0 keeps the kubelet
	// defaults, 50 and 100.
	KubeAPIQPS, KubeAPIBurst int
	// RunID is the run label value; nodes without it are never touched.
	RunID string
	// Kind is kubelet, runtime or reboot.
	Kind string
	// Version is the Kubernetes release of the simulated kubelets: the
	// defaults of their feature gates (kubeversion.Version.Gate) and what
	// else their start-up does differently (release); zero is
	// kubeversion.Default.
	Version kubeversion.Version
	// Gates are the simulated kubelets' feature gates, over Version's
	// defaults. A gate Version's kubelet does not have keeps the behaviour
	// that kubelet always has, whatever Gates says.
	Gates map[string]bool
	// InitDuration, when above 0, is how long a started kubelet reports
	// NotReady (the flash of kubernetes#124397); 0 keeps a Ready node
	// Ready, as the 1.36 kubelet did in calibration.
	InitDuration time.Duration
	// CloseWatchesAfterSync closes the kubelet's watches after its initial
	// sync instead of holding them while it is up.
	CloseWatchesAfterSync bool
	// NodeChanges are applied while a node is down.
	NodeChanges *profiles.NodeChanges
	// Planned makes reboots planned: cordon, drain, reboot, uncordon.
	Planned bool
	// RuntimeMode is how a runtime restart looks to the kubelet:
	// profiles.RuntimeRefused (default) or profiles.RuntimeHung.
	RuntimeMode string
	// Seed seeds probe jitter.
	Seed int64
	// Clock is injected for tests.
	Clock clock.Clock
	// RecoveryTimeout bounds the wait for a node's pods to be Ready again.
	RecoveryTimeout time.Duration
	// Lifecycle is told when a node goes down and when it is back; optional.
	Lifecycle NodeLifecycle
}

// Counters are what the simulated kubelets did, summed over nodes. Restarts
// are not counted here: each Restart's outcome says whether it took its node
// down, and storm.Restarts counts those.
type Counters struct {
	// PodStatusPatches counts PATCHes of pods/status.
	PodStatusPatches atomic.Int64
	// ReadyFlipsDown and ReadyFlipsUp count pod Ready transitions written.
	ReadyFlipsDown, ReadyFlipsUp atomic.Int64
	// ReadyFlipsCoalesced counts legacy flips that never reached the API
	// server: the prober's Failure and Success both came while the status
	// manager was busy, so it wrote only the latest status.
	ReadyFlipsCoalesced atomic.Int64
	// StatusUpdatesCoalesced counts pod statuses after a reboot that the
	// status manager wrote together with a later one of the same pod: it
	// was busy with other pods when the earlier one came.
	StatusUpdatesCoalesced atomic.Int64
	// TokenRequests counts TokenRequests sent.
	TokenRequests atomic.Int64
	// ObjectWatches counts per-Secret/ConfigMap reflectors started.
	ObjectWatches atomic.Int64
	// ContainerRestarts counts containers restarted.
	ContainerRestarts atomic.Int64
	// MemoryEmptyDirsLost counts memory-backed emptyDir volumes lost in
	// reboots.
	MemoryEmptyDirsLost atomic.Int64
	// PodsRejected counts pods rejected by admission re-run.
	PodsRejected atomic.Int64
	// PodsDeleted counts pods whose deletion (eviction) the kubelet
	// completed on start.
	PodsDeleted atomic.Int64
	// PodsDrained counts pods evicted by a planned reboot's drain.
	PodsDrained atomic.Int64
	// Errors counts failed restarts.
	Errors atomic.Int64
	// EventsDropped counts events dropped because the kubelet's event
	// queue was full (1,000 waiting).
	EventsDropped atomic.Int64
	// Retries counts kubelet requests retried after a transient error
	// (API server away, 5xx, 429).
	Retries atomic.Int64
	// StatusSyncsDropped counts pod status syncs still failing at the
	// session's sync timeout, the storm's recovery timeout (the last error
	// is in the restart's outcome, Outcome.Dropped).
	StatusSyncsDropped atomic.Int64
}

// countFlip counts a pod's Ready transition, if any, from was to now.
func (c *Counters) countFlip(was, now bool) {
	switch {
	case was && !now:
		c.ReadyFlipsDown.Add(1)
	case !was && now:
		c.ReadyFlipsUp.Add(1)
	}
}

// Snapshot returns the counters by their figure names in the storm
// measurement (self.PodStatusPatches, ...).
func (c *Counters) Snapshot() map[string]int64 {
	return map[string]int64{
		self.PodStatusPatches:       c.PodStatusPatches.Load(),
		self.ReadyFlipsDown:         c.ReadyFlipsDown.Load(),
		self.ReadyFlipsUp:           c.ReadyFlipsUp.Load(),
		self.ReadyFlipsCoalesced:    c.ReadyFlipsCoalesced.Load(),
		self.StatusUpdatesCoalesced: c.StatusUpdatesCoalesced.Load(),
		self.TokenRequests:          c.TokenRequests.Load(),
		self.ObjectWatches:          c.ObjectWatches.Load(),
		self.ContainerRestarts:      c.ContainerRestarts.Load(),
		self.MemoryEmptyDirsLost:    c.MemoryEmptyDirsLost.Load(),
		self.PodsRejected:           c.PodsRejected.Load(),
		self.PodsDeleted:            c.PodsDeleted.Load(),
		self.PodsDrained:            c.PodsDrained.Load(),
		self.Errors:                 c.Errors.Load(),
		self.Retries:                c.Retries.Load(),
		self.EventsDropped:          c.EventsDropped.Load(),
		self.StatusSyncsDropped:     c.StatusSyncsDropped.Load(),
	}
}

// Simulator carries out restarts.
type Simulator struct {
	cfg      Config
	Counters Counters
	// sessions opens a node's kubelet session: newSession on cfg.Base,
	// or a test's fake clientset.
	sessions sessionFactory
	// handedBack holds the nodes whose restart already handed them back
	// to KWOK (handBack), so Restart's safety net sends no second relabel.
	handedBack sync.Map
	// relabelledDown holds when each node was last relabelled down
	// (setKubeletLabel), for handBack's kwokRequeueAfter.
	relabelledDown sync.Map
	// exited holds, per node, the containers that exited while its kubelet
	// was down (ExitContainer): node → map["ns/pod"][]container.
	exitedMu sync.Mutex
	exited   map[string]map[string][]string
	// recorders holds the outcome of each node's restart in progress:
	// node → *storm.Recorder (record).
	recorders sync.Map
}

// ExitContainer records that a container of a pod on node exited (a crash,
// an OOM kill) while the node's kubelet is down, its sandbox left running:
// the kubelet's next start finds it exited and starts it again
// (plan.Start). The simulated runtime's state has no other source; a
// calibration calls it when it kills the real side's container.
func (s *Simulator) ExitContainer(node, namespace, pod, container string) {
	s.exitedMu.Lock()
	defer s.exitedMu.Unlock()
	if s.exited == nil {
		s.exited = map[string]map[string][]string{}
	}
	if s.exited[node] == nil {
		s.exited[node] = map[string][]string{}
	}
	key := namespace + "/" + pod
	if !slices.Contains(s.exited[node][key], container) {
		s.exited[node][key] = append(s.exited[node][key], container)
	}
}

// takeExited returns and forgets the containers of node that exited while
// its kubelet was down, by "ns/pod".
func (s *Simulator) takeExited(node string) map[string][]string {
	s.exitedMu.Lock()
	defer s.exitedMu.Unlock()
	m := s.exited[node]
	delete(s.exited, node)
	return m
}

// NewSimulator validates cfg and returns a simulator.
func NewSimulator(cfg Config) (*Simulator, error) {
	var errs []error
	if cfg.Base == nil || cfg.Harness == nil {
		errs = append(errs, errors.New("kubelet simulator: Base and Harness are required"))
	}
	if cfg.RunID == "" {
		errs = append(errs, errors.New("kubelet simulator: RunID is required"))
	}
	switch cfg.Kind {
	case profiles.StormKubelet, profiles.StormRuntime, profiles.StormReboot:
	default:
		errs = append(errs, fmt.Errorf("kubelet simulator: unknown kind %q", cfg.Kind))
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.RecoveryTimeout == 0 {
		cfg.RecoveryTimeout = 10 * time.Minute
	}
	cfg.Version = cfg.Version.Or(kubeversion.Default)
	if !slices.Contains(kubeversion.Supported(), cfg.Version) {
		errs = append(errs, fmt.Errorf("kubelet simulator: Kubernetes %s is not supported (stormbench runs %s)", cfg.Version, kubeversion.SupportedList()))
	}
	if cfg.KubeAPIQPS < 0 || cfg.KubeAPIBurst < 0 {
		errs = append(errs, fmt.Errorf("kube API QPS %d and burst %d: must not be negative", cfg.KubeAPIQPS, cfg.KubeAPIBurst))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	s := &Simulator{cfg: cfg}
	s.sessions = func(node string) (*session, error) {
		return newSession(cfg.Base, node, cfg.Wrap, cfg.Clock, s.sessionOptions())
	}
	return s, nil
}

// sessionOptions are the clients' settings of this simulator's kubelets:
// their rate limit, their version's user agent, and the client of the
// PodCertificateRequest informer when its gate is on.
func (s *Simulator) sessionOptions() sessionOptions {
	rel := plan.ReleaseOf(s.cfg.Version)
	o := sessionOptions{limits: apiLimits{s.cfg.KubeAPIQPS, s.cfg.KubeAPIBurst}, userAgent: rel.UserAgent()}
	if s.gate(kubeversion.GatePodCertificateRequest) {
		o.podCertificateAPI = rel.PodCertificateAPI
	}
	return o
}

// statusSyncGaveUp records a pod status sync dropped after its retries.
func (s *Simulator) statusSyncGaveUp(r storm.Restart) func(pod string, err error) {
	return func(pod string, err error) {
		s.Counters.StatusSyncsDropped.Add(1)
		s.recorder(r).Dropped(pod, err)
	}
}

// gate is the simulated kubelets' value of a feature gate: Config.Gates',
// over the version's default (kubeversion.Version.Gate). A gate the
// version's kubelet does not have (Fixed) is what that kubelet always does:
// v1.34.4 has no ChangeContainerStatusOnKubeletRestart and always resets
// readiness (pkg/kubelet/prober/worker.go), whatever a calibration case or a
// test sets.
func (s *Simulator) gate(name string) bool {
	g, _ := s.cfg.Version.Gate(name)
	if v, ok := s.cfg.Gates[name]; ok && !g.Fixed {
		return v
	}
	return g.Default
}

// record marks that restart r reached step, now.
func (s *Simulator) record(r storm.Restart, step storm.Step) {
	s.recorder(r).Mark(step)
}

// recorder is the recorder of r's node's restart in progress; one that
// keeps nothing outside Restart (a test driving a step alone).
func (s *Simulator) recorder(r storm.Restart) *storm.Recorder {
	if rec, ok := s.recorders.Load(r.Node); ok {
		return rec.(*storm.Recorder)
	}
	return storm.NewRecorder(r, s.cfg.Kind, false, s.cfg.Clock.Now)
}

// Restart carries out one scheduled restart of the configured kind and
// returns its outcome. Whatever happens, the node is handed back to KWOK
// before it returns.
func (s *Simulator) Restart(ctx context.Context, r storm.Restart) storm.Outcome {
	rec := storm.NewRecorder(r, s.cfg.Kind, false, s.cfg.Clock.Now)
	s.recorders.Store(r.Node, rec)
	defer s.recorders.Delete(r.Node)
	err := s.restart(ctx, r)
	if err != nil {
		s.Counters.Errors.Add(1)
	}
	return rec.Outcome(err)
}

// restart is Restart's work: the ownership check, the restart of the
// kind, and the hand-back.
func (s *Simulator) restart(ctx context.Context, r storm.Restart) (err error) {
	var node *corev1.Node
	err = retryTransient(ctx, s.cfg.Clock, time.Time{}, nil, settlingAuth(s.cfg.Clock, func() (err error) {
		node, err = s.cfg.Harness.CoreV1().Nodes().Get(ctx, r.Node, metav1.GetOptions{})
		return err
	}))
	if err != nil {
		return fmt.Errorf("getting node %s: %w", r.Node, err)
	}
	// Ownership: never touch a node this run did not create.
	if node.Labels[fleet.RunLabel] != s.cfg.RunID || node.Labels[cluster.KubeletLabel] == "" {
		return fmt.Errorf("refusing to restart node %s: it does not carry %s=%s", r.Node, fleet.RunLabel, s.cfg.RunID)
	}
	defer func() {
		// Hand the node back even when the run is interrupted.
		if _, done := s.handedBack.LoadAndDelete(r.Node); done {
			return
		}
		// A restart that failed while the run goes on waits out KWOK's
		// requeue bound first (kwokRequeueAfter); an interrupted run does
		// not wait.
		if ctx.Err() == nil {
			_ = s.waitKWOKRequeue(ctx, r.Node, 0)
		}
		bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if herr := s.setKubeletLabel(bctx, r.Node, cluster.KubeletUp); herr != nil && err == nil {
			err = herr
		} else if herr == nil {
			s.nodeUp(r.Node)
		}
	}()
	switch s.cfg.Kind {
	case profiles.StormRuntime:
		return s.runtimeRestart(ctx, r, node)
	case profiles.StormReboot:
		return s.reboot(ctx, r, node)
	default:
		return s.kubeletRestart(ctx, r, node)
	}
}

// rng returns the random source of one use (salt) for a node, seeded from
// the storm's seed and the node's name without the run's ID
// (fleet.NodeName: <runID>-node-00003), which carries the time the run
// started: a rerun, and another run of the same seed, draw the same jitter
// for the same node, so that one seed's schedule is one draw of the
// kubelets too.
func (s *Simulator) rng(node string, salt uint64) *rand.Rand {
	return s.seed().Rng(node, salt)
}

// seed is what a restart's random draws come from: the run's seed and ID
// (Config.Seed, Config.RunID).
func (s *Simulator) seed() plan.Seed { return plan.Seed{Value: s.cfg.Seed, RunID: s.cfg.RunID} }

// nodeRun is one restart of one node as its simulated kubelet lives it:
// the session it opened and the lease controller it runs. Its methods are
// the kubelet's own requests; what the harness does around them (relabel,
// node changes, cordon and drain, the restart's outcome) stays on the Simulator.
type nodeRun struct {
	s    *Simulator
	r    storm.Restart
	sess *session
	// status is the kubelet's status manager: every pod status write of
	// the restart goes through it.
	status statusManager
	// stopLease stops the lease controller; nil until it runs.
	stopLease func()
	// marks are the marks the plan in play has reached (play).
	marks *marks
	// firstSyncs are what each pod's first sync left to its first probe,
	// by "ns/name"; the node actor writes them before MarkSyncsDone, the
	// pods actor reads them after.
	firstSyncs map[string]firstSyncOutcome
}

// openSession opens the connection and clients of the kubelet of r's node
// as this simulator's kubelets run: the recovery timeout bounds its syncs
// and retries, the WatchListClient gate picks its relist, the
// PodCertificateRequest gate adds that informer, the release says how its
// CSI plugin starts, and its retries and dropped status syncs are counted.
// Close the run when it is over.
func (s *Simulator) openSession(ctx context.Context, r storm.Restart) (*nodeRun, error) {
	sess, err := s.sessions(r.Node)
	if err != nil {
		return nil, err
	}
	sess.eventsCtx = ctx
	sess.syncTimeout = s.cfg.RecoveryTimeout
	sess.noWatchList = !s.gate(profiles.GateWatchListClient)
	sess.podCertificates = s.gate(kubeversion.GatePodCertificateRequest)
	sess.csiNodeGetsNode = plan.ReleaseOf(s.cfg.Version).CSINodeGetsNode
	sess.retries = &s.Counters.Retries
	sess.eventsDropped = &s.Counters.EventsDropped
	sess.gaveUp = s.statusSyncGaveUp(r)
	return newNodeRun(s, r, sess), nil
}

// newNodeRun is restart r of s on the kubelet session sess, with its
// status manager.
func newNodeRun(s *Simulator, r storm.Restart, sess *session) *nodeRun {
	return &nodeRun{s: s, r: r, sess: sess, status: statusManager{sess: sess, counters: &s.Counters, clk: s.cfg.Clock}}
}

// close stops the lease controller, then the session.
func (n *nodeRun) close() {
	if n.stopLease != nil {
		n.stopLease()
	}
	n.sess.close()
}

// startLease starts the lease controller (session.startLeaseController):
// a starting kubelet's with latest nil and first 0.
func (n *nodeRun) startLease(ctx context.Context, latest *coordinationv1.Lease, first time.Duration) {
	n.stopLease = n.sess.startLeaseController(ctx, latest, first)
}

// recover ends a restart whose node is Ready again: it hands the node's
// heartbeats back to KWOK at the lease controller's next renewal and
// records ReportedReady and PodsRecovered.
func (n *nodeRun) recover(ctx context.Context) error {
	handed := make(chan error, 1)
	go func() { handed <- n.handBack(ctx) }()
	n.s.record(n.r, storm.StepReportedReady)
	n.s.record(n.r, storm.StepPodsRecovered)
	return <-handed
}

// recoverPlaying plays a started kubelet's plan from start (play) and ends
// the restart: once the node's actor is done (the node Ready), it records
// ReportedReady and hands the node's heartbeats back to KWOK at the lease
// controller's next renewal while the pods' actor goes on; it records
// PodsRecovered once both are done without error. The recovery timeout
// bounds the plan.
func (n *nodeRun) recoverPlaying(ctx context.Context, node *corev1.Node, start time.Time, steps plan.Plan) error {
	handed := make(chan error, 1)
	var handing atomic.Bool
	pctx, cancel := context.WithTimeout(ctx, n.s.cfg.RecoveryTimeout)
	defer cancel()
	perr := n.play(pctx, node, start, steps, func(a plan.Actor) {
		if a != plan.ActorNode {
			return
		}
		handing.Store(true)
		go func() { handed <- n.handBack(ctx) }()
		n.s.record(n.r, storm.StepReportedReady)
	})
	if perr == nil {
		n.s.record(n.r, storm.StepPodsRecovered)
	}
	if !handing.Load() {
		return perr
	}
	return errors.Join(perr, <-handed)
}

// kwokRequeueAfter is how long after a node is relabelled down the KWOK
// controller (0.8.0) may still hold the node's lease in its delaying queue,
// for a lease renew interval of interval (0: the 40 s lease's 10 s). The
// relabel makes KWOK cancel the node's queued renewal (ReleaseHold); a
// renewal in flight at that moment is queued again when it returns,
// interval (+4 % jitter) later. If the node is relabelled up before that
// stale entry fires, KWOK queues the node a second time, and its heap
// (pkg/utils/heap Push) keeps one index per item: the stale entry stays at
// the top of the queue with no index, cannot be removed, and no other
// node's lease is renewed again. Two fleet-1k legacy storms stalled that
// way (results/apf/README.md, in git history): after 8 minutes of storm, 999 of 1,000
// leases KWOK held were not renewed for 22 minutes, while it renewed one
// node's over and over. Handing back no sooner than this after the
// relabel lets the stale entry fire while the node is still unmanaged,
// and KWOK drops it. The bound allows a renewal 15 s in flight, about the
// worst lease-update latency measured in the fleet-1k storms; a slower
// API server can still trigger the bug.
func kwokRequeueAfter(interval time.Duration) time.Duration {
	if interval <= 0 {
		interval = defaultLeaseDuration / 4
	}
	return interval + interval/25 + kwokRenewalInFlight + time.Second
}

// waitKWOKRequeue waits until kwokRequeueAfter has passed since node was
// last relabelled down, for a lease renew interval of interval (0: the
// default).
func (s *Simulator) waitKWOKRequeue(ctx context.Context, node string, interval time.Duration) error {
	at, ok := s.relabelledDown.Load(node)
	if !ok {
		return nil
	}
	return poll.Sleep(ctx, s.cfg.Clock, at.(time.Time).Add(kwokRequeueAfter(interval)).Sub(s.cfg.Clock.Now()))
}

// kwokRenewalInFlight is how long a KWOK lease renewal may be in flight
// when its node is relabelled down (kwokRequeueAfter).
const kwokRenewalInFlight = 15 * time.Second

// handBack stops the simulated kubelet's lease controller and hands the
// node's heartbeats back to KWOK when that controller would have renewed
// the lease next. KWOK renews a lease it takes over at once (kwok
// pkg/kwok/controllers/node_lease_controller.go TryHold, then sync: the
// holder is the node's name for both), and on its own renew interval after;
// a real kubelet renews every leaseDuration/4 from its start
// (pkg/kubelet/nodelease, component-helpers/apimachinery/lease
// controller.go Run). Handing back at once would add a renewal a real
// kubelet does not send and shift the node's renewal phase; waiting keeps
// both. The relabel is the harness's (setKubeletLabel).
func (n *nodeRun) handBack(ctx context.Context) error {
	s, node := n.s, n.r.Node
	// The lease controller keeps renewing while it waits, as the kubelet
	// it stands for would.
	if err := s.waitKWOKRequeue(ctx, node, time.Duration(n.sess.leaseInterval.Load())); err != nil {
		return err
	}
	if n.stopLease != nil {
		n.stopLease()
	}
	if due := n.sess.nextLeaseRenewal(); !due.IsZero() {
		if err := poll.Sleep(ctx, s.cfg.Clock, due.Sub(s.cfg.Clock.Now())); err != nil {
			return err
		}
	}
	if err := s.setKubeletLabel(ctx, node, cluster.KubeletUp); err != nil {
		return err
	}
	s.handedBack.Store(node, true)
	s.nodeUp(node)
	return nil
}
