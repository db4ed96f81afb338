package kubelet

import (
	"context"
	"encoding/pem"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`))
	}))
	srv.EnableHTTP2 = true
	srv.Config.ConnState = cc.state
	srv.StartTLS()
	defer srv.Close()

	base := &rest.Config{
		Host:            srv.URL,
		TLSClientConfig: rest.TLSClientConfig{CAData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})},
	}
	ctx := context.Background()
	var sessions []*session
	for _, node := range []string{"n1", "n2", "n3"} {
		s, err := newSession(base, node, nil, clock.RealClock{})
		if err != nil {
			t.Fatal(err)
		}
		sessions = append(sessions, s)
		for i := 0; i < 3; i++ {
			_, _ = s.client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
			_, _ = s.heartbeat.CoordinationV1().Leases("kube-node-lease").Get(ctx, node, metav1.GetOptions{})
			_ = s.services.Get().Resource("services").Do(ctx).Error()
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
