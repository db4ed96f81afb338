package profiles

import (
	"bytes"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stormbench/stormbench/bench/kubeversion"
)

// APIVersion and Kind identify a StormProfile document.
const (
	APIVersion = "stormbench.io/v1alpha1"
	Kind       = "StormProfile"
)

// Storm kinds.
const (
	StormKubelet = "kubelet"
	StormRuntime = "runtime"
	StormReboot  = "reboot"
)

// Runtime outage modes of a runtime storm (storm.runtimeMode).
const (
	// RuntimeRefused: the runtime's socket refuses connections, as while
	// containerd or CRI-O restarts.
	RuntimeRefused = "refused"
	// RuntimeHung: the runtime accepts connections and answers nothing.
	RuntimeHung = "hung"
)

// GateChangeContainerStatusOnKubeletRestart is KEP-4781's feature gate. When
// true (the legacy behaviour before 1.35), a restarting kubelet resets the
// readiness of every probed container; when false it preserves it.
// It has no such gate before 1.35, whose kubelet always resets readiness.
const GateChangeContainerStatusOnKubeletRestart = kubeversion.GateChangeContainerStatusOnKubeletRestart

// GateWatchListClient is client-go's gate for streaming watch-lists
// (KEP-3157), on by default since 1.35: an informer's initial sync is one
// WATCH with sendInitialEvents=true instead of a LIST and a WATCH. It is a
// variant axis next to GateChangeContainerStatusOnKubeletRestart: the
// relist cost of a restart storm either way.
const GateWatchListClient = kubeversion.GateWatchListClient

// knownGates lists the feature gates a profile may set, with their 1.36
// defaults (kubeversion.Default's). Another kubernetes.version has its own
// (kubeversion.Version.Gate, EffectiveGatesAt).
var knownGates = map[string]bool{
	GateChangeContainerStatusOnKubeletRestart: false,
	GateWatchListClient:                       true,
}

// Profile is one StormProfile document: a fleet, its timing, and optionally a
// storm with its variants, measurements and CI gates.
type Profile struct {
	// APIVersion must be stormbench.io/v1alpha1.
	APIVersion string `json:"apiVersion"`
	// Kind must be StormProfile.
	Kind string `json:"kind"`
	// Metadata names and describes the profile.
	Metadata Metadata `json:"metadata"`
	// Seed drives every random choice (node selection, downtimes), so two
	// runs with the same seed restart the same nodes at the same offsets.
	Seed int64 `json:"seed,omitempty"`
	// Fleet describes the simulated nodes and the workloads on them.
	Fleet Fleet `json:"fleet"`
	// Kubernetes chooses the Kubernetes version the run is of.
	Kubernetes Kubernetes `json:"kubernetes,omitzero"`
	// Timing holds heartbeat and node-lifecycle timing of the control plane.
	Timing Timing `json:"timing,omitempty"`
	// ControlPlane tunes the embedded control plane; ignored with --kubeconfig.
	ControlPlane ControlPlane `json:"controlPlane,omitempty"`
	// Storm describes the restarts to run. A profile without a storm only
	// provisions the fleet.
	Storm *Storm `json:"storm,omitempty"`
	// Variants are named feature-gate settings run one after another on the
	// same fleet with the same seed. Without variants, one variant named
	// "default" runs with the storm's feature gates.
	Variants []Variant `json:"variants,omitempty"`
	// Repetitions repeats every variant (default once), and says whether
	// the repetitions replay one schedule or each block draws its own:
	// "repetitions: 5", or "repetitions: {count: 5, seeds: vary}".
	Repetitions Repetitions `json:"repetitions,omitzero"`
	// Measurements enables and configures measurements by name.
	Measurements Measurements `json:"measurements,omitempty"`
	// Gates are CI thresholds checked by `stormbench gate`.
	Gates *Gates `json:"gates,omitempty"`
}

// StormKind is the storm's kind, "" for a profile without a storm.
func (p *Profile) StormKind() string {
	if p.Storm == nil {
		return ""
	}
	return p.Storm.Kind
}

// Metadata names a profile.
type Metadata struct {
	// Name is the profile's name, a DNS label.
	Name string `json:"name"`
	// Description says what the profile is for.
	Description string `json:"description,omitempty"`
}

// Kubernetes chooses the Kubernetes release a run is of.
type Kubernetes struct {
	// Version is the Kubernetes version: the embedded control plane runs
	// its kube-apiserver, kube-controller-manager and kube-scheduler, real
	// kubelets (fleet.realKubelets, calibrate) are its kubelet, and the
	// simulated kubelets take its feature-gate defaults. "1.37.2",
	// "v1.37.2", or "1.37" for its supported patch release; one of 1.34.4,
	// 1.35.4, 1.36.3 and 1.37.2 (kubeversion.Supported). Empty is 1.36.3,
	// the default. Any other version needs its components built first
	// (`make components KUBE_VERSION=v1.37.2`). `--kube-version` overrides
	// it.
	Version string `json:"version,omitempty"`
}

// KubeVersion is the profile's Kubernetes version: kubernetes.version, or
// kubeversion.Default when it is not set. On a profile that did not
// validate, an unsupported version gives the default too.
func (p *Profile) KubeVersion() kubeversion.Version {
	return versionOr(p.Kubernetes.Version, kubeversion.Default)
}

// VariantVersion is the Kubernetes version variant v runs on: its own
// kubernetes.version, else the profile's.
func (p *Profile) VariantVersion(v *Variant) kubeversion.Version {
	if v != nil && v.Kubernetes != nil {
		return versionOr(v.Kubernetes.Version, p.KubeVersion())
	}
	return p.KubeVersion()
}

// versionOr is the Kubernetes version s names, or def when s is empty or
// not a supported version.
func versionOr(s string, def kubeversion.Version) kubeversion.Version {
	if v, err := kubeversion.Parse(s); err == nil && s != "" {
		return v
	}
	return def
}

// ComparesVersions reports whether the profile's variants run on more than
// one Kubernetes version (an upgrade's comparison).
func (p *Profile) ComparesVersions() bool {
	for _, v := range p.Variants {
		if p.VariantVersion(&v) != p.KubeVersion() {
			return true
		}
	}
	return false
}

// Fleet describes the KWOK nodes and the workload mix.
type Fleet struct {
	// Nodes is the number of KWOK nodes.
	Nodes int `json:"nodes"`
	// PodsPerNode is the target pod density; workload replicas are derived
	// from it (nodes × podsPerNode pods in all, DaemonSet pods included).
	PodsPerNode int `json:"podsPerNode"`
	// Workloads is the mix of templates from workloads/. Empty means the
	// default mix.
	Workloads []WorkloadShare `json:"workloads,omitempty"`
	// NodeCPU is each node's CPU capacity, a positive quantity; default "32".
	NodeCPU string `json:"nodeCPU,omitempty"`
	// NodeMemory is each node's memory capacity, a positive quantity;
	// default "256Gi".
	NodeMemory string `json:"nodeMemory,omitempty"`
	// MaxPodsPerNode is each node's pod capacity; default podsPerNode×2+10.
	MaxPodsPerNode int `json:"maxPodsPerNode,omitempty"`
	// TolerationSeconds is the not-ready/unreachable NoExecute toleration
	// put on workload pods; default 300, the API server's default.
	TolerationSeconds *int64 `json:"tolerationSeconds,omitempty"`
	// CreateParallelism bounds concurrent create requests; default
	// DefaultCreateParallelism.
	CreateParallelism int `json:"createParallelism,omitempty"`
	// QPS is the harness client's QPS; default 500.
	QPS float32 `json:"qps,omitempty"`
	// Burst is the harness client's burst; default 1000.
	Burst int `json:"burst,omitempty"`
	// ReadyTimeout bounds the wait for every node and pod to be Ready;
	// default 10m.
	ReadyTimeout metav1.Duration `json:"readyTimeout,omitempty"`
	// RealKubelets makes this many of the fleet's nodes (the last ones)
	// real kubelets instead of KWOK nodes: hollow kubelets (the v1.36.3
	// kubelet code, `make components`) beside a fake CRI runtime, about
	// 100 MiB each, embedded cluster only. The storm restarts them as it
	// restarts the others: the kubelet process, the runtime process, or
	// both with the runtime's containers marked exited. They run the pods
	// of the workloads whose probes are all exec probes (web-exec,
	// statefulset); HTTP and TCP probes stay on KWOK nodes, since a fake
	// runtime's sandbox IPs answer nothing.
	RealKubelets int `json:"realKubelets,omitempty"`
	// RealKubeletBackend is the real kubelets' kind: "hollow" (the
	// default, above) or "containerd": the v1.36.3 kubelet itself on a
	// containerd of its own (Debian's containerd, runc and CNI plugins,
	// `make real-node-deps`, root), running real containers of an image
	// built from stormbench-pause, so that a runtime restart keeps the
	// containers (shims) and a reboot kills them.
	RealKubeletBackend string `json:"realKubeletBackend,omitempty"`
	// SteadyWatches, when set, holds the watches that every KWOK node's
	// kubelet and kube-proxy would hold for their whole lifetime, for the
	// whole storm: the watch population that fans out every Service and
	// EndpointSlice write in the API server. Unset (the default), KWOK
	// nodes hold no watch of their own and only a restarting simulated
	// kubelet watches, while it syncs. The watches are read without
	// decoding (bench/watchers). A node's kubelet watches close while its
	// kubelet is down (kubelet restart, reboot) and reopen when the node is
	// handed back to KWOK; its kube-proxy watches close only while the node
	// is down (reboot) and resync when it is back. Real kubelets
	// (realKubelets) hold their own kubelet watches and no kube-proxy ones:
	// they are left out.
	SteadyWatches *SteadyWatches `json:"steadyWatches,omitempty"`
}

// SteadyWatches chooses the components whose watches every KWOK node holds
// (fleet.steadyWatches). At least one must be set.
type SteadyWatches struct {
	// Kubelet holds each node's kubelet watches, as system:node:<name>: its
	// pods (spec.nodeName), its Node (metadata.name), Services
	// (spec.clusterIP!=None), CSIDrivers and RuntimeClasses, the informers
	// of kubelet.go NewMainKubelet and config/apiserver.go
	// NewSourceApiserver. Its Secret and ConfigMap watches are not held.
	Kubelet bool `json:"kubelet,omitempty"`
	// KubeProxy holds each node's kube-proxy watches, as system:kube-proxy:
	// EndpointSlices (!service.kubernetes.io/headless), Services
	// (!service.kubernetes.io/service-proxy-name, spec.clusterIP!=None),
	// ServiceCIDRs and its Node, the informers of cmd/kube-proxy/app
	// server.go and pkg/proxy/node.go.
	KubeProxy bool `json:"kubeProxy,omitempty"`
}

// The values of Fleet.RealKubeletBackend.
const (
	RealKubeletHollow     = "hollow"
	RealKubeletContainerd = "containerd"
)

// WorkloadShare puts one workload template into the mix.
type WorkloadShare struct {
	// Template names a template in workloads/ (without .yaml).
	Template string `json:"template"`
	// Share is this template's relative weight among non-DaemonSet pods.
	// DaemonSets ignore it: they run one pod per node.
	Share int `json:"share,omitempty"`
	// Replicas is the pod count of one object (Deployment, StatefulSet);
	// default 10. The number of objects follows from share and density.
	Replicas int `json:"replicas,omitempty"`
}

// Timing sets heartbeat and node-lifecycle timing.
type Timing struct {
	// HeartbeatFactor multiplies lease duration, status update frequency and
	// grace period, as kwokctl's --heartbeat-factor does; default 1
	// (kubelet-like timing). Values above 1 relax heartbeats for large fleets.
	HeartbeatFactor float64 `json:"heartbeatFactor,omitempty"`
	// NodeLeaseDurationSeconds is the node lease duration; default 40.
	NodeLeaseDurationSeconds int `json:"nodeLeaseDurationSeconds,omitempty"`
	// NodeStatusUpdateFrequency is how often KWOK updates node status;
	// default 10s.
	NodeStatusUpdateFrequency metav1.Duration `json:"nodeStatusUpdateFrequency,omitempty"`
	// NodeMonitorGracePeriod is the KCM's --node-monitor-grace-period;
	// default 50s (the 1.36 default).
	NodeMonitorGracePeriod metav1.Duration `json:"nodeMonitorGracePeriod,omitempty"`
	// NodeMonitorPeriod is the KCM's --node-monitor-period; default 5s.
	NodeMonitorPeriod metav1.Duration `json:"nodeMonitorPeriod,omitempty"`
	// NodeEvictionRate is the KCM's --node-eviction-rate: how many NotReady
	// nodes per second get the NoExecute taint (and so, after the pods'
	// toleration, lose their pods) while the zone is healthy. 0 keeps the
	// KCM's 0.1, one node every ten seconds. In a storm it decides how many
	// of the nodes down past the grace period are evicted at all; above
	// --unhealthy-zone-threshold (55 % NotReady) a cluster of at most 50
	// nodes evicts none, whatever this rate.
	NodeEvictionRate float64 `json:"nodeEvictionRate,omitempty"`
}

// ControlPlane tunes the embedded control plane.
type ControlPlane struct {
	// APF is how the embedded control plane's components meet API Priority
	// and Fairness: "realistic" (the default) gives kube-controller-manager
	// (with a service account per controller), kube-scheduler, the KWOK
	// controller and the harness identities of their own, as kubeadm does,
	// so that APF classifies and queues them as in a real cluster; "exempt"
	// runs every component as system:masters, which APF exempts. Ignored
	// with --kubeconfig (the cluster is not stormbench's to configure).
	APF string `json:"apf,omitempty"`
	// MaxRequestsInflight is kube-apiserver's --max-requests-inflight;
	// 0 keeps the default (400).
	MaxRequestsInflight int `json:"maxRequestsInflight,omitempty"`
	// MaxMutatingRequestsInflight is kube-apiserver's
	// --max-mutating-requests-inflight; 0 keeps the default (200).
	MaxMutatingRequestsInflight int `json:"maxMutatingRequestsInflight,omitempty"`
	// ControllerQPS is the KCM's and scheduler's --kube-api-qps; default 100.
	ControllerQPS int `json:"controllerQPS,omitempty"`
	// ControllerBurst is the KCM's and scheduler's --kube-api-burst;
	// default 200.
	ControllerBurst int `json:"controllerBurst,omitempty"`
	// KwokNodeLeaseParallelism and KwokParallelism tune the kwok controller;
	// 0 keeps kwok's defaults.
	KwokNodeLeaseParallelism int `json:"kwokNodeLeaseParallelism,omitempty"`
	// KwokParallelism is the kwok controller's pod/node play-stage parallelism.
	KwokParallelism int `json:"kwokParallelism,omitempty"`
	// SchedulerPercentageOfNodesToScore is kube-scheduler's
	// percentageOfNodesToScore (1-100); 0 keeps its adaptive default (50 %
	// minus 1 % per 125 nodes, at least 5 %). At thousands of nodes the
	// scheduler's filtering and scoring, default topology spreading
	// included, make it the slowest step of provisioning.
	SchedulerPercentageOfNodesToScore int `json:"schedulerPercentageOfNodesToScore,omitempty"`
	// SchedulerDefaultSpreading false turns off kube-scheduler's default
	// topology spreading (PodTopologySpread defaultingType List with no
	// constraints); unset keeps it. With the system defaults the plugin's
	// PreScore visits every node for every pod, which at 5,000 nodes costs
	// more than filtering and scoring the nodes themselves.
	SchedulerDefaultSpreading *bool `json:"schedulerDefaultSpreading,omitempty"`
	// LeaderElectionRenewDeadline is the KCM's and scheduler's leader
	// election renew deadline (their lease duration is 1.5 times it);
	// unset or 0 keeps their defaults (10s, lease 15s). Both run with leader election
	// on, as in kubeadm clusters; one that cannot renew its lease within the
	// deadline exits, and the embedded cluster, unlike a kubelet running
	// them as static pods, does not restart it. On an overloaded API server
	// (a 1,000-kubelet storm next to a 5,000-node fleet on two cores) the
	// 10s default is not enough.
	LeaderElectionRenewDeadline *metav1.Duration `json:"leaderElectionRenewDeadline,omitempty"`
	// APIServerMetrics is what kube-apiserver's /metrics serves: "lean"
	// (the default) disables, with --disabled-metrics, the big histogram
	// families no stormbench figure reads (bench/cluster
	// LeanDisabledMetrics), which are about 40 % of a scrape; "all" keeps
	// every family. stormbench scrapes the API server every second, about
	// 30 times the load of a Prometheus scraping it every 30 s, and under
	// a storm a full scrape took 3 s; the requests the API server serves
	// are the same either way.
	APIServerMetrics string `json:"apiserverMetrics,omitempty"`
	// CPUs, when set (for example 1.5), holds kube-apiserver and etcd of
	// the embedded cluster to that many cores with a cgroup CPU quota (v1
	// cpu.cfs_quota_us or v2 cpu.max); the controller manager, scheduler,
	// KWOK and stormbench stay outside it. A run then says what a control
	// plane of that size does, not what this machine does. It needs root;
	// 0 (the default) sets no budget. Not with --kubeconfig.
	CPUs float64 `json:"cpus,omitempty"`
}

// MinControlPlaneCPUs and MaxControlPlaneCPUs bound ControlPlane.CPUs.
const (
	MinControlPlaneCPUs = 0.1
	MaxControlPlaneCPUs = 1024
)

// The values of ControlPlane.APF.
const (
	APFRealistic = "realistic"
	APFExempt    = "exempt"
)

// The values of ControlPlane.APIServerMetrics.
const (
	APIServerMetricsLean = "lean"
	APIServerMetricsAll  = "all"
)

// Storm describes one restart storm.
type Storm struct {
	// Kind is kubelet, runtime or reboot.
	Kind string `json:"kind"`
	// Select chooses the nodes to restart.
	Select Selection `json:"select"`
	// Waves spreads restarts over time.
	Waves Waves `json:"waves,omitempty"`
	// Downtime is how long each node's kubelet (or runtime, or the node) is
	// down.
	Downtime Distribution `json:"downtime"`
	// InitDuration, when set, makes a restarted node report NotReady for
	// this long after its kubelet starts, before it reports Ready: the
	// NotReady flash of kubernetes#124397, which makes the node-lifecycle
	// controller mark every pod on the node not ready whatever the gate.
	// The pods' status writes and probes go on during the flash.
	// Default 0: the node stays Ready, as a 1.36 kubelet's did when
	// calibrated (`stormbench calibrate`).
	InitDuration metav1.Duration `json:"initDuration,omitempty"`
	// NodeChanges are label and taint changes applied while a node is down.
	NodeChanges *NodeChanges `json:"nodeChanges,omitempty"`
	// Planned makes a reboot a planned one: cordon, drain, reboot, uncordon.
	Planned bool `json:"planned,omitempty"`
	// RuntimeMode is how a runtime restart looks to the kubelet: refused
	// (default; the runtime's socket refuses connections, as while
	// containerd or CRI-O restarts: exec probes error and change nothing,
	// the node reports NotReady after 30 s) or hung (the runtime answers
	// nothing: calls block up to the CRI timeout, 2 minutes). Runtime
	// storms only.
	RuntimeMode string `json:"runtimeMode,omitempty"`
	// FeatureGates are the simulated kubelets' feature gates.
	FeatureGates map[string]bool `json:"featureGates,omitempty"`
	// CloseWatchesAfterSync closes a simulated kubelet's watches after its
	// initial sync instead of holding them while it is up (for very large
	// fleets).
	CloseWatchesAfterSync bool `json:"closeWatchesAfterSync,omitempty"`
	// RecoveryTimeout bounds the wait for full recovery after the last
	// restart; default 10m.
	RecoveryTimeout metav1.Duration `json:"recoveryTimeout,omitempty"`
}

// Selection chooses nodes to restart.
type Selection struct {
	// Count restarts this many nodes. Exactly one of count and fraction.
	Count int `json:"count,omitempty"`
	// Fraction restarts this fraction (0 < f ≤ 1) of the matching nodes.
	Fraction float64 `json:"fraction,omitempty"`
	// LabelSelector narrows the candidates (the run label always applies).
	LabelSelector string `json:"labelSelector,omitempty"`
}

// Waves describes rolling restarts.
type Waves struct {
	// Size is the number of nodes per wave: a count ("50") or a percentage
	// of the selected nodes ("10%"). Empty means all at once.
	Size string `json:"size,omitempty"`
	// Interval is the time between wave starts.
	Interval metav1.Duration `json:"interval,omitempty"`
	// Concurrency bounds the nodes restarting at the same time; 0 means no
	// bound beyond the wave size.
	Concurrency int `json:"concurrency,omitempty"`
}

// Distribution is a seeded duration distribution.
type Distribution struct {
	// Type is fixed, uniform or normal.
	Type string `json:"type,omitempty"`
	// Value is the fixed duration; only for type fixed (a uniform or
	// normal downtime with a value is refused rather than the value
	// ignored).
	Value metav1.Duration `json:"value,omitempty"`
	// Min and Max bound uniform draws, and clamp normal ones when set;
	// not for type fixed.
	Min metav1.Duration `json:"min,omitempty"`
	// Max is the upper bound.
	Max metav1.Duration `json:"max,omitempty"`
	// Mean is the normal distribution's mean; only for type normal.
	Mean metav1.Duration `json:"mean,omitempty"`
	// StdDev is the normal distribution's standard deviation; only for
	// type normal.
	StdDev metav1.Duration `json:"stdDev,omitempty"`
}

// NodeChanges are applied to a node while it is down.
type NodeChanges struct {
	// SetLabels adds or overwrites node labels.
	SetLabels map[string]string `json:"setLabels,omitempty"`
	// RemoveLabels removes node labels.
	RemoveLabels []string `json:"removeLabels,omitempty"`
	// AddTaints adds taints.
	AddTaints []Taint `json:"addTaints,omitempty"`
}

// Taint is a node taint.
type Taint struct {
	// Key is the taint key.
	Key string `json:"key"`
	// Value is the taint value.
	Value string `json:"value,omitempty"`
	// Effect is NoSchedule, PreferNoSchedule or NoExecute.
	Effect string `json:"effect"`
}

// Variant is one named feature-gate setting.
type Variant struct {
	// Name identifies the variant in results, reports and the benchfmt
	// export (BenchmarkStorm/variant=NAME): letters, digits, '.', '_' and
	// '-', starting and ending with a letter or digit, at most 63
	// characters (result.VariantNamePattern).
	Name string `json:"name"`
	// FeatureGates override the storm's feature gates.
	FeatureGates map[string]bool `json:"featureGates,omitempty"`
	// Kubernetes, when its version is set, runs the variant's storms on
	// that Kubernetes version instead of the profile's (kubernetes.version):
	// an upgrade's comparison. The fleet is provisioned on the profile's
	// version, and before each storm its snapshot is restored into a control
	// plane of the variant's version (the API server, controller manager and
	// scheduler of that release, on the same etcd data: an upgrade, so never
	// an older version than the profile's), with the simulated kubelets and
	// the gate defaults of that version. Embedded cluster only, and not with
	// fleet.realKubelets (their state is not in the snapshot).
	Kubernetes *Kubernetes `json:"kubernetes,omitempty"`
	// CloseWatchesAfterSync, when set, overrides the storm's: variants that
	// differ only in it measure stormbench's own cost with watches held and
	// closed on one fleet, side by side. It does not change the requests a
	// kubelet sends to start, only whether its watches stay open after.
	CloseWatchesAfterSync *bool `json:"closeWatchesAfterSync,omitempty"`
}

// EffectiveCloseWatches is the storm's closeWatchesAfterSync as variant v
// sets it.
func EffectiveCloseWatches(st *Storm, v *Variant) bool {
	if v != nil && v.CloseWatchesAfterSync != nil {
		return *v.CloseWatchesAfterSync
	}
	return st.CloseWatchesAfterSync
}

// Measurements enables measurements by name. A nil entry is disabled.
type Measurements struct {
	// APIServer scrapes /metrics of the control plane.
	APIServer *APIServerMeasurement `json:"apiserver,omitempty"`
	// EndpointSlices watches the run's EndpointSlices for churn.
	EndpointSlices *EndpointSliceMeasurement `json:"endpointSlices,omitempty"`
	// Recovery records recovery-latency histograms.
	Recovery *RecoveryMeasurement `json:"recovery,omitempty"`
}

// APIServerMeasurement configures the /metrics scraper.
type APIServerMeasurement struct {
	// Interval is the scrape interval; default 1s.
	Interval metav1.Duration `json:"interval,omitempty"`
	// Baseline is the window measured before the storm; default 10s.
	Baseline metav1.Duration `json:"baseline,omitempty"`
	// MaxInFlight bounds the scrapes of one component running at once;
	// default 4. Each interval starts its scrape on time whether or not
	// the earlier ones have returned; one that finds MaxInFlight scrapes
	// running is skipped (scrapes_skipped).
	MaxInFlight int `json:"maxInFlight,omitempty"`
	// RestoreSettle says when the API server counts as settled after a
	// fleet snapshot is restored before a storm: its request rate over
	// Windows consecutive windows of Window agrees. Unset (or zero), 4
	// windows of 10 s: at fleet-1k the garbage collector's first pass over
	// the restored objects comes about 40 s after the restore, and a
	// baseline taken before it is inflated. A small fleet's pass is small;
	// tests shorten the wait here.
	RestoreSettle *SettleWindows `json:"restoreSettle,omitempty"`
}

// SettleWindows is a settle rule: Windows consecutive windows of Window.
type SettleWindows struct {
	// Window is each rate's window; at least 2s.
	Window metav1.Duration `json:"window,omitempty"`
	// Windows is how many consecutive windows must agree; 2 to 10.
	Windows int `json:"windows,omitempty"`
}

// EndpointSliceMeasurement configures EndpointSlice churn counting.
type EndpointSliceMeasurement struct {
	// Watchers opens this many extra real watches on the run's slices,
	// decoding into a discarding sink, to load the API server's fan-out.
	Watchers int `json:"watchers,omitempty"`
}

// RecoveryMeasurement configures recovery histograms.
type RecoveryMeasurement struct {
	// PerPod records per-pod recovery; default true.
	PerPod *bool `json:"perPod,omitempty"`
}

// Gates are CI thresholds, read by `stormbench gate --profile` (or
// --thresholds-from-baseline, from the profile a baseline recorded). Each
// value means what the same value means as a gate flag: ParseRegression,
// CheckSLO and CheckMaxOutageSeconds are the one parser of both.
type Gates struct {
	// MaxRegression maps a key metric ID (`stormbench compare
	// --list-metrics`), or "*" for every key metric without its own entry,
	// to the allowed relative regression of its median, a percentage
	// written with %: "10%". A bare number is an error, as on the command
	// line.
	MaxRegression map[string]string `json:"maxRegression,omitempty"`
	// MutatingP99 is the absolute SLO for the storm-window mutating API
	// p99; unset keeps the default 1s, 0s turns the gate off, a negative
	// duration is an error.
	MutatingP99 *metav1.Duration `json:"mutatingP99,omitempty"`
	// ListP99 is the absolute SLO for the storm-window LIST p99; unset
	// keeps the default 30s, 0s turns the gate off.
	ListP99 *metav1.Duration `json:"listP99,omitempty"`
	// MaxOutageSeconds is the allowed service-outage seconds; unset keeps
	// the default 0 (any outage fails), a negative value turns the gate off.
	// It must be finite.
	MaxOutageSeconds *float64 `json:"maxOutageSeconds,omitempty"`
	// RecoveryP99 is the allowed node recovery p99; unset or 0s leaves the
	// gate off.
	RecoveryP99 *metav1.Duration `json:"recoveryP99,omitempty"`
}

// DefaultCreateParallelism is fleet.createParallelism's default: 32
// concurrent creates.
const DefaultCreateParallelism = 32

// Ways for the blocks of repetitions to choose their schedule
// (Repetitions.Seeds).
const (
	// SeedsFixed replays the profile's seed in every block: every
	// repetition restarts the same nodes at the same offsets, so the
	// intervals cover run-to-run noise only, for one schedule.
	SeedsFixed = "fixed"
	// SeedsVary gives each block its own seed, derived from the profile's
	// (BlockSeed): the nodes and offsets change from block to block, so the
	// intervals cover the schedule too.
	SeedsVary = "vary"
)

// Repetitions is how many times every variant runs, in blocks of one storm
// per variant, and which schedule each block plays. In a profile it is a
// count ("repetitions: 5") or a mapping ("repetitions: {count: 5, seeds:
// vary}"); it is written back as a count when the seeds are fixed, so that
// profiles and results of before the mapping read the same.
type Repetitions struct {
	// Count is the number of runs of every variant; default 1.
	Count int `json:"count,omitempty"`
	// Seeds is SeedsFixed (the default when empty) or SeedsVary.
	Seeds string `json:"seeds,omitempty"`
}

// Vary reports whether each block draws its own schedule.
func (r Repetitions) Vary() bool { return r.Seeds == SeedsVary }

// Mode is Seeds with its default: SeedsFixed or SeedsVary.
func (r Repetitions) Mode() string {
	if r.Seeds == "" {
		return SeedsFixed
	}
	return r.Seeds
}

// MarshalJSON writes a count alone unless the seeds vary.
func (r Repetitions) MarshalJSON() ([]byte, error) {
	if r.Seeds == "" || r.Seeds == SeedsFixed {
		return json.Marshal(r.Count)
	}
	type plain Repetitions
	return json.Marshal(plain(r))
}

// UnmarshalJSON reads a count or a mapping {count, seeds}, strictly: an
// unknown key of the mapping is an error.
func (r *Repetitions) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] != '{' {
		*r = Repetitions{}
		return json.Unmarshal(b, &r.Count)
	}
	type plain Repetitions
	var p plain
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return fmt.Errorf("repetitions: %w", err)
	}
	*r = Repetitions(p)
	return nil
}

// BlockSeed is the seed of block b of a run whose profile has the given
// seed, with SeedsVary: block 0 keeps the profile's seed (its schedule is
// the one a fixed run plays), and every later block a seed mixed from both
// by SplitMix64 (Steele, Lea & Flood, "Fast splittable pseudorandom number
// generators", 2014), so that nearby blocks and nearby seeds give unrelated
// schedules. The same seed gives the same seeds.
func BlockSeed(seed int64, b int) int64 {
	if b == 0 {
		return seed
	}
	z := uint64(seed) + uint64(b)*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	// Non-negative, as a profile's seed is written.
	return int64(z >> 1)
}
