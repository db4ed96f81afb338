package plan

import (
	"github.com/stormbench/stormbench/bench/kubeversion"
)

// What a starting kubelet does differently from one Kubernetes release to
// the next, as data: the session and the planners read a Release, the
// executor never compares versions. The differences a feature gate decides
// are not here but in the gates' defaults per version
// (kubeversion.Version.Gate, read by Simulator.gate): WatchListClient picks
// LIST + WATCH or a watch-list stream for every informer and reflector
// (off in 1.34, on from 1.35), ChangeContainerStatusOnKubeletRestart the
// legacy readiness reset (no gate in 1.34: always legacy; off from 1.35),
// PodCertificateRequest the PodCertificateRequest informer (on in 1.37).
//
// Read in k8s.io/kubernetes v1.34.4, v1.35.4, v1.36.3 and v1.37.2 (the Go
// module cache) and found the same in all four, so not here:
// cmd/kubelet/app/server.go's clients (QPS 50, burst 100, protobuf, the
// heartbeat client without rate limit, events 50/100; 1.37 only adds that
// eventRecordQPS 0 means no limit) and apis/config/v1beta1/defaults.go
// (lease 40 s, node status report 5 min, configMapAndSecretChangeDetection
// Watch); the node, Service, CSIDriver and RuntimeClass informers and their
// selectors (kubelet.go NewMainKubelet, volume_host.go,
// runtimeclass/runtimeclass_manager.go); the pod source
// (config/apiserver.go NewSourceApiserver, its 1 s poll of the node
// informer); the Secret and ConfigMap managers' one reflector per object
// (util/manager/watch_based_manager.go; from 1.35 wrapped in
// cache.ToListWatcherWithWatchListSemantics, which changes nothing for a
// real clientset); registration (kubelet_node_status.go
// registerWithAPIServer: POST, GET on 409); the lease controller
// (component-helpers apimachinery/lease controller.go Run: 1.35 adds a
// Start that DELETEs the lease, which the kubelet does not call);
// the status manager's syncPod (status/status_manager.go: GET, PATCH when
// changed); the token manager; the DRA plugin manager's ResourceSlice wipe
// (cm/dra/plugin/dra_plugin_manager.go, resource.k8s.io/v1 in all four);
// Kubelet.Run's order of start-up. 1.37's ClusterTrustBundle manager
// (ClusterTrustBundleProjection GA) starts its informer lazily, at the
// first pod that projects a trust bundle (clustertrustbundle
// NewLazyInformerManager), so it sends nothing at a start.
type Release struct {
	// Version is the release.
	Version kubeversion.Version
	// CSINodeGetsNode says the CSI plugin's CSINode initialisation GETs
	// the node before the CSINode, to learn the node's UID and check the
	// CSINode's owner (volume/csi/nodeinfomanager/nodeinfomanager.go
	// tryInitializeCSINodeWithAnnotation, from v1.35.4 with
	// ensureNodeOwnsCSINode). v1.34.4's GETs the node only when it creates
	// a missing CSINode (CreateCSINode): a restart of a node whose CSINode
	// exists sends one node GET fewer.
	CSINodeGetsNode bool
	// PodCertificateAPI is the API version of certificates.k8s.io the
	// PodCertificateRequest informer lists and watches, when the gate is on
	// (kubelet.go NewMainKubelet: kubeInformers.Certificates().V1alpha1()
	// in v1.34.4, V1beta1() in v1.35.4 and v1.36.3, V1() in v1.37.2).
	PodCertificateAPI string
	// SandboxReadyWrite says the runtime's SyncPod reports a new sandbox
	// ready before it creates the containers: kuberuntime_manager.go
	// SyncPod calls kubelet.go OnPodSandboxReady (from v1.36.3; kubernetes
	// issue 134460), which sets PodReadyToStartContainers True from a
	// goroutine, a status of its own. v1.34.4 and v1.35.4 have no such
	// callback: the condition comes with the next sync's status
	// (kubelet_pods.go generateAPIPodStatus,
	// status/generate.go GeneratePodReadyToStartContainersCondition), the
	// containers running in it, so a rebooted pod gets one status write
	// fewer (restartPod). Measured: the v1.35.4 kubelet on containerd
	// wrote 14.9 [14.7–15.1] statuses per 5-pod reboot where the model
	// without this difference wrote 19.7.
	SandboxReadyWrite bool
}

// releaseSince is each difference from a minor release on, as
// kubeversion's gate table is: a release takes the last entry whose minor
// release is at most its own.
var releaseSince = []struct {
	minor int
	apply func(*Release)
}{
	{34, func(r *Release) { r.CSINodeGetsNode, r.PodCertificateAPI = false, "v1alpha1" }},
	{35, func(r *Release) { r.CSINodeGetsNode, r.PodCertificateAPI = true, "v1beta1" }},
	{36, func(r *Release) { r.SandboxReadyWrite = true }},
	{37, func(r *Release) { r.PodCertificateAPI = "v1" }},
}

// ReleaseOf is what a kubelet of v does differently (the zero Version is
// kubeversion.Default).
func ReleaseOf(v kubeversion.Version) Release {
	r := Release{Version: v.Or(kubeversion.Default)}
	for _, d := range releaseSince {
		if d.minor <= r.Version.Minor {
			d.apply(&r)
		}
	}
	return r
}

// UserAgent is the simulated kubelet's user agent: client-go's default
// (rest.DefaultKubernetesUserAgent: "kubelet/<gitVersion> (<os>/<arch>)
// kubernetes/<commit>", which the kubelet keeps, as
// cmd/kubelet/app/server.go buildKubeletClientConfig sets none), with
// "stormbench" in the commit's place so that an audit log tells the
// simulated kubelets from real ones.
func (r Release) UserAgent() string {
	return "kubelet/" + r.Version.String() + " (linux/amd64) stormbench"
}
