package cluster

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// versionServer answers /version as a v1.36.3 API server and hands every
// other request to other.
func versionServer(t *testing.T, other http.HandlerFunc) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/version" {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"major":"1","minor":"36","gitVersion":"v1.36.3"}`)
			return
		}
		other(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// stallingServer answers /version and takes every other request without
// answering it until the test ends.
func stallingServer(t *testing.T) *httptest.Server {
	t.Helper()
	release := make(chan struct{})
	s := versionServer(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	t.Cleanup(func() { close(release) })
	return s
}

func writeKubeconfig(t *testing.T, server, current string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %q}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: one, context: {cluster: c, user: u}}, {name: two, context: {cluster: c, user: u}}]
current-context: %q
`, server, current)
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRequestTimeout: a request the API server takes and never answers
// fails after the request timeout, saying so, instead of hanging.
func TestRequestTimeout(t *testing.T) {
	s := stallingServer(t)
	tg, err := Connect(context.Background(), ConnectOptions{Kubeconfig: writeKubeconfig(t, s.URL, "one"), RequestTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := tg.Client.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
		done <- err
	}()
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		t.Fatal("a list of a stalled API server hangs despite the request timeout")
	}
	if err == nil || !strings.Contains(err.Error(), "no answer within 200ms") {
		t.Errorf("list error %v, want no answer within 200ms", err)
	}
	// A cancelled context is the caller's, not a timeout.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := tg.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err == nil || strings.Contains(err.Error(), "no answer within") {
		t.Errorf("cancelled list: %v", err)
	}
}

// TestIsStream: watches, followed logs and upgrades keep no deadline;
// everything else gets one.
func TestIsStream(t *testing.T) {
	for _, tc := range []struct {
		url     string
		upgrade bool
		want    bool
	}{
		{"/api/v1/nodes", false, false},
		{"/api/v1/nodes?labelSelector=a%3Db&limit=500", false, false},
		{"/api/v1/nodes?watch=true&resourceVersion=1", false, true},
		{"/api/v1/nodes?watch=1", false, true},
		{"/api/v1/nodes?watch=false", false, false},
		{"/api/v1/namespaces/a/pods/p/log?follow=true", false, true},
		{"/api/v1/namespaces/a/pods/p/log", false, false},
		{"/api/v1/namespaces/a/pods/p/exec?command=sh", true, true},
		{"/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", false, false},
	} {
		req := httptest.NewRequest(http.MethodGet, tc.url, nil)
		if tc.upgrade {
			req.Header.Set("Upgrade", "SPDY/3.1")
		}
		if got := isStream(req); got != tc.want {
			t.Errorf("isStream(%s, upgrade=%t) = %t, want %t", tc.url, tc.upgrade, got, tc.want)
		}
	}
}

// TestLoadKubeconfig: every way a kubeconfig cannot be used is a
// ConfigError that names the file or the context.
func TestLoadKubeconfig(t *testing.T) {
	dir := t.TempDir()
	malformed := filepath.Join(dir, "malformed")
	if err := os.WriteFile(malformed, []byte("garbage: ["), 0o600); err != nil {
		t.Fatal(err)
	}
	good := writeKubeconfig(t, "https://127.0.0.1:1", "one")
	noCurrent := writeKubeconfig(t, "https://127.0.0.1:1", "")
	for _, tc := range []struct {
		name, path, context string
		want                string // empty: loads, as context want
		wantContext         string
	}{
		{"current context", good, "", "", "one"},
		{"named context", good, "two", "", "two"},
		{"no path", "", "", "no kubeconfig given", ""},
		{"missing file", filepath.Join(dir, "nope"), "one", "no such file", ""},
		{"malformed", malformed, "one", "loading kubeconfig", ""},
		{"unknown context", good, "three", `context "three" not found in kubeconfig ` + good + " (have: [one two])", ""},
		{"no current context", noCurrent, "", "has no current context: give --context (have: [one two])", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, ctxName, err := LoadKubeconfig(tc.path, tc.context)
			if tc.want == "" {
				if err != nil || cfg == nil || ctxName != tc.wantContext {
					t.Fatalf("got %v, %q, %v; want a config of context %q", cfg, ctxName, err, tc.wantContext)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !IsConfigError(err) {
				t.Errorf("error %v (config error %t), want a config error with %q", err, IsConfigError(err), tc.want)
			}
		})
	}
}

// TestConnectSpeaksProtobuf: the harness's clients ask for protobuf, with
// JSON as the fallback, and write built-in objects in protobuf.
func TestConnectSpeaksProtobuf(t *testing.T) {
	got := make(chan http.Header, 1)
	s := versionServer(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case got <- r.Header.Clone():
		default:
		}
		http.NotFound(w, r)
	})
	tg, err := Connect(context.Background(), ConnectOptions{Kubeconfig: writeKubeconfig(t, s.URL, "one")})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = tg.Client.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{})
	h := <-got
	if accept := h.Get("Accept"); accept != "application/vnd.kubernetes.protobuf,application/json" {
		t.Errorf("Accept %q, want protobuf then JSON", accept)
	}
	if tg.Config.ContentType != "application/vnd.kubernetes.protobuf" {
		t.Errorf("ContentType %q, want protobuf", tg.Config.ContentType)
	}
}
