package main

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// freeLoopbackAddr returns a loopback address whose port was free a moment
// ago.
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func TestServerFailsOnDemand(t *testing.T) {
	s := &server{tcpAddr: freeLoopbackAddr(t)}
	if err := s.openTCP(); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	defer hs.Close()
	defer s.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, FailPath, nil)) // closes the TCP port

	get := func(path string) int {
		t.Helper()
		resp, err := http.Get(hs.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode
	}
	post := func(path string) {
		t.Helper()
		resp, err := http.Post(hs.URL+path, "text/plain", strings.NewReader(""))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("POST %s: %s", path, resp.Status)
		}
	}
	dial := func() bool {
		c, err := net.DialTimeout("tcp", s.tcpAddr, time.Second)
		if err != nil {
			return false
		}
		c.Close()
		return true
	}
	for _, step := range []struct {
		do       string
		wantHTTP int
		wantTCP  bool
	}{
		{"", http.StatusOK, true},
		{FailPath, http.StatusServiceUnavailable, false},
		{FailPath, http.StatusServiceUnavailable, false},
		{HealPath, http.StatusOK, true},
		{HealPath, http.StatusOK, true},
	} {
		if step.do != "" {
			post(step.do)
		}
		for _, path := range []string{"/healthz", "/livez", "/"} {
			if got := get(path); got != step.wantHTTP {
				t.Errorf("after POST %q: GET %s = %d, want %d", step.do, path, got, step.wantHTTP)
			}
		}
		if got := dial(); got != step.wantTCP {
			t.Errorf("after POST %q: TCP connect succeeded %t, want %t", step.do, got, step.wantTCP)
		}
	}
	// A GET of the fail path is a probe, not an order.
	if got := get(FailPath); got != http.StatusOK {
		t.Errorf("GET %s = %d, want 200 (only POST fails the probes)", FailPath, got)
	}
}
