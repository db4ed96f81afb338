package kubelet

import (
	"net/http"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"
)

// kubeletHeaders sets a simulated kubelet's identity headers on a request
// in one copy of it: what client-go's impersonating, user-agent and bearer
// round trippers (transport.HTTPWrappersForConfig) set in three, each
// cloning the request and its headers. Every request of every simulated
// kubelet went through the three (BenchmarkKubeletReplay). Each header is
// set under the condition its client-go round tripper sets it on (none
// already present), to the same values, so the API server sees the same
// request; TestKubeletHeadersAsClientGo compares the two.
type kubeletHeaders struct {
	// authorization is "Bearer <token>"; empty, none is set.
	authorization string
	userAgent     string
	impersonate   rest.ImpersonationConfig
	next          http.RoundTripper
}

var _ utilnet.RoundTripperWrapper = (*kubeletHeaders)(nil)

// RoundTrip implements http.RoundTripper.
func (h *kubeletHeaders) RoundTrip(req *http.Request) (*http.Response, error) {
	setUser := h.impersonate.UserName != "" || h.impersonate.UID != "" || len(h.impersonate.Groups) > 0
	setUser = setUser && req.Header.Get(transport.ImpersonateUserHeader) == ""
	setAgent := h.userAgent != "" && req.Header.Get("User-Agent") == ""
	setAuth := h.authorization != "" && req.Header.Get("Authorization") == ""
	if !setUser && !setAgent && !setAuth {
		return h.next.RoundTrip(req)
	}
	req = utilnet.CloneRequest(req)
	if setUser {
		req.Header.Set(transport.ImpersonateUserHeader, h.impersonate.UserName)
		if h.impersonate.UID != "" {
			req.Header.Set(transport.ImpersonateUIDHeader, h.impersonate.UID)
		}
		for _, g := range h.impersonate.Groups {
			req.Header.Add(transport.ImpersonateGroupHeader, g)
		}
	}
	if setAgent {
		req.Header.Set("User-Agent", h.userAgent)
	}
	if setAuth {
		req.Header.Set("Authorization", h.authorization)
	}
	return h.next.RoundTrip(req)
}

// WrappedRoundTripper lets client-go's utilnet unwrap this transport.
func (h *kubeletHeaders) WrappedRoundTripper() http.RoundTripper { return h.next }

// mergeHeaderWrappers moves cfg's bearer token, user agent and
// impersonation into one kubeletHeaders round tripper, outside cfg's
// wrappers as client-go puts its three. A config whose credentials are
// anything but a static bearer token or none (a token file, basic auth,
// an auth or exec plugin) or that impersonates with extra fields is left
// as it is.
func mergeHeaderWrappers(cfg *rest.Config) {
	if cfg.BearerTokenFile != "" || cfg.Username != "" || cfg.Password != "" ||
		cfg.AuthProvider != nil || cfg.ExecProvider != nil || len(cfg.Impersonate.Extra) > 0 {
		return
	}
	h := &kubeletHeaders{userAgent: cfg.UserAgent, impersonate: cfg.Impersonate}
	if cfg.BearerToken != "" {
		h.authorization = "Bearer " + cfg.BearerToken
	}
	cfg.BearerToken, cfg.UserAgent, cfg.Impersonate = "", "", rest.ImpersonationConfig{}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		next := *h
		next.next = rt
		return &next
	})
}
