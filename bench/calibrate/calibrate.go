package calibrate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/stormbench/stormbench/bench/poll"

	"golang.org/x/sync/errgroup"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	"github.com/stormbench/stormbench/bench/cluster"
	"github.com/stormbench/stormbench/bench/fleet"
	"github.com/stormbench/stormbench/bench/kubelet"
	"github.com/stormbench/stormbench/bench/realnode"
	"github.com/stormbench/stormbench/bench/storm"
	"github.com/stormbench/stormbench/profiles"
)

// Case is one storm run on both sides.
type Case struct {
	// Name identifies the case in the table, such as "kubelet/legacy".
	Name string `json:"name"`
	// Kind is kubelet, runtime or reboot.
	Kind string `json:"kind"`
	// Gates are the kubelets' feature gates at their restart.
	Gates map[string]bool `json:"featureGates,omitempty"`
	// RuntimeMode is refused or hung, for runtime cases.
	RuntimeMode string `json:"runtimeMode,omitempty"`
	// Downtime is how long the kubelet, the runtime or the node is down.
	Downtime time.Duration `json:"downtime"`
	// Observe is how long after the downtime the case is watched.
	Observe time.Duration `json:"observe"`
	// DeletePods, when above 0, is how many pods of each node are deleted
	// halfway through the downtime (its Deployment scaled down, so the
	// ReplicaSet controller deletes them gracefully and none replaces
	// them): the restarted kubelet finds them terminating, as after a
	// taint-based eviction. The replicas are restored after the case.
	DeletePods int `json:"deletePods,omitempty"`
	// ExitContainers, when above 0, is how many pods of each node have
	// their container killed (SIGKILL, exit 137) halfway through the
	// downtime, their sandbox left running: the restarted kubelet finds
	// the container exited and starts it again. The real side's is killed
	// through its containerd (containerd backend only), the simulated
	// side's recorded in the model (kubelet.Simulator.ExitContainer).
	ExitContainers int `json:"exitContainers,omitempty"`
	// Probe is the handler of the pods' readiness and liveness probes
	// during the case: ProbeExec (also when empty), ProbeHTTP or
	// ProbeTCP. The pods are rolled to it before the case when the case
	// before had another.
	Probe string `json:"probe,omitempty"`
}

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

// needsContainerd says the case needs real containers: network probes,
// or a container killed on the node.
func (cs Case) needsContainerd() bool {
	return cs.probeOf() != ProbeExec || cs.ExitContainers > 0
}

// probeOf returns a case's probe handler, ProbeExec when unset.
func (cs Case) probeOf() string {
	if cs.Probe == "" {
		return ProbeExec
	}
	return cs.Probe
}

// networkProbeCases are the cases run again with HTTP and with TCP probes.
var networkProbeCases = []string{"kubelet/legacy", "kubelet/preserve", "runtime/refused", "reboot"}

// Cases returns the built-in cases by name: kubelet/legacy,
// kubelet/preserve, runtime/refused, runtime/hung, reboot and
// kubelet/deleted with exec probes, then kubelet/legacy, kubelet/preserve,
// runtime/refused and reboot again with HTTP probes ("…+http") and with
// TCP probes ("…+tcp").
func Cases() []Case {
	legacy := map[string]bool{profiles.GateChangeContainerStatusOnKubeletRestart: true}
	preserve := map[string]bool{profiles.GateChangeContainerStatusOnKubeletRestart: false}
	cases := []Case{
		// The legacy flips spread over U(0, probe period) after start.
		{Name: "kubelet/legacy", Kind: profiles.StormKubelet, Gates: legacy, Downtime: 5 * time.Second, Observe: 25 * time.Second},
		{Name: "kubelet/preserve", Kind: profiles.StormKubelet, Gates: preserve, Downtime: 5 * time.Second, Observe: 25 * time.Second},
		// 50 s: past the kubelet's 30 s runtime-status threshold
		// (kubelet.go runtimeState), so the node goes NotReady.
		{Name: "runtime/refused", Kind: profiles.StormRuntime, RuntimeMode: profiles.RuntimeRefused, Downtime: 50 * time.Second, Observe: 30 * time.Second},
		{Name: "runtime/hung", Kind: profiles.StormRuntime, RuntimeMode: profiles.RuntimeHung, Downtime: 50 * time.Second, Observe: 30 * time.Second},
		// 20 s: below the node-monitor grace period, so nothing is evicted.
		{Name: "reboot", Kind: profiles.StormReboot, Gates: preserve, Downtime: 20 * time.Second, Observe: 40 * time.Second},
		// Pods deleted while the kubelet is away: the status manager's
		// terminal status write, then the DELETE (status_manager.go syncPod,
		// canBeDeleted).
		{Name: "kubelet/deleted", Kind: profiles.StormKubelet, Gates: preserve, Downtime: 6 * time.Second, Observe: 24 * time.Second, DeletePods: 2},
		// A container that exited while the kubelet was away: the kubelet
		// starts it again at once, and it is not ready until its probe
		// passes, with readiness preserved for the others.
		{Name: "kubelet/exited", Kind: profiles.StormKubelet, Gates: preserve, Downtime: 6 * time.Second, Observe: 24 * time.Second, ExitContainers: 1},
	}
	// The same restarts of pods with network probes, as web-http and
	// web-tcp carry ("kubelet/legacy+http"): the kubelet dials the pod,
	// so only the containerd backend can run them.
	exec := cases
	for _, probe := range []string{ProbeHTTP, ProbeTCP} {
		for _, c := range exec {
			if slices.Contains(networkProbeCases, c.Name) {
				c.Name, c.Probe = c.Name+"+"+probe, probe
				cases = append(cases, c)
			}
		}
	}
	return cases
}

// DefaultCases are the cases a backend runs unless told otherwise: every
// case on containerd, the exec-probe cases on hollow kubelets.
func DefaultCases(backend string) []Case {
	var out []Case
	for _, c := range Cases() {
		if backend == BackendContainerd || !c.needsContainerd() {
			out = append(out, c)
		}
	}
	return out
}

// SelectCases returns the built-in cases named, in the order given.
func SelectCases(names []string) ([]Case, error) {
	all := Cases()
	var out []Case
	var unknown []string
	for _, n := range names {
		found := false
		for _, c := range all {
			if c.Name == n {
				out = append(out, c)
				found = true
			}
		}
		if !found {
			unknown = append(unknown, n)
		}
	}
	if len(unknown) > 0 {
		var known []string
		for _, c := range all {
			known = append(known, c.Name)
		}
		return nil, fmt.Errorf("unknown calibration case %s (known: %s)", strings.Join(unknown, ", "), strings.Join(known, ", "))
	}
	return out, nil
}

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
	// Logf receives progress lines.
	Logf func(format string, args ...any)
	// Clock times the calibration and its waits; nil is the real clock.
	// The real kubelets and the audit log keep the machine's time, so
	// only tests of the waits pass another.
	Clock clock.Clock
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

// MaxNodes bounds K: each real node costs about realnode.BytesPerNode and
// a little CPU, and calibration wants a few of each, not a fleet.
const MaxNodes = 16

// Validate checks the options before anything starts, so bad input costs
// nothing. memAvailable is the machine's available memory in bytes (0:
// not checked).
func (o *Options) Validate(memAvailable int64) error {
	var errs []error
	if o.Nodes < 1 || o.Nodes > MaxNodes {
		errs = append(errs, fmt.Errorf("nodes: %d: must be between 1 and %d", o.Nodes, MaxNodes))
	}
	if o.PodsPerNode < 1 || o.PodsPerNode > 50 {
		errs = append(errs, fmt.Errorf("pods per node: %d: must be between 1 and 50", o.PodsPerNode))
	}
	if o.ProbePeriod < time.Second || o.ProbePeriod > time.Minute {
		errs = append(errs, fmt.Errorf("probe period: %s: must be between 1s and 1m", o.ProbePeriod))
	}
	if len(o.Cases) == 0 {
		errs = append(errs, errors.New("no calibration case selected"))
	}
	for _, cs := range o.Cases {
		if cs.probeOf() != ProbeExec && o.Backend != BackendContainerd {
			errs = append(errs, fmt.Errorf("case %s: %s probes need --backend %s: a hollow kubelet's pods have no address it can dial", cs.Name, cs.Probe, BackendContainerd))
		}
		if cs.ExitContainers > 0 && o.Backend != BackendContainerd {
			errs = append(errs, fmt.Errorf("case %s kills containers: needs --backend %s: a hollow kubelet's containers are fakes", cs.Name, BackendContainerd))
		}
		if cs.ExitContainers > o.PodsPerNode {
			errs = append(errs, fmt.Errorf("case %s kills the containers of %d pods of each node: needs as many pods per node, not %d", cs.Name, cs.ExitContainers, o.PodsPerNode))
		}
		if cs.DeletePods > 0 && cs.DeletePods >= o.PodsPerNode {
			errs = append(errs, fmt.Errorf("case %s deletes %d pods of each node: needs more than %d pods per node, not %d", cs.Name, cs.DeletePods, cs.DeletePods, o.PodsPerNode))
		}
	}
	for _, f := range o.PodFeatures {
		if !slices.Contains(PodFeatures(), f) {
			errs = append(errs, fmt.Errorf("pod feature %q: must be one of %s", f, strings.Join(PodFeatures(), ", ")))
		}
	}
	if o.KubeAPIQPS < 0 || o.KubeAPIQPS > 10000 {
		errs = append(errs, fmt.Errorf("kube API QPS: %d: must be between 1 and 10000, or 0 for the kubelet default", o.KubeAPIQPS))
	}
	if o.KubeAPIBurst < 0 || o.KubeAPIBurst > 10000 {
		errs = append(errs, fmt.Errorf("kube API burst: %d: must be between 1 and 10000, or 0 for the kubelet default", o.KubeAPIBurst))
	}
	if o.Backend != "" && o.Backend != BackendHollow && o.Backend != BackendContainerd {
		errs = append(errs, fmt.Errorf("backend %q: must be %s or %s", o.Backend, BackendHollow, BackendContainerd))
	}
	if need := int64(o.Nodes) * realnode.BytesPerNode; memAvailable > 0 && o.Nodes > 0 && need > memAvailable/2 {
		errs = append(errs, fmt.Errorf("nodes: %d real kubelets need about %d MiB (%d MiB each); this machine has %d MiB available and keeps half for the control plane",
			o.Nodes, need>>20, realnode.BytesPerNode>>20, memAvailable>>20))
	}
	if err := o.Tolerance.validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// side is one half of the calibration: real or simulated nodes.
type side struct {
	name  string
	nodes []string
}

func (s side) has(node string) bool {
	for _, n := range s.nodes {
		if n == node {
			return true
		}
	}
	return false
}

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
	timeline   *timeline
	audit      *auditTail
	// probe is the probe handler the pods have, or are rolling to.
	probe string
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
	if o.Backend == "" {
		o.Backend = BackendHollow
	}
	if err := o.Embedded.Components().CheckRealNodes(); err != nil {
		return nil, err
	}
	if o.Backend == BackendContainerd {
		if err := realnode.CheckContainerdHost(o.Embedded.Components()); err != nil {
			return nil, err
		}
	}
	c := &calibration{o: o, ns: o.RunID, nodes: map[string]realnode.Runner{}, timeline: newTimeline(o.Clock), audit: &auditTail{path: o.Embedded.AuditLogPath()}, probe: ProbeExec}
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
	res = &Result{
		APIVersion: profiles.APIVersion, Kind: ResultKind, SchemaVersion: SchemaVersion,
		Start: o.Clock.Now().UTC(), KubeVersion: cluster.KubeVersion, ServerVersion: o.Target.ServerVersion,
		Nodes: o.Nodes, PodsPerNode: o.PodsPerNode, Bystanders: len(c.bystanders), ProbePeriod: o.ProbePeriod.String(), InitDuration: o.InitDuration.String(),
		PodFeatures: o.PodFeatures, KubeAPIQPS: o.KubeAPIQPS, KubeAPIBurst: o.KubeAPIBurst,
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

// provision creates the namespace, the simulated (KWOK) nodes, the real
// nodes' processes and each node's Deployment and Service, and waits until
// everything is Ready.
func (c *calibration) provision(ctx context.Context) error {
	client := c.o.Target.Client
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: c.ns, Labels: map[string]string{fleet.RunLabel: c.o.RunID}}}
	if _, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", c.ns, err)
	}
	for i, name := range c.sim.nodes {
		n, err := fleet.BuildNode(fleet.NodeSpec{RunID: c.o.RunID, Index: i, CPU: "32", Memory: "256Gi", Pods: 110})
		if err != nil {
			return err
		}
		created, err := client.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("creating simulated node %s: %w", name, err)
		}
		// As the fleet does: the CSINode a real kubelet has had since its
		// first start.
		if _, err := client.StorageV1().CSINodes().Create(ctx, fleet.CSINode(name, created.UID), metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating CSINode of simulated node %s: %w", name, err)
		}
	}
	for j, name := range c.bystanders {
		// Healthy nodes beside the restarted ones, as any real cluster
		// has: KWOK keeps them Ready and nothing restarts them. Without
		// them every node of the cluster goes NotReady together in a
		// runtime restart, and the node-lifecycle controller enters its
		// "all Nodes are not-Ready" disruption mode, in which it takes
		// the NoExecute taints off again (node_lifecycle_controller.go
		// handleDisruption); which side it had tainted by then depended
		// only on which went NotReady first. 2K bystanders keep the zone
		// below the unhealthy-zone threshold (0.55; ComputeZoneState), so
		// its NoExecute tainting runs as in a healthy cluster.
		n, err := fleet.BuildNode(fleet.NodeSpec{RunID: c.o.RunID, Index: c.o.Nodes + j, CPU: "32", Memory: "256Gi", Pods: 110})
		if err != nil {
			return err
		}
		n.Name, n.Spec.ProviderID = name, "kwok://"+name
		n.Labels[corev1.LabelHostname], n.Labels[RoleLabel] = name, "bystander"
		if _, err := client.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating bystander node %s: %w", name, err)
		}
	}
	dir := filepath.Join(c.o.Embedded.Dir(), cluster.RealNodesDir)
	for i, name := range c.real.nodes {
		opts := realnode.Options{
			Components: c.o.Embedded.Components(), AdminKubeconfig: c.o.Embedded.Kubeconfig(), Context: c.o.Target.Context,
			Dir: filepath.Join(dir, name), Name: name, PodCIDR: fleet.PodCIDR(MaxNodes + i),
			Labels: map[string]string{fleet.RunLabel: c.o.RunID, fleet.TypeLabel: fleet.RealNodeType, RoleLabel: "real"},
			CPU:    "32", Memory: "256Gi", MaxPods: 110,
			KubeAPIQPS: c.o.KubeAPIQPS, KubeAPIBurst: c.o.KubeAPIBurst,
		}
		var n realnode.Runner
		var err error
		if c.o.Backend == BackendContainerd {
			// The machine's capacity is the node's; CPU and memory are
			// what cAdvisor reads.
			n, err = realnode.NewContainerd(opts)
		} else {
			n, err = realnode.New(opts)
		}
		if err != nil {
			return err
		}
		c.nodes[name] = n
		if err := n.Start(nil); err != nil {
			return err
		}
	}
	c.o.Logf("Started %d %s kubelets (logs under %s)", len(c.real.nodes), c.o.Backend, dir)
	if err := c.waitNodes(ctx, 2*time.Minute); err != nil {
		return err
	}
	// A kubelet's first lease is created only once its node is registered
	// (the lease controller's owner-reference hook retries about 10 s
	// later): wait for it, so that no case counts a first start's lease
	// creation as a restart's.
	if err := c.waitFor(ctx, "waiting for the real nodes' first leases", time.Minute, func() (string, error) {
		for _, name := range c.real.nodes {
			if _, err := c.o.Target.Client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, name, metav1.GetOptions{}); err != nil {
				return "lease of " + name + ": " + err.Error(), nil
			}
		}
		return "", nil
	}); err != nil {
		return err
	}
	for _, s := range []side{c.real, c.sim} {
		for _, node := range s.nodes {
			if err := c.createWorkload(ctx, node); err != nil {
				return err
			}
		}
	}
	return c.settle(ctx, 4*time.Minute)
}

// Bystanders is the number of healthy KWOK nodes a calibration of k real
// and k simulated nodes adds beside them (see provision).
func Bystanders(k int) int { return 2 * k }

// NodeEvictionRate is the calibration cluster's --node-eviction-rate,
// nodes per second and zone. The node-lifecycle controller adds its
// NoExecute not-ready taints through a token bucket of this rate with a
// burst of 1 (nodelifecycle zoneNoExecuteTainter); at the default 0.1/s
// the 2K nodes a runtime restart takes NotReady at once would be tainted
// 10 s apart, in the order they went NotReady, and the later ones not at
// all in a 20 s outage, so each side's taint writes would depend on the
// other side's timing. At 100/s every NotReady node is tainted at the
// controller's next 5 s pass, as one node among many healthy ones is in a
// real cluster.
const NodeEvictionRate = 100

// RoleLabel marks a calibration node as real, simulated or bystander.
const RoleLabel = "stormbench.io/calibration"

// createWorkload creates node's Deployment (pinned to it, exec readiness
// and liveness probes: what a hollow kubelet's fake runtime can answer)
// and a Service over it.
func (c *calibration) createWorkload(ctx context.Context, node string) error {
	labels := map[string]string{"app": node, fleet.RunLabel: c.o.RunID}
	period := int32(c.o.ProbePeriod / time.Second)
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: node, Namespace: c.ns, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(int32(c.o.PodsPerNode)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": node}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					NodeSelector: map[string]string{corev1.LabelHostname: node},
					Tolerations:  []corev1.Toleration{{Key: fleet.KwokTaintKey, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
					// No service-account token: the projected token's
					// TokenRequest is the same on both sides and would
					// only add noise.
					AutomountServiceAccountToken: ptr.To(false),
					Containers: []corev1.Container{{
						Name: "app", Image: "registry.k8s.io/pause:3.10", ImagePullPolicy: corev1.PullIfNotPresent,
						ReadinessProbe: &corev1.Probe{PeriodSeconds: period, FailureThreshold: 3},
						LivenessProbe:  &corev1.Probe{PeriodSeconds: period, FailureThreshold: 3},
					}},
				},
			},
		},
	}
	setProbe(&dep.Spec.Template.Spec, c.probe)
	if err := c.addPodFeatures(ctx, node, &dep.Spec.Template.Spec); err != nil {
		return err
	}
	if _, err := c.o.Target.Client.AppsV1().Deployments(c.ns).Create(ctx, dep, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating deployment %s: %w", node, err)
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: node, Namespace: c.ns, Labels: labels},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": node},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}},
		},
	}
	if _, err := c.o.Target.Client.CoreV1().Services(c.ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating service %s: %w", node, err)
	}
	return nil
}

// Ports stormbench-pause serves probes on ("serve HTTP-PORT TCP-PORT").
const (
	httpProbePort = 8080
	tcpProbePort  = 8081
)

// setProbe gives the container of a calibration pod spec the probe
// handler (ProbeExec, ProbeHTTP or ProbeTCP) on its readiness, liveness
// and startup probes, and the command that answers it: stormbench-pause's
// pause for exec probes (the kubelet runs "true" beside it), its server
// for network probes. Periods and thresholds stay as they are.
func setProbe(spec *corev1.PodSpec, probe string) {
	ctr := &spec.Containers[0]
	var h corev1.ProbeHandler
	switch probe {
	case ProbeHTTP:
		h.HTTPGet = &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(httpProbePort)}
		ctr.Command = []string{"serve", strconv.Itoa(httpProbePort), strconv.Itoa(tcpProbePort)}
	case ProbeTCP:
		h.TCPSocket = &corev1.TCPSocketAction{Port: intstr.FromInt32(tcpProbePort)}
		ctr.Command = []string{"serve", strconv.Itoa(httpProbePort), strconv.Itoa(tcpProbePort)}
	default:
		h.Exec = &corev1.ExecAction{Command: []string{"true"}}
		ctr.Command = nil
	}
	for _, p := range []*corev1.Probe{ctr.ReadinessProbe, ctr.LivenessProbe, ctr.StartupProbe} {
		if p != nil {
			p.ProbeHandler = *h.DeepCopy()
		}
	}
	if ctr.LivenessProbe != nil && h.HTTPGet != nil {
		ctr.LivenessProbe.HTTPGet.Path = "/livez"
	}
}

// podProbe returns the probe handler of a calibration pod's readiness
// probe: ProbeExec, ProbeHTTP, ProbeTCP, or "" when it has none.
func podProbe(p *corev1.Pod) string {
	if len(p.Spec.Containers) == 0 || p.Spec.Containers[0].ReadinessProbe == nil {
		return ""
	}
	switch h := p.Spec.Containers[0].ReadinessProbe; {
	case h.HTTPGet != nil:
		return ProbeHTTP
	case h.TCPSocket != nil:
		return ProbeTCP
	case h.Exec != nil:
		return ProbeExec
	}
	return ""
}

// reprobe rolls every node's Deployment to pods with the probe handler
// (setProbe); the next settle waits for the rollout.
func (c *calibration) reprobe(ctx context.Context, probe string) error {
	c.o.Logf("Rolling the pods of every node to %s probes", probe)
	c.probe = probe
	for _, node := range c.allNodes() {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			dep, err := c.o.Target.Client.AppsV1().Deployments(c.ns).Get(ctx, node, metav1.GetOptions{})
			if err != nil {
				return err
			}
			setProbe(&dep.Spec.Template.Spec, probe)
			_, err = c.o.Target.Client.AppsV1().Deployments(c.ns).Update(ctx, dep, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			return fmt.Errorf("rolling deployment %s to %s probes: %w", node, probe, err)
		}
	}
	return nil
}

// addPodFeatures adds the options' pod features to a node's pod spec and
// creates the objects they reference, named after the node.
func (c *calibration) addPodFeatures(ctx context.Context, node string, spec *corev1.PodSpec) error {
	ctr := &spec.Containers[0]
	for _, f := range c.o.PodFeatures {
		switch f {
		case PodFeatureStartupProbe:
			ctr.StartupProbe = &corev1.Probe{ProbeHandler: ctr.ReadinessProbe.ProbeHandler, PeriodSeconds: ctr.ReadinessProbe.PeriodSeconds, FailureThreshold: 30}
		case PodFeatureAutomount:
			spec.AutomountServiceAccountToken = ptr.To(true)
		case PodFeatureObjectRefs:
			labels := map[string]string{fleet.RunLabel: c.o.RunID}
			for _, cm := range []*corev1.ConfigMap{
				{ObjectMeta: metav1.ObjectMeta{Name: node + "-env", Namespace: c.ns, Labels: labels}, Data: map[string]string{"MODE": "calibration"}},
				{ObjectMeta: metav1.ObjectMeta{Name: node + "-immutable", Namespace: c.ns, Labels: labels}, Data: map[string]string{"app.conf": "listen 8080\n"}, Immutable: ptr.To(true)},
				{ObjectMeta: metav1.ObjectMeta{Name: node + "-projected", Namespace: c.ns, Labels: labels}, Data: map[string]string{"extra.conf": "x\n"}},
			} {
				if _, err := c.o.Target.Client.CoreV1().ConfigMaps(c.ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
					return fmt.Errorf("creating configmap %s: %w", cm.Name, err)
				}
			}
			sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: node + "-secret", Namespace: c.ns, Labels: labels}, StringData: map[string]string{"token": "calibration"}}
			if _, err := c.o.Target.Client.CoreV1().Secrets(c.ns).Create(ctx, sec, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("creating secret %s: %w", sec.Name, err)
			}
			ctr.EnvFrom = append(ctr.EnvFrom, corev1.EnvFromSource{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: node + "-env"}}})
			ctr.Env = append(ctr.Env, corev1.EnvVar{Name: "TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: node + "-secret"}, Key: "token"}}})
			spec.Volumes = append(spec.Volumes,
				corev1.Volume{Name: "conf", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: node + "-immutable"}}}},
				corev1.Volume{Name: "extra", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
					{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: node + "-projected"}}}}}}})
			ctr.VolumeMounts = append(ctr.VolumeMounts,
				corev1.VolumeMount{Name: "conf", MountPath: "/etc/app"}, corev1.VolumeMount{Name: "extra", MountPath: "/etc/extra"})
		}
	}
	return nil
}

// allNodes lists real then simulated nodes.
func (c *calibration) allNodes() []string {
	return append(append([]string{}, c.real.nodes...), c.sim.nodes...)
}

// waitNodes waits until every node is registered and Ready, and says which
// are not, with the kubelet log of a real one, when it expires.
func (c *calibration) waitNodes(ctx context.Context, timeout time.Duration) error {
	return c.waitFor(ctx, "waiting for the nodes to be Ready", timeout, func() (string, error) {
		var notReady []string
		for _, name := range append(c.allNodes(), c.bystanders...) {
			if n, ok := c.nodes[name]; ok && !n.KubeletAlive() {
				return "", fmt.Errorf("real node %s: its kubelet exited (%s); log: %s", name, n.KubeletExit(), n.KubeletLog())
			}
			node, err := c.o.Target.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil || !fleet.NodeReady(node) {
				what := name
				if n, ok := c.nodes[name]; ok {
					what += " (log: " + n.KubeletLog() + ")"
				}
				if apierrors.IsNotFound(err) {
					what += " not registered"
				}
				notReady = append(notReady, what)
			}
		}
		if len(notReady) == 0 {
			return "", nil
		}
		return "nodes not Ready: " + strings.Join(notReady, ", "), nil
	})
}

// settle waits until the next case can start: every node Ready, every
// pod Ready with the case's probe and none terminating, the ReplicaSet
// controller's event for every pod's creation recorded, and every
// container past the prober's restart grace period.
func (c *calibration) settle(ctx context.Context, timeout time.Duration) error {
	if err := c.waitNodes(ctx, timeout); err != nil {
		return err
	}
	if err := c.waitPodsReady(ctx, timeout); err != nil {
		return err
	}
	pods, err := c.waitCreateEvents(ctx, eventsTimeout)
	if err != nil {
		return err
	}
	return c.waitContainersPastGrace(ctx, pods)
}

// waitContainersPastGrace waits until every running container of the
// run's pods started more than the prober's restart grace period ago.
// With the preserving gate a kubelet still resets the readiness of a
// container started within kubeletRestartGracePeriod before its own start
// (prober/worker.go doProbe; kubelet.RestartGrace): right after a rollout
// to another probe, a kubelet/preserve case on new pods flipped 2 of 5 pods
// per restart on the real side and 2.5 on the model, which measured the
// rollout, not the gate.
// pods is the run's pods as settle last listed them.
func (c *calibration) waitContainersPastGrace(ctx context.Context, pods []corev1.Pod) error {
	latest := latestContainerStart(pods)
	until := latest.Add(kubelet.RestartGrace + graceMargin)
	wait := until.Sub(c.o.Clock.Now())
	if wait <= 0 {
		return nil
	}
	c.o.Logf("Waiting %s until every container started more than %s ago (the prober's restart grace period)", wait.Round(100*time.Millisecond), kubelet.RestartGrace)
	return poll.SleepUntil(ctx, c.o.Clock, until)
}

// graceMargin is added to the grace period: container start times have
// a resolution of one second.
const graceMargin = 2 * time.Second

// latestContainerStart is the latest start time of a running container of
// a live pod, or the zero time.
func latestContainerStart(pods []corev1.Pod) time.Time {
	var latest time.Time
	for i := range pods {
		if pods[i].DeletionTimestamp != nil {
			continue
		}
		for _, cs := range pods[i].Status.ContainerStatuses {
			if r := cs.State.Running; r != nil && r.StartedAt.After(latest) {
				latest = r.StartedAt.Time
			}
		}
	}
	return latest
}

// eventsTimeout bounds settle's wait for the ReplicaSet controller's
// events: client-go's event sink retries a failed write after 10 s, up to
// 12 times (tools/record/event.go defaultSleepDuration, maxTriesPerEvent),
// so a busy API server can delay one by tens of seconds.
const eventsTimeout = time.Minute

// waitCreateEvents waits until every live pod's "Created pod" event is
// recorded. The controller writes its events asynchronously, after the
// pod (controller_utils.go CreatePods), and on a loaded machine the last
// of the first start's could arrive after the pods were Ready and count
// as the first case's, on one side only (a CI run, load 4.2: 1.5 ReplicaSet
// events per restart simulated, 0 real, in kubelet/legacy). If the events
// do not come, the case runs anyway and the log says so: an event lost
// for good does not make the run fail, and one that arrives late shows
// in the table as a row the real kubelet does not explain.
// It returns the pods it listed last, for the grace-period wait.
func (c *calibration) waitCreateEvents(ctx context.Context, timeout time.Duration) ([]corev1.Pod, error) {
	start, late := c.o.Clock.Now(), 0
	var pods []corev1.Pod
	err := c.waitFor(ctx, "waiting for the ReplicaSet controller's \"Created pod\" events", timeout, func() (string, error) {
		l, err := c.o.Target.Client.CoreV1().Pods(c.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return "listing pods: " + err.Error(), nil
		}
		pods = l.Items
		events, err := c.o.Target.Client.CoreV1().Events(c.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return "listing events: " + err.Error(), nil
		}
		if missing := missingCreateEvents(pods, events.Items); len(missing) > 0 {
			late = max(late, len(missing))
			return fmt.Sprintf("no \"Created pod\" event yet for %d pods (%s)", len(missing), strings.Join(firstN(missing, 4), ", ")), nil
		}
		return "", nil
	})
	if err != nil && ctx.Err() == nil {
		c.o.Logf("warning: %v; the next case runs anyway, and a late event counts in it", err)
		return pods, nil
	}
	if err == nil && late > 0 {
		c.o.Logf("Waited %s after the pods were Ready for the \"Created pod\" events of %d pods", c.o.Clock.Since(start).Round(100*time.Millisecond), late)
	}
	return pods, err
}

// missingCreateEvents returns the live pods owned by a ReplicaSet for
// which no event says the ReplicaSet created them (reason
// SuccessfulCreate, "Created pod: <name>", also when the event correlator
// combined it with similar ones).
func missingCreateEvents(pods []corev1.Pod, events []corev1.Event) []string {
	created := map[string]bool{}
	for i := range events {
		e := &events[i]
		if e.Reason != "SuccessfulCreate" || e.InvolvedObject.Kind != "ReplicaSet" {
			continue
		}
		if _, name, ok := strings.Cut(e.Message, "Created pod: "); ok {
			created[e.InvolvedObject.Name+"/"+name] = true
		}
	}
	var missing []string
	for i := range pods {
		p := &pods[i]
		ref := metav1.GetControllerOf(p)
		if p.DeletionTimestamp != nil || ref == nil || ref.Kind != "ReplicaSet" {
			continue
		}
		if !created[ref.Name+"/"+p.Name] {
			missing = append(missing, p.Name)
		}
	}
	sort.Strings(missing)
	return missing
}

// firstN returns the first n of s, with "…" after them when s is longer.
func firstN(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], "…")
	}
	return s
}

// waitPodsReady waits until each node's Deployment has all its pods, and
// each is Ready.
func (c *calibration) waitPodsReady(ctx context.Context, timeout time.Duration) error {
	want := 2 * c.o.Nodes * c.o.PodsPerNode
	return c.waitFor(ctx, "waiting for the pods to be Ready", timeout, func() (string, error) {
		pods, err := c.o.Target.Client.CoreV1().Pods(c.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return "listing pods: " + err.Error(), nil
		}
		ready, live, terminating, otherProbe := 0, 0, 0, 0
		var notReady []string
		for i := range pods.Items {
			p := &pods.Items[i]
			if p.DeletionTimestamp != nil {
				// Its kubelet's last writes would count in the case.
				terminating++
				continue
			}
			if p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded {
				continue
			}
			live++
			if podProbe(p) != c.probe {
				otherProbe++
			}
			if fleet.PodReady(p) {
				ready++
			} else if len(notReady) < 4 {
				notReady = append(notReady, p.Name+" on "+p.Spec.NodeName)
			}
		}
		if ready == want && live == want && terminating == 0 && otherProbe == 0 {
			return "", nil
		}
		return fmt.Sprintf("%d/%d pods Ready (%d live, %d terminating, %d not yet with %s probes; not Ready: %s)", ready, want, live, terminating, otherProbe, c.probe, strings.Join(notReady, ", ")), nil
	})
}

// waitFor polls check every 500 ms until it reports nothing left to wait
// for, fails, or timeout passes; then the error says what was awaited and
// what was left.
func (c *calibration) waitFor(ctx context.Context, what string, timeout time.Duration, check func() (string, error)) error {
	w := poll.Wait{Clock: c.o.Clock, Interval: 500 * time.Millisecond, Timeout: timeout, What: what}
	return w.Until(ctx, func(context.Context) (bool, string, error) {
		left, err := check()
		return left == "" && err == nil, left, err
	})
}

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

// runCase restarts every node of both sides at the same moment, watches
// for the downtime plus the case's observation time, and builds its rows.
func (c *calibration) runCase(ctx context.Context, cs Case) (cr CaseResult, err error) {
	cr = CaseResult{Case: cs}
	sim, err := kubelet.NewSimulator(kubelet.Config{
		Base: c.o.Target.Config, Harness: c.o.Target.Client, RunID: c.o.RunID, Kind: cs.Kind, Gates: cs.Gates, RuntimeMode: cs.RuntimeMode,
		InitDuration: c.o.InitDuration, Seed: c.o.Seed, RecoveryTimeout: 5 * time.Minute, Events: &storm.EventLog{},
		KubeAPIQPS: c.o.KubeAPIQPS, KubeAPIBurst: c.o.KubeAPIBurst,
	})
	if err != nil {
		return cr, err
	}
	if err := c.audit.mark(); err != nil {
		return cr, err
	}
	cpu0 := selfCPU()
	t0 := c.o.Clock.Now()
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	for i, node := range c.sim.nodes {
		g.Go(func() error {
			if err := sim.Restart(gctx, storm.Restart{Node: node, Downtime: cs.Downtime, Index: i}); err != nil {
				mu.Lock()
				cr.Errors = append(cr.Errors, fmt.Sprintf("simulated node %s: %v", node, err))
				mu.Unlock()
				return nil
			}
			mu.Lock()
			cr.Restarts.Simulated++
			mu.Unlock()
			return nil
		})
	}
	for _, name := range c.real.nodes {
		n := c.nodes[name]
		g.Go(func() error {
			if err := c.restartReal(gctx, n, cs); err != nil {
				mu.Lock()
				cr.Errors = append(cr.Errors, fmt.Sprintf("real node %s: %v (kubelet log: %s)", name, err, n.KubeletLog()))
				mu.Unlock()
				return nil
			}
			mu.Lock()
			cr.Restarts.Real++
			mu.Unlock()
			return nil
		})
	}
	if cs.DeletePods > 0 {
		g.Go(func() error {
			if err := poll.SleepUntil(gctx, c.o.Clock, t0.Add(cs.Downtime/2)); err != nil {
				return err
			}
			return c.scale(gctx, c.o.PodsPerNode-cs.DeletePods)
		})
	}
	if cs.ExitContainers > 0 {
		g.Go(func() error {
			if err := poll.SleepUntil(gctx, c.o.Clock, t0.Add(cs.Downtime/2)); err != nil {
				return err
			}
			return c.exitContainers(gctx, sim, cs.ExitContainers)
		})
	}
	if err := g.Wait(); err != nil {
		return cr, err
	}
	if err := poll.SleepUntil(ctx, c.o.Clock, t0.Add(cs.Downtime+cs.Observe)); err != nil {
		return cr, err
	}
	if cs.DeletePods > 0 {
		// Restored after the window: the next case's settle waits for the
		// replacement pods.
		defer func() {
			if serr := c.scale(context.WithoutCancel(ctx), c.o.PodsPerNode); serr != nil && err == nil {
				err = serr
			}
		}()
	}
	// The window is the case's, downtime plus observation, on both sides:
	// a simulated kubelet may hold its node longer than that before it
	// hands it back (kubelet kwokRequeueAfter), and what comes after the
	// window is not counted for either side.
	end := t0.Add(cs.Downtime + cs.Observe)
	simCPU := selfCPU() - cpu0
	for _, name := range c.real.nodes {
		n := c.nodes[name]
		if !n.KubeletAlive() {
			cr.Errors = append(cr.Errors, fmt.Sprintf("real node %s: kubelet exited (%s); log: %s", name, n.KubeletExit(), n.KubeletLog()))
			continue
		}
		u, err := n.KubeletUsage()
		if err == nil {
			cr.realUsage = append(cr.realUsage, u)
		}
	}
	reqs, err := c.audit.since()
	if err != nil {
		return cr, err
	}
	cr.Rows = c.rows(cs, reqs, t0, end, simCPU, cr.realUsage)
	return cr, nil
}

// containerKiller is a real node that can kill one of its containers
// (realnode.ContainerdNode).
type containerKiller interface {
	KillContainer(id string) error
}

// exitContainers ends the containers of the first n pods (by name) of
// every node while its kubelet is down: on a real node killed through its
// containerd, on a simulated one recorded in the model.
func (c *calibration) exitContainers(ctx context.Context, sim *kubelet.Simulator, n int) error {
	l, err := c.o.Target.Client.CoreV1().Pods(c.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("listing pods to kill their containers: %w", err)
	}
	byNode := map[string][]corev1.Pod{}
	for _, p := range l.Items {
		if p.DeletionTimestamp == nil {
			byNode[p.Spec.NodeName] = append(byNode[p.Spec.NodeName], p)
		}
	}
	var errs []error
	for _, node := range c.allNodes() {
		pods := byNode[node]
		slices.SortFunc(pods, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
		if len(pods) < n {
			errs = append(errs, fmt.Errorf("node %s has %d pods, want %d to kill containers of", node, len(pods), n))
			continue
		}
		for _, p := range pods[:n] {
			if c.sim.has(node) {
				for _, ct := range p.Spec.Containers {
					sim.ExitContainer(node, p.Namespace, p.Name, ct.Name)
				}
				continue
			}
			k, ok := c.nodes[node].(containerKiller)
			if !ok {
				errs = append(errs, fmt.Errorf("real node %s cannot kill containers (backend %s)", node, c.o.Backend))
				continue
			}
			for _, st := range p.Status.ContainerStatuses {
				if err := k.KillContainer(st.ContainerID); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	return errors.Join(errs...)
}

// scale sets the replicas of every node's Deployment, real and simulated.
func (c *calibration) scale(ctx context.Context, replicas int) error {
	for _, node := range c.allNodes() {
		sc, err := c.o.Target.Client.AppsV1().Deployments(c.ns).GetScale(ctx, node, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("scaling deployment %s: %w", node, err)
		}
		sc.Spec.Replicas = int32(replicas)
		if _, err := c.o.Target.Client.AppsV1().Deployments(c.ns).UpdateScale(ctx, node, sc, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("scaling deployment %s to %d: %w", node, replicas, err)
		}
	}
	return nil
}

// restartReal carries out the case on one real node.
func (c *calibration) restartReal(ctx context.Context, n realnode.Runner, cs Case) error {
	_, err := n.Restart(ctx, cs.Kind, cs.RuntimeMode, cs.Downtime, cs.Gates)
	return err
}

// teardown stops the real kubelets, then deletes the run's namespace and
// nodes.
func (c *calibration) teardown(ctx context.Context) error {
	var errs []error
	for _, name := range c.real.nodes {
		if n, ok := c.nodes[name]; ok {
			if err := n.Stop(); err != nil {
				errs = append(errs, fmt.Errorf("stopping real node %s: %w", name, err))
			}
		}
	}
	if c.o.KeepObjects {
		return errors.Join(errs...)
	}
	// fleet.Delete force-deletes the pods of the stopped real kubelets
	// (type=hollow), which would never confirm their deletion.
	if err := fleet.Delete(ctx, c.o.Target.Client, c.o.RunID, 4*time.Minute, nil); err != nil {
		errs = append(errs, fmt.Errorf("deleting calibration objects: %w (remove them with `stormbench fleet down --run-id %s`)", err, c.o.RunID))
	}
	return errors.Join(errs...)
}

// selfCPU is stormbench's own user+system CPU time in seconds (not its
// children's: the real kubelets are measured apart).
func selfCPU() float64 {
	u, err := realnode.ProcUsage(os.Getpid())
	if err != nil {
		return 0
	}
	return u.CPUSeconds
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
