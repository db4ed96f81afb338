package kubelet

import (
	"context"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	"github.com/stormbench/stormbench/bench/cluster"
)

// TestKubeletHeadersAsClientGo sends the same requests through a session
// (its identity headers set by kubeletHeaders) and through clients built
// the stock way from the same kubelet config (client-go's impersonating,
// user-agent and bearer round trippers): the API server must see the
// same method, URL, headers and body.
func TestKubeletHeadersAsClientGo(t *testing.T) {
	type seen struct {
		method, url string
		header      http.Header
	}
	var mu sync.Mutex
	var got []seen
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := r.Header.Clone()
		// The transport's own, not the client's.
		h.Del("Accept-Encoding")
		mu.Lock()
		got = append(got, seen{r.Method, r.URL.String(), h})
		mu.Unlock()
		writeStatus(w, http.StatusNotFound, "NotFound")
	}))
	base := startTLS(t, srv, "token-1")
	wrap := func(rt http.RoundTripper) http.RoundTripper { return rt }
	ctx := context.Background()
	send := func(c kubeletClient) []seen {
		mu.Lock()
		got = nil
		mu.Unlock()
		_, _ = c.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
		_, _ = c.CoreV1().Pods("ns").Patch(ctx, "p", types.StrategicMergePatchType, []byte(`{"metadata":{"uid":"u"}}`), metav1.PatchOptions{}, "status")
		_, _ = c.CoordinationV1().Leases(nodeLeaseNamespace).Get(ctx, "n1", metav1.GetOptions{})
		_, _ = c.CoreV1().Events("default").Create(ctx, &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e"}}, metav1.CreateOptions{})
		mu.Lock()
		defer mu.Unlock()
		return got
	}
	s, err := newSession(base, "n1", wrap, clock.RealClock{}, sessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	merged := send(s.client)

	stock := cluster.KubeletClientConfig(base, "n1", wrap)
	stock = withRateLimiter(stock)
	httpClient, err := rest.HTTPClientFor(stock)
	if err != nil {
		t.Fatal(err)
	}
	c, err := newKubeletClient(stock, httpClient)
	if err != nil {
		t.Fatal(err)
	}
	want := send(c)
	if len(want) != 4 {
		t.Fatalf("the stock client sent %d requests, want 4", len(want))
	}
	if !reflect.DeepEqual(merged, want) {
		t.Errorf("the session's requests differ from client-go's:\n got %v\nwant %v", merged, want)
	}
	if want[0].header.Get("Authorization") != "Bearer token-1" || want[0].header.Get("Impersonate-User") != "system:node:n1" ||
		len(want[0].header.Values("Impersonate-Group")) != 2 {
		t.Errorf("the stock client's headers are not the kubelet's: %v", want[0].header)
	}
}

// TestPodStatusRequestURLs: the status manager's GET and PATCH leave the
// typed calls' VersionedParams out (getPodStatus, patchPodStatus); their
// empty options add nothing to the URL.
func TestPodStatusRequestURLs(t *testing.T) {
	s, err := newSession(&rest.Config{Host: "https://127.0.0.1:1"}, "n1", nil, clock.RealClock{}, sessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	rc := s.podsREST()
	for _, c := range []struct{ typed, direct *rest.Request }{
		{rc.Get().Namespace("ns").Resource("pods").Name("p").VersionedParams(&metav1.GetOptions{}, scheme.ParameterCodec),
			rc.Get().Namespace("ns").Resource("pods").Name("p")},
		{rc.Patch(types.StrategicMergePatchType).Namespace("ns").Resource("pods").Name("p").SubResource("status").VersionedParams(&metav1.PatchOptions{}, scheme.ParameterCodec),
			rc.Patch(types.StrategicMergePatchType).Namespace("ns").Resource("pods").Name("p").SubResource("status")},
	} {
		if got, want := c.direct.URL().String(), c.typed.URL().String(); got != want {
			t.Errorf("URL %s, the typed call's %s", got, want)
		}
	}
}
