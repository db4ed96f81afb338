package watchers

import (
	"context"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	"github.com/stormbench/stormbench/bench/measure"
	"github.com/stormbench/stormbench/profiles"
)

// apiServer answers LISTs with an empty list at resourceVersion 500 and
// holds every watch open, recording who asked for what.
type apiServer struct {
	mu      sync.Mutex
	watches []watchRequest
	open    map[string]int // by user and path
}

type watchRequest struct {
	user, path string
	query      url.Values
}

func (s *apiServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	user := r.Header.Get("Impersonate-User")
	if r.URL.Query().Get("watch") != "1" {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"List","apiVersion":"v1","metadata":{"resourceVersion":"500"},"items":[]}`))
		return
	}
	key := user + " " + r.URL.Path
	s.mu.Lock()
	s.watches = append(s.watches, watchRequest{user, r.URL.Path, r.URL.Query()})
	s.open[key]++
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.open[key]--
		s.mu.Unlock()
	}()
	w.Header().Set("Content-Type", "application/vnd.kubernetes.protobuf;stream=watch")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
	<-r.Context().Done()
}

func (s *apiServer) openCount(user string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for k, v := range s.open {
		if len(k) > len(user) && k[:len(user)+1] == user+" " {
			n += v
		}
	}
	return n
}

func (s *apiServer) take() []watchRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.watches
	s.watches = nil
	return out
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestStartAndReboot opens a two-node population against a TLS test
// server (real HTTP/2 streams, one connection per node and component),
// then reboots one node through the lifecycle hooks.
func TestStartAndReboot(t *testing.T) {
	srv := &apiServer{open: map[string]int{}}
	ts := httptest.NewUnstartedServer(srv)
	ts.EnableHTTP2 = true
	ts.StartTLS()
	defer ts.Close()
	nodes := []runtimeNode{{"n1", true}, {"n2", true}, {"real", true}, {"other-run", false}}
	client := fake.NewSimpleClientset()
	for _, n := range nodes {
		labels := map[string]string{}
		if n.inRun {
			labels["run"] = "x"
		}
		if _, err := client.CoreV1().Nodes().Create(context.Background(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.name, Labels: labels}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	p := New(Options{
		Watches: &profiles.SteadyWatches{Kubelet: true, KubeProxy: true}, StormKind: profiles.StormReboot,
		Base: &rest.Config{Host: ts.URL, TLSClientConfig: rest.TLSClientConfig{Insecure: true}},
		Skip: func(n string) bool { return n == "real" },
	})
	defer p.Dispose()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := p.Start(ctx, &measure.Env{Client: client, NodeSelector: "run=x", Clock: clock.RealClock{}}); err != nil {
		t.Fatal(err)
	}
	started := srv.take()
	if len(started) != 2*(5+4) {
		t.Fatalf("%d watches opened, want 2 nodes × 9", len(started))
	}
	users := map[string]int{}
	for _, w := range started {
		users[w.user]++
		if w.query.Get("resourceVersion") != "500" || w.query.Get("sendInitialEvents") != "" {
			t.Errorf("%s %s: %v, want a watch from the listed resourceVersion 500 without initial events", w.user, w.path, w.query)
		}
	}
	if want := map[string]int{"system:node:n1": 5, "system:node:n2": 5, "system:kube-proxy": 8}; !maps.Equal(users, want) {
		t.Errorf("watches by user %v, want %v", users, want)
	}
	p.MarkStormStart(time.Now())
	p.NodeDown("n1")
	waitFor(t, "n1's kubelet and kube-proxy watches to close", func() bool {
		return srv.openCount("system:node:n1") == 0 && srv.openCount("system:kube-proxy") == 4
	})
	p.NodeUp("n1")
	waitFor(t, "n1's watches to reopen", func() bool {
		return srv.openCount("system:node:n1") == 5 && srv.openCount("system:kube-proxy") == 8
	})
	var kubeProxyInitial, kubeletResumed int
	for _, w := range srv.take() {
		switch {
		case w.user == "system:kube-proxy" && w.query.Get("sendInitialEvents") == "true" && w.query.Get("resourceVersionMatch") == "NotOlderThan":
			kubeProxyInitial++
		case w.user == "system:node:n1" && w.query.Get("resourceVersion") == "500":
			kubeletResumed++
		default:
			t.Errorf("unexpected reopened watch %+v", w)
		}
	}
	if kubeProxyInitial != 4 || kubeletResumed != 5 {
		t.Errorf("reopened: %d kube-proxy watches with initial events (want 4), %d kubelet watches resumed (want 5)", kubeProxyInitial, kubeletResumed)
	}
	p.Dispose()
	waitFor(t, "every watch to close", func() bool {
		return srv.openCount("system:node:n1")+srv.openCount("system:node:n2")+srv.openCount("system:kube-proxy") == 0
	})
	m, err := p.Gather(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := m.Value(FigureResyncs, "storm", "component", ComponentKubeProxy); v != 4 {
		t.Errorf("kube-proxy resyncs %v, want 4", v)
	}
	if v, _ := m.Value(FigureOpenAtStormStart, "storm", "component", ComponentKubelet); v != 10 {
		t.Errorf("kubelet watches open at the storm's start %v, want 10", v)
	}
}

type runtimeNode struct {
	name  string
	inRun bool
}
