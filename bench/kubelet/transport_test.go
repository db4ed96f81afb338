package kubelet

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
)

// connCounter counts a test server's connections: opened and closed.
type connCounter struct {
	mu             sync.Mutex
	opened, closed int
}

func (c *connCounter) state(_ net.Conn, s http.ConnState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch s {
	case http.StateNew:
		c.opened++
	case http.StateClosed, http.StateHijacked:
		c.closed++
	}
}

func (c *connCounter) counts() (int, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.opened, c.closed
}

// TestSessionOwnConnection checks that each simulated kubelet talks over its
// own HTTP/2 connection (a real kubelet is its own process), that its main,
// Service and heartbeat clients share it, and that closing the session closes it.
func TestSessionOwnConnection(t *testing.T) {
	var cc connCounter
	var protoMu sync.Mutex
	protos := map[string]int{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		protoMu.Lock()
		protos[r.Proto]++
		protoMu.Unlock()
		writeStatus(w, http.StatusNotFound, "NotFound")
	}))
	srv.Config.ConnState = cc.state
	base := startTLS(t, srv, "")
	ctx := context.Background()
	var sessions []*session
	for _, node := range []string{"n1", "n2", "n3"} {
		s, err := newSession(base, node, nil, clock.RealClock{}, sessionOptions{})
		if err != nil {
			t.Fatal(err)
		}
		sessions = append(sessions, s)
		for i := 0; i < 3; i++ {
			_, _ = s.client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
			_, _ = s.heartbeat.CoordinationV1().Leases("kube-node-lease").Get(ctx, node, metav1.GetOptions{})
			_ = s.lists.(restListWatches).services.Get().Resource("services").Do(ctx).Error()
		}
	}
	if base.Transport != nil || len(base.CAData) == 0 {
		t.Error("newSession modified its base config")
	}
	if opened, _ := cc.counts(); opened != 3 {
		t.Errorf("3 kubelets opened %d connections, want one each", opened)
	}
	protoMu.Lock()
	if protos["HTTP/2.0"] != 27 {
		t.Errorf("requests by protocol %v, want 27 over HTTP/2.0", protos)
	}
	protoMu.Unlock()
	for _, s := range sessions {
		s.close()
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, closed := cc.counts(); closed == 3 {
			break
		}
		if time.Now().After(deadline) {
			_, closed := cc.counts()
			t.Fatalf("%d of 3 connections closed after the sessions closed", closed)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSessionClients: the heartbeat client has no rate limit and a 10 s
// timeout, the event client a rate limiter of its own, as the kubelet's
// (cmd/kubelet/app/server.go).
func TestSessionClients(t *testing.T) {
	s, err := newSession(&rest.Config{Host: "https://127.0.0.1:1"}, "n1", nil, clock.RealClock{}, sessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	main := s.client.CoreV1().RESTClient().GetRateLimiter()
	if main == nil {
		t.Fatal("main client has no rate limiter")
	}
	// pkg/kubelet/apis/config/v1beta1/defaults.go: KubeAPIQPS 50.
	if main.QPS() != 50 {
		t.Errorf("main QPS %v, want the kubelet default 50", main.QPS())
	}
	// kubeAPIQPS set (Config.KubeAPIQPS): the main client takes it, the
	// event client keeps its own.
	slow, err := newSession(&rest.Config{Host: "https://127.0.0.1:1"}, "n2", nil, clock.RealClock{}, sessionOptions{limits: apiLimits{qps: 2, burst: 4}})
	if err != nil {
		t.Fatal(err)
	}
	defer slow.close()
	if got := slow.client.CoreV1().RESTClient().GetRateLimiter().QPS(); got != 2 {
		t.Errorf("main QPS with kubeAPIQPS 2: %v", got)
	}
	if got := slow.events.(*corev1client.CoreV1Client).RESTClient().GetRateLimiter().QPS(); got != eventQPS {
		t.Errorf("event QPS with kubeAPIQPS 2: %v, want %v", got, eventQPS)
	}
	if rl := s.heartbeat.CoreV1().RESTClient().GetRateLimiter(); rl != nil {
		t.Errorf("heartbeat client rate limited (%v), want none", rl.QPS())
	}
	hb, ok := s.heartbeat.CoreV1().RESTClient().(*rest.RESTClient)
	if !ok {
		t.Fatalf("heartbeat REST client %T", s.heartbeat.CoreV1().RESTClient())
	}
	if hb.Client.Timeout != 10*time.Second {
		t.Errorf("heartbeat timeout %s, want 10s", hb.Client.Timeout)
	}
	ev := s.events.(*corev1client.CoreV1Client).RESTClient().GetRateLimiter()
	if ev == nil || ev == main {
		t.Errorf("event client rate limiter %v: want one of its own", ev)
	} else if ev.QPS() != eventQPS {
		t.Errorf("event QPS %v, want %v", ev.QPS(), eventQPS)
	}
}

// TestEventQueue: events are sent in order from their own goroutine; a
// full queue drops and counts; flushing waits for what was queued.
func TestEventQueue(t *testing.T) {
	var dropped atomic.Int64
	s := &session{eventsDropped: &dropped}
	s.startEvents()
	started, release := make(chan struct{}), make(chan struct{})
	var sent []int
	s.recordEvent(func(context.Context) { close(started); <-release; sent = append(sent, 0) })
	<-started
	for i := 1; i <= eventQueueLength+5; i++ {
		s.recordEvent(func(context.Context) { sent = append(sent, i) })
	}
	close(release)
	s.flushEvents()
	// The first is being sent when the others queue: 1,000 fit behind it.
	if len(sent) != eventQueueLength+1 {
		t.Fatalf("sent %d events, want %d", len(sent), eventQueueLength+1)
	}
	for i, v := range sent {
		if v != i {
			t.Fatalf("event %d sent as #%d: not in order", v, i)
		}
	}
	if dropped.Load() != 5 {
		t.Errorf("dropped %d, want 5", dropped.Load())
	}
	s.flushEvents() // twice is harmless
}
