package kubelet

import (
	"fmt"
	"net/http"
	"time"

	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/kubernetes/scheme"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	nodev1client "k8s.io/client-go/kubernetes/typed/node/v1"
	resourcev1client "k8s.io/client-go/kubernetes/typed/resource/v1"
	storagev1client "k8s.io/client-go/kubernetes/typed/storage/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
)

// A simulated kubelet's API clients: its transport and the clients of each
// API group. Its identity and client settings are cluster.KubeletClientConfig.

// nodeLeaseNamespace holds node leases (pkg/kubelet/kubelet.go).
const nodeLeaseNamespace = corev1.NamespaceNodeLease

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

func (c *groupClients) CoreV1() corev1client.CoreV1Interface { return c.core }

func (c *groupClients) StorageV1() storagev1client.StorageV1Interface { return c.storage }

func (c *groupClients) NodeV1() nodev1client.NodeV1Interface { return c.node }

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

// heartbeatTimeout is the heartbeat client's timeout: the smaller of the
// node status update frequency (10 s) and the lease duration (40 s)
// (cmd/kubelet/app/server.go heartbeatClientConfig).
const heartbeatTimeout = 10 * time.Second

// serviceClient is the core/v1 REST client of the kubelet's Service
// informer: same requests, connection and rate limiter as the main client,
// but Services are decoded to their identity only (serviceIdentities).
func serviceClient(cfg *rest.Config, httpClient *http.Client) (rest.Interface, error) {
	return restClient(cfg, httpClient, corev1.SchemeGroupVersion, "/api", serviceIdentitySerializer)
}

// restClient is the REST client of gv under apiPath decoding with ser, on
// cfg's connection and rate limiter.
func restClient(cfg *rest.Config, httpClient *http.Client, gv schema.GroupVersion, apiPath string, ser runtime.NegotiatedSerializer) (rest.Interface, error) {
	c := rest.CopyConfig(cfg)
	c.GroupVersion, c.APIPath, c.NegotiatedSerializer = &gv, apiPath, ser
	return rest.RESTClientForConfigAndClient(c, httpClient)
}

// podCertificateClient is the REST client of the kubelet's
// PodCertificateRequest informer: certificates.k8s.io at version (v1alpha1,
// v1beta1 or v1: plan.Release.PodCertificateAPI), same connection and rate
// limiter as the main client. The API types stormbench is built with
// (k8s.io/api v0.36) have the PodCertificateRequest of v1beta1 only; its
// protobuf message is v1's with two more fields (pkixPublicKey 9,
// proofOfPossession 10: k8s.io/api v0.37.2 certificates/v1 and v1beta1
// generated.proto), so podCertificateSchemes registers it as the kind of
// whichever version the kubelet of the release lists. Nothing reads the
// objects (sinkStore); the fleet has none.
func podCertificateClient(cfg *rest.Config, httpClient *http.Client, version string) (rest.Interface, error) {
	ser := podCertificateSchemes[version]
	if ser == nil {
		return nil, fmt.Errorf("no PodCertificateRequest API version %q", version)
	}
	return restClient(cfg, httpClient, schema.GroupVersion{Group: certificatesv1beta1.GroupName, Version: version}, "/apis", ser)
}

// podCertificateSchemes are the serializers of podCertificateClient, one
// per API version, built once and shared by every session.
var podCertificateSchemes = func() map[string]runtime.NegotiatedSerializer {
	out := map[string]runtime.NegotiatedSerializer{}
	for _, v := range []string{"v1alpha1", "v1beta1", "v1"} {
		gv := schema.GroupVersion{Group: certificatesv1beta1.GroupName, Version: v}
		s := runtime.NewScheme()
		s.AddKnownTypes(gv, &certificatesv1beta1.PodCertificateRequest{}, &certificatesv1beta1.PodCertificateRequestList{})
		metav1.AddToGroupVersion(s, gv)
		out[v] = serializer.NewCodecFactory(s).WithoutConversion()
	}
	return out
}()

// serviceIdentitySerializer is the core/v1 client serializer with Services
// decoded to their identity; built once, shared by every session.
var serviceIdentitySerializer = serviceIdentities{rest.CodecFactoryForGeneratedClient(scheme.Scheme, scheme.Codecs).WithoutConversion()}
