package cluster

import (
	"net/http"

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
