package watchers

import (
	"net/url"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
)

// Components whose watches the population holds; the values label the
// figures (result.LabelComponent).
const (
	ComponentKubelet   = "kubelet"
	ComponentKubeProxy = "kube-proxy"
)

// Label keys kube-proxy selects on. LabelServiceProxyName is
// k8s.io/kubernetes pkg/proxy/apis LabelServiceProxyName, which this module
// does not import.
const (
	labelServiceProxyName = "service.kubernetes.io/service-proxy-name"
	labelHeadless         = corev1.IsHeadlessService
)

// spec is one watch a node's component holds: its collection and the
// selectors of the informer behind it.
type spec struct {
	// resource names the collection in figures (pods, services, ...).
	resource string
	// path is the collection's path (/api/v1/pods).
	path string
	// fieldSelector and labelSelector are the informer's list options.
	fieldSelector, labelSelector string
}

// query is the spec's list options, the part of a LIST or WATCH request
// every request for it carries.
func (s spec) query() url.Values {
	q := url.Values{}
	if s.fieldSelector != "" {
		q.Set("fieldSelector", s.fieldSelector)
	}
	if s.labelSelector != "" {
		q.Set("labelSelector", s.labelSelector)
	}
	return q
}

// notHeadless is spec.clusterIP!=None, the field selector of both the
// kubelet's and kube-proxy's Service informers.
var notHeadless = fields.OneTermNotEqualSelector("spec.clusterIP", corev1.ClusterIPNone).String()

// kubeletSpecs are the watches a 1.36 kubelet holds for its lifetime, the
// ones the simulated kubelet's session opens too (bench/kubelet informers.go
// startInformers), in k8s.io/kubernetes@v1.36.3:
//   - its pods, spec.nodeName=<node>: the pod source's reflector
//     (pkg/kubelet/config/apiserver.go NewSourceApiserver);
//   - its Node, metadata.name=<node>: nodeLister (pkg/kubelet/kubelet.go
//     NewMainKubelet);
//   - Services, spec.clusterIP!=None: serviceLister, for the pods'
//     environment variables (kubelet.go NewMainKubelet, issue 122394);
//   - CSIDrivers: the volume plugin manager's informer
//     (pkg/volume/csi csi_plugin.go);
//   - RuntimeClasses: runtimeclass.NewManager (kubelet.go NewMainKubelet).
//
// The Secret and ConfigMap watches of its pods' volumes and env
// (pkg/kubelet/util/manager/watch_based_manager.go) are left out: they are
// one watch per referenced object, per node.
func kubeletSpecs(node string) []spec {
	return []spec{
		{resource: "pods", path: "/api/v1/pods", fieldSelector: fields.OneTermEqualSelector("spec.nodeName", node).String()},
		{resource: "nodes", path: "/api/v1/nodes", fieldSelector: fields.OneTermEqualSelector("metadata.name", node).String()},
		{resource: "services", path: "/api/v1/services", fieldSelector: notHeadless},
		{resource: "csidrivers", path: "/apis/storage.k8s.io/v1/csidrivers"},
		{resource: "runtimeclasses", path: "/apis/node.k8s.io/v1/runtimeclasses"},
	}
}

// kubeProxySpecs are the watches a 1.36 kube-proxy holds for its lifetime
// (k8s.io/kubernetes@v1.36.3 cmd/kube-proxy/app/server.go, Run):
//   - EndpointSlices, !service.kubernetes.io/headless
//     (endpointSliceInformerFactory);
//   - Services, !service.kubernetes.io/service-proxy-name and
//     spec.clusterIP!=None (serviceInformerFactory: headless Services are
//     proxied by DNS);
//   - ServiceCIDRs (informerFactory, MultiCIDRServiceAllocator, GA and on);
//   - its Node, metadata.name=<node> (pkg/proxy/node.go newNodeManager).
func kubeProxySpecs(node string) []spec {
	return []spec{
		{resource: "endpointslices", path: "/apis/discovery.k8s.io/v1/endpointslices", labelSelector: "!" + labelHeadless},
		{resource: "services", path: "/api/v1/services", fieldSelector: notHeadless, labelSelector: "!" + labelServiceProxyName},
		{resource: "servicecidrs", path: "/apis/networking.k8s.io/v1/servicecidrs"},
		{resource: "nodes", path: "/api/v1/nodes", fieldSelector: fields.OneTermEqualSelector("metadata.name", node).String()},
	}
}

// specsOf returns component's watches on node.
func specsOf(component, node string) []spec {
	if component == ComponentKubeProxy {
		return kubeProxySpecs(node)
	}
	return kubeletSpecs(node)
}

// WatchesPerNode is the number of watches one node's component holds.
func WatchesPerNode(component string) int { return len(specsOf(component, "")) }

// collection identifies a spec's collection apart from its selectors: the
// key of the population's latest resourceVersion per collection.
func (s spec) collection() string { return strings.TrimPrefix(s.path, "/") }
