package cluster

import (
	"crypto/tls"
	"net"
	"net/http"
	"sync"
	"time"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
)

// KubeletClientConfig returns the rest.Config of node's kubelet as
// stormbench stands in for it (the simulated kubelet, and the steady
// watches of a node's kubelet): base's credentials impersonating
// system:node:<node> in group system:nodes, the identity the Node
// authorizer and APF's system-nodes schemas know, with the kubelet's QPS,
// burst and protobuf content type. wrap, when set, records every request.
func KubeletClientConfig(base *rest.Config, node string, wrap func(http.RoundTripper) http.RoundTripper) *rest.Config {
	cfg := rest.CopyConfig(base)
	cfg.Impersonate = rest.ImpersonationConfig{
		UserName: "system:node:" + node,
		Groups:   []string{"system:nodes", "system:authenticated"},
	}
	// pkg/kubelet/apis/config/v1beta1/defaults.go: KubeAPIQPS 50,
	// KubeAPIBurst 100, ContentType application/vnd.kubernetes.protobuf.
	cfg.QPS, cfg.Burst = 50, 100
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = cfg.ContentType + ",application/json"
	cfg.UserAgent = "kubelet/v1.36.3 (linux/amd64) stormbench"
	cfg.WrapTransport = nil
	if wrap != nil {
		cfg.Wrap(wrap)
	}
	return cfg
}

// NodeTransport gives cfg a transport of its own, so that each node's
// process that stormbench stands in for (a simulated kubelet, a node's
// steady watches) holds its own connection to the API server, as a real
// kubelet or kube-proxy does, and a restarted one opens a new one (a full
// TLS handshake). The transport is client-go's default for a config that it
// does not cache (k8s.io/client-go/transport/cache.go).
//
// Sharing client-go's cached transport between all simulated kubelets is
// not only unfaithful (one connection instead of one per node) but also
// dearer: kube-apiserver allows 100 concurrent HTTP/2 streams per
// connection by default (k8s.io/apiserver/pkg/server/secure_serving.go),
// a storm of a few hundred kubelets holds thousands of watches, and the
// HTTP/2 client then dials a burst of extra connections whenever every
// connection is full. Measured on a 300-node all-at-once storm: 1,108
// connections (and TLS handshakes) with the shared transport; see
// results/scale/PROFILE.md (in git history).
//
// cfg's TLS settings (base's, parsed once: see baseTLS) move into the
// transport; its auth, impersonation and wrappers stay on cfg. A config that already carries a transport or a
// custom dialer or proxy is left as it is (client-go's shared transport).
func NodeTransport(base, cfg *rest.Config) (*http.Transport, error) {
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
