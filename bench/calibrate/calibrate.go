package calibrate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/utils/clock"

	"github.com/stormbench/stormbench/bench/cluster"
	"github.com/stormbench/stormbench/bench/fleet"
	"github.com/stormbench/stormbench/bench/measure/recovery"
	"github.com/stormbench/stormbench/bench/realnode"
	"github.com/stormbench/stormbench/bench/storm"
	"github.com/stormbench/stormbench/profiles"
)

// The probe handlers a case can give its pods.
const (
	// ProbeExec runs "true" in the container: what the hollow kubelet's
	// fake runtime can answer.
	ProbeExec = "exec"
	// ProbeHTTP GETs /healthz (readiness) and /livez (liveness) on port
	// 8080 of the pod, served by stormbench-pause: real containers only.
	ProbeHTTP = "http"
	// ProbeTCP connects to port 8081 of the pod: real containers only.
	ProbeTCP = "tcp"
)

// Options configure a calibration.
type Options struct {
	// Target is the harness's connection.
	Target *cluster.Target
	// Embedded is the embedded cluster; it must run with its audit log.
	Embedded *cluster.Embedded
	// RunID labels every object; nodes and namespace carry it.
	RunID string
	// Nodes is K: real nodes, and as many simulated ones.
	Nodes int
	// PodsPerNode is the pods of each node's Deployment.
	PodsPerNode int
	// ProbePeriod is the exec readiness and liveness probes' period.
	ProbePeriod time.Duration
	// InitDuration is the simulated kubelet's NotReady flash after start
	// (a profile's storm.initDuration); 0 keeps the node Ready.
	InitDuration time.Duration
	// Cases run one after another on the same nodes.
	Cases []Case
	// Tolerance decides which rows agree.
	Tolerance Tolerance
	// Seed seeds the simulated kubelets' probe jitter.
	Seed int64
	// KeepObjects skips deleting the run's objects at the end (the
	// cluster goes away with them); real nodes are stopped either way.
	KeepObjects bool
	// PodFeatures add to every node's pods what some real workloads carry
	// and the default calibration pod leaves out, so that the model's
	// handling of it is measured too: PodFeatureStartupProbe,
	// PodFeatureObjectRefs, PodFeatureAutomount.
	PodFeatures []string
	// Backend is the real nodes' kind: BackendHollow (the default: the
	// kubelet code with a fake runtime) or BackendContainerd (the kubelet
	// itself on a containerd of its own, real containers).
	Backend string
	// KubeAPIQPS and KubeAPIBurst are both sides' kubeAPIQPS and
	// kubeAPIBurst (the kubelet's main client); 0 keeps the kubelet's
	// defaults, 50 and 100. A low limit keeps the status manager busy,
	// which decides whether a legacy flip reaches the API server.
	KubeAPIQPS, KubeAPIBurst int
	// Stagger spaces the restarts of a case: the i-th real node and the
	// i-th simulated one restart together, the pairs Stagger apart in an
	// order drawn for the case, so K real kubelets do not start on one
	// machine in the same instant. Each node is watched for the case's downtime and
	// observation time from its own restart. 0 restarts every node at
	// once.
	Stagger time.Duration
	// Model makes a case's simulated kubelets, of the real ones' version
	// (the embedded cluster's) with the case's kind, gates and runtime
	// mode: the model that calibrate judges and does not import
	// (kubelet.NewSimulator, wired by the CLI).
	Model func(Case) (Model, error)
	// Logf receives progress lines.
	Logf func(format string, args ...any)
	// Clock times the calibration and its waits; nil is the real clock.
	// The real kubelets and the audit log keep the machine's time, so
	// only tests of the waits pass another.
	Clock clock.Clock
}

// Model is a case's simulated kubelets: the restarter of its simulated
// nodes, which records the containers that exit while a kubelet is down.
type Model interface {
	storm.Restarter
	ExitContainer(node, namespace, pod, container string)
}

// The real-node backends.
const (
	BackendHollow     = "hollow"
	BackendContainerd = "containerd"
)

// The values of Options.PodFeatures.
const (
	// PodFeatureStartupProbe gives the container an exec startup probe of
	// the probe period.
	PodFeatureStartupProbe = "startup-probe"
	// PodFeatureObjectRefs makes the pod reference a ConfigMap through
	// envFrom, a Secret through an env secretKeyRef, an immutable
	// ConfigMap as a volume and a ConfigMap as a projected volume source,
	// each the node's own: the kubelet's Secret and ConfigMap managers
	// watch every one (pkg/api/v1/pod VisitPodSecretNames,
	// VisitPodConfigmapNames).
	PodFeatureObjectRefs = "object-refs"
	// PodFeatureAutomount mounts the service-account token as admission
	// does by default: a projected volume with the token (a TokenRequest
	// per pod after a restart) and the kube-root-ca.crt ConfigMap.
	PodFeatureAutomount = "automount"
)

// PodFeatures lists the known pod features.
func PodFeatures() []string {
	return []string{PodFeatureStartupProbe, PodFeatureObjectRefs, PodFeatureAutomount}
}

// DefaultStagger is Options.Stagger's default: about the time a real
// kubelet's start-up takes a core on these 2-core machines, so that each
// real kubelet's start has the machine's spare CPU rather than a tenth of
// it (with 10 containerd kubelets started at once, their node informers
// missed the pod source's first 1 s sync check and the pod watch came
// a second late: config/apiserver.go NewSourceApiserver).
const DefaultStagger = time.Second

// MaxStagger bounds Options.Stagger.
const MaxStagger = 10 * time.Second

// MaxNodes bounds K: each real node costs about realnode.BytesPerNode and
// a little CPU, and calibration wants a few of each, not a fleet.
const MaxNodes = 16

// Validate checks the options before anything starts, so bad input costs
// nothing. memAvailable is the machine's available memory in bytes (0:
// not checked).
func (o *Options) Validate(memAvailable int64) error {
	var errs []error
	check := func(ok bool, format string, args ...any) { errs = appendUnless(errs, ok, format, args...) }
	check(o.Nodes >= 1 && o.Nodes <= MaxNodes, "nodes: %d: must be between 1 and %d", o.Nodes, MaxNodes)
	check(o.PodsPerNode >= 1 && o.PodsPerNode <= 50, "pods per node: %d: must be between 1 and 50", o.PodsPerNode)
	check(o.ProbePeriod >= time.Second && o.ProbePeriod <= time.Minute, "probe period: %s: must be between 1s and 1m", o.ProbePeriod)
	check(o.Stagger >= 0 && o.Stagger <= MaxStagger, "stagger: %s: must be between 0 and %s", o.Stagger, MaxStagger)
	check(len(o.Cases) > 0, "no calibration case selected")
	for _, cs := range o.Cases {
		check(cs.probeOf() == ProbeExec || o.Backend == BackendContainerd, "case %s: %s probes need --backend %s: a hollow kubelet's pods have no address it can dial", cs.Name, cs.Probe, BackendContainerd)
		check(cs.ExitContainers <= 0 || o.Backend == BackendContainerd, "case %s kills containers: needs --backend %s: a hollow kubelet's containers are fakes", cs.Name, BackendContainerd)
		check(cs.ExitContainers <= o.PodsPerNode, "case %s kills the containers of %d pods of each node: needs as many pods per node, not %d", cs.Name, cs.ExitContainers, o.PodsPerNode)
		check(cs.DeletePods <= 0 || cs.DeletePods < o.PodsPerNode, "case %s deletes %d pods of each node: needs more than %d pods per node, not %d", cs.Name, cs.DeletePods, cs.DeletePods, o.PodsPerNode)
	}
	for _, f := range o.PodFeatures {
		check(slices.Contains(PodFeatures(), f), "pod feature %q: must be one of %s", f, strings.Join(PodFeatures(), ", "))
	}
	check(o.KubeAPIQPS >= 0 && o.KubeAPIQPS <= 10000, "kube API QPS: %d: must be between 1 and 10000, or 0 for the kubelet default", o.KubeAPIQPS)
	check(o.KubeAPIBurst >= 0 && o.KubeAPIBurst <= 10000, "kube API burst: %d: must be between 1 and 10000, or 0 for the kubelet default", o.KubeAPIBurst)
	check(o.Backend == "" || o.Backend == BackendHollow || o.Backend == BackendContainerd, "backend %q: must be %s or %s", o.Backend, BackendHollow, BackendContainerd)
	need := int64(o.Nodes) * realnode.BytesPerNode
	check(memAvailable <= 0 || o.Nodes <= 0 || need <= memAvailable/2, "nodes: %d real kubelets need about %d MiB (%d MiB each); this machine has %d MiB available and keeps half for the control plane",
		o.Nodes, need>>20, realnode.BytesPerNode>>20, memAvailable>>20)
	if err := o.Tolerance.validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// appendUnless appends the error of format and args to errs unless ok.
func appendUnless(errs []error, ok bool, format string, args ...any) []error {
	if ok {
		return errs
	}
	return append(errs, fmt.Errorf(format, args...))
}

// side is one half of the calibration: real or simulated nodes.
type side struct {
	name  string
	nodes []string
}

func (s side) has(node string) bool { return slices.Contains(s.nodes, node) }

// owner returns the node an object name belongs to: each node's
// Deployment, Service and PDB are named after it, and their ReplicaSets,
// pods and EndpointSlices after them.
func (s side) owner(name string) (string, bool) {
	for _, n := range s.nodes {
		if name == n || strings.HasPrefix(name, n+"-") {
			return n, true
		}
	}
	return "", false
}

// calibration is one run in progress.
type calibration struct {
	o     Options
	ns    string
	real  side
	sim   side
	nodes map[string]realnode.Runner
	// bystanders are KWOK nodes that no case restarts (provision).
	bystanders []string
	tracker    *recovery.Tracker
	audit      *auditTail
	// probe is the probe handler the pods have, or are rolling to.
	probe string
	// starts are each node's kubelet start in the case running
	// (storm.Outcome.KubeletStart), for spanLastRequest.
	starts map[string]time.Time
	// downs are when each node went down in the case running
	// (storm.Outcome.Down): a real kubelet killed, a simulated node
	// relabelled away from KWOK. countRequests counts KWOK's heartbeats of
	// a simulated node from then on only.
	downs map[string]time.Time
	// offsets are each node's restart offset from the case's t0 in the
	// case running (Options.Stagger): its window is [t0 + offset,
	// t0 + offset + downtime + observation).
	offsets map[string]time.Duration
	// lastOffset is the largest of offsets: the last pair's.
	lastOffset time.Duration
}

// Run provisions K real and K simulated nodes with identical pods, runs
// every case on both at the same moment and returns the fidelity table.
// Real nodes are stopped and every object deleted before it returns,
// whatever happened.
func Run(ctx context.Context, o Options) (res *Result, err error) {
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if err := o.Validate(0); err != nil {
		return nil, err
	}
	if o.Embedded == nil {
		return nil, errors.New("calibration needs the embedded cluster (real kubelets run beside it and its audit log attributes requests)")
	}
	if o.Model == nil {
		return nil, errors.New("calibration needs the model it judges (Options.Model)")
	}
	o.Backend = cmp.Or(o.Backend, BackendHollow)
	if err := CheckHost(o.Embedded.Components(), o.Backend); err != nil {
		return nil, err
	}
	c, err := newCalibration(o)
	if err != nil {
		return nil, err
	}
	res = &Result{
		APIVersion: profiles.APIVersion, Kind: ResultKind, SchemaVersion: SchemaVersion,
		Start: o.Clock.Now().UTC(), KubeVersion: o.Embedded.KubeVersion().String(), ServerVersion: o.Target.ServerVersion,
		Nodes: o.Nodes, PodsPerNode: o.PodsPerNode, Bystanders: len(c.bystanders), ProbePeriod: o.ProbePeriod.String(), InitDuration: o.InitDuration.String(),
		PodFeatures: o.PodFeatures, KubeAPIQPS: o.KubeAPIQPS, KubeAPIBurst: o.KubeAPIBurst, Stagger: o.Stagger.String(),
		Tolerance: o.Tolerance, RealNodes: c.real.nodes, SimulatedNodes: c.sim.nodes, Backend: o.Backend,
	}
	res.NodeEvictionRate, _ = strconv.ParseFloat(o.Embedded.NodeEvictionRate(), 64)
	if res.NodeEvictionRate != NodeEvictionRate {
		o.Logf("warning: the cluster's --node-eviction-rate is %g/s, not %d/s: the node-lifecycle controller's NoExecute taints will depend on the order the nodes go NotReady", res.NodeEvictionRate, NodeEvictionRate)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Minute)
		defer cancel()
		if cerr := c.teardown(cctx); cerr != nil {
			err = errors.Join(err, cerr)
		}
		res.End = o.Clock.Now().UTC()
	}()
	if err := c.provision(ctx); err != nil {
		return res, err
	}
	stopWatch, err := c.watch(ctx)
	if err != nil {
		return res, err
	}
	defer stopWatch()
	for _, cs := range o.Cases {
		if cs.probeOf() != c.probe {
			if err := c.reprobe(ctx, cs.probeOf()); err != nil {
				return res, err
			}
		}
		if err := c.settle(ctx, 4*time.Minute); err != nil {
			return res, fmt.Errorf("before case %s: %w", cs.Name, err)
		}
		o.Logf("Case %s: %s on %d real and %d simulated nodes (down %s, watched %s after)", cs.Name, cs.Kind, o.Nodes, o.Nodes, cs.Downtime, cs.Observe)
		cr, err := c.runCase(ctx, cs)
		res.Cases = append(res.Cases, cr)
		if err != nil {
			return res, fmt.Errorf("case %s: %w", cs.Name, err)
		}
	}
	res.Complete = true
	return res, nil
}

// CheckHost checks the machine can run a calibration's real side on
// backend: the real-node binaries of comps, and containerd for that
// backend.
func CheckHost(comps cluster.Components, backend string) error {
	if err := comps.CheckRealNodes(); err != nil || backend != BackendContainerd {
		return err
	}
	return realnode.CheckContainerdHost(comps)
}

// newCalibration names the nodes of both sides and the bystanders, and
// checks the audit log it attributes requests by.
func newCalibration(o Options) (*calibration, error) {
	c := &calibration{o: o, ns: o.RunID, nodes: map[string]realnode.Runner{}, tracker: recovery.NewTracker(o.Clock), audit: &auditTail{path: o.Embedded.AuditLogPath()}, probe: ProbeExec}
	if len(o.Cases) > 0 {
		// The first case's pods are created with its probes.
		c.probe = o.Cases[0].probeOf()
	}
	if _, err := os.Stat(c.audit.path); err != nil {
		return nil, fmt.Errorf("calibration needs the API server's audit log (the embedded cluster started with it): %w", err)
	}
	for i := 0; i < o.Nodes; i++ {
		c.sim.nodes = append(c.sim.nodes, fleet.NodeName(o.RunID, i))
		c.real.nodes = append(c.real.nodes, fmt.Sprintf("%s-real-%d", o.RunID, i))
	}
	for j := 0; j < Bystanders(o.Nodes); j++ {
		c.bystanders = append(c.bystanders, fmt.Sprintf("%s-bystander-%d", o.RunID, j))
	}
	c.real.name, c.sim.name = "real", "simulated"
	return c, nil
}

// Ports stormbench-pause serves probes on ("serve HTTP-PORT TCP-PORT").
const (
	httpProbePort = 8080
	tcpProbePort  = 8081
)
