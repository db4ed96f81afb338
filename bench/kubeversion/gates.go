package kubeversion

import (
	"time"
)

// Feature gates whose defaults differ between the supported versions and
// matter to a restarting kubelet.
const (
	// GateChangeContainerStatusOnKubeletRestart is KEP-4781's kubelet gate:
	// true, a restarting kubelet resets the readiness of every probed
	// container; false, it preserves it.
	GateChangeContainerStatusOnKubeletRestart = "ChangeContainerStatusOnKubeletRestart"
	// GateWatchListClient is client-go's gate for streaming watch-lists
	// (KEP-3157): an informer's initial sync is one WATCH with
	// sendInitialEvents=true instead of a LIST and a WATCH.
	GateWatchListClient = "WatchListClient"
	// GatePodCertificateRequest (KEP-4317) gives the kubelet one more
	// informer, PodCertificateRequests by spec.nodeName, on every start.
	GatePodCertificateRequest = "PodCertificateRequest"
)

// KubeletRestartGrace is the prober's kubeletRestartGracePeriod (v1.35.4
// to v1.37.2, pkg/kubelet/prober/prober_manager.go): with
// ChangeContainerStatusOnKubeletRestart off, a container started less than
// this before the kubelet counts as new, not as one that ran through the
// restart, and its readiness is reset all the same.
const KubeletRestartGrace = 10 * time.Second

// Gate is what one version's kubelet does about one feature gate.
type Gate struct {
	// Default is the gate's value when nothing sets it.
	Default bool
	// Fixed is true when the version has no such gate: its kubelet always
	// behaves as Default, and refuses the gate on its command line.
	Fixed bool
}

// gateSpec is a gate's behaviour from a minor release on, as
// featuregate.VersionedSpecs records it.
type gateSpec struct {
	since int
	gate  Gate
}

// gateHistory is each gate's behaviour from a minor release on, as read in
// the sources of the supported versions (k8s.io/kubernetes and
// k8s.io/client-go at each tag, in the module cache). A version's entry is
// the last spec whose since is at most its minor release.
var gateHistory = map[string][]gateSpec{
	GateChangeContainerStatusOnKubeletRestart: {
		// k8s.io/kubernetes v1.34.4 pkg/features/kube_features.go has no
		// such gate: pkg/kubelet/prober/worker.go seeds every restarted
		// probe worker with its initial value (Failure for readiness),
		// the legacy behaviour.
		{since: 0, gate: Gate{Default: true, Fixed: true}},
		// v1.35.4, v1.36.3 and v1.37.2 pkg/features/kube_features.go:
		// {Version: "1.0", Default: true, GA}, {Version: "1.35", Default:
		// false, Deprecated}.
		{since: 35, gate: Gate{Default: false}},
	},
	GateWatchListClient: {
		// k8s.io/client-go v0.34.4 features/known_features.go:
		// {Default: false, PreRelease: Beta}; the kubelet takes client-go's
		// gates (pkg/features/kube_features.go,
		// clientfeatures.AddFeaturesToExistingFeatureGates).
		{since: 0, gate: Gate{Default: false}},
		// v0.35.4, v0.36.3 and v0.37.2 features/known_features.go:
		// {Version: "1.30", Default: false, Beta}, {Version: "1.35",
		// Default: true, Beta}.
		{since: 35, gate: Gate{Default: true}},
	},
	GatePodCertificateRequest: {
		// v1.34.4 pkg/features/kube_features.go: {Version: "1.34",
		// Default: false, Alpha}; v1.35.4 and v1.36.3 add {Version:
		// "1.35", Default: false, Beta}.
		{since: 0, gate: Gate{Default: false}},
		// v1.37.2: {Version: "1.37", Default: true, GA} ("LockToDefault
		// in 1.38").
		{since: 37, gate: Gate{Default: true}},
	},
}

// Gate is what v's kubelet does about the named gate; false when the gate
// is not in the table.
func (v Version) Gate(name string) (Gate, bool) {
	specs, ok := gateHistory[name]
	if !ok {
		return Gate{}, false
	}
	minor := v.Or(Default).Minor
	var g Gate
	for _, s := range specs {
		if s.since <= minor {
			g = s.gate
		}
	}
	return g, true
}

// KubeletGates is g without the gates v's kubelet does not have (Fixed):
// what a real kubelet of v takes on its command line, which refuses a gate
// it does not know. Validation has made sure g asks nothing of such a gate
// but the behaviour v's kubelet always has.
func (v Version) KubeletGates(g map[string]bool) map[string]bool {
	out := make(map[string]bool, len(g))
	for name, val := range g {
		if kg, ok := v.Gate(name); ok && kg.Fixed {
			continue
		}
		out[name] = val
	}
	return out
}
