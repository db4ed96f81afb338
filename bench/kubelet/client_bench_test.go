package kubelet

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/stormbench/stormbench/bench/cluster"
)

// BenchmarkKubeletClientRequest is the floor under BenchmarkKubeletReplay's
// allocations: one request of a simulated kubelet's status manager (GET a
// pod, PATCH its status) through the kubelet's own core/v1 client (protobuf,
// its rate limiter, its own HTTP/2 connection), against a loopback server
// that answers every request with the same protobuf pod; and the same GET
// through the client's transport alone (HTTP/2, impersonation, user agent;
// no rest.Request, no decoding). What the client allocates per request,
// times a replay's requests (about 100, requests/replay), is what a replay
// allocates before the model does anything of its own.
func BenchmarkKubeletClientRequest(b *testing.B) {
	var t testing.T
	body := encodeProtobuf(&t, statusTestPod())
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", runtime.ContentTypeProtobuf)
		_, _ = w.Write(body)
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	b.Cleanup(srv.Close)
	// The kubelet's client settings (its identity, protobuf, a rate
	// limiter) but a limiter that never waits: its bookkeeping is counted,
	// its pacing is not.
	base := &rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	cfg := cluster.KubeletClientConfig(base, "node-0", nil)
	cfg.QPS, cfg.Burst = 1e9, 1e9
	cfg = withRateLimiter(cfg)
	if _, err := cluster.NodeTransport(base, cfg); err != nil {
		b.Fatal(err)
	}
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		b.Fatal(err)
	}
	c, err := newKubeletClient(cfg, httpClient)
	if err != nil {
		b.Fatal(err)
	}
	pods := c.CoreV1().Pods("ns")
	ctx := context.Background()
	patch := []byte(`{"metadata":{"uid":"u"},"status":{"conditions":[{"type":"Ready","status":"True"}]}}`)
	for _, r := range []struct {
		name string
		do   func() error
	}{
		{"get pod", func() error { _, err := pods.Get(ctx, "p", metav1.GetOptions{}); return err }},
		{"patch pods/status", func() error {
			_, err := pods.Patch(ctx, "p", types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
			return err
		}},
		{"transport get", func() error {
			resp, err := httpClient.Get(srv.URL + "/api/v1/namespaces/ns/pods/p")
			if err == nil {
				err = resp.Body.Close()
			}
			return err
		}},
	} {
		b.Run(r.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := r.do(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
