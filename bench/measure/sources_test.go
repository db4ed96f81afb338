package measure

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// TestHTTPSourceNegotiation: a component that serves protobuf gets asked
// for it on every scrape; one that refuses it (406, as kwok's controller
// does) is asked for text from the second request on, and no scrape fails.
func TestHTTPSourceNegotiation(t *testing.T) {
	tests := []struct {
		name       string
		protobuf   bool // the server accepts the protobuf exposition
		wantAccept []string
	}{
		{"protobuf", true, []string{MetricsAccept, MetricsAccept, MetricsAccept}},
		{"text only", false, []string{MetricsAccept, metricsAcceptText, metricsAcceptText, metricsAcceptText}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			var accepts []string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				a := r.Header.Get("Accept")
				mu.Lock()
				accepts = append(accepts, a)
				mu.Unlock()
				if !tt.protobuf && a != "*/*" {
					http.Error(w, "Not Acceptable", http.StatusNotAcceptable)
					return
				}
				_, _ = w.Write([]byte("up 1\n"))
			}))
			defer srv.Close()
			src := HTTPSource("c", srv.URL, srv.Client())
			for i := 0; i < 3; i++ {
				b, _, err := fetchOf(context.Background(), src)
				if err != nil {
					t.Fatalf("scrape %d: %v", i, err)
				}
				if string(b) != "up 1\n" {
					t.Fatalf("scrape %d: body %q", i, b)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if strings.Join(accepts, "|") != strings.Join(tt.wantAccept, "|") {
				t.Errorf("Accept headers sent:\n%q\nwant\n%q", accepts, tt.wantAccept)
			}
		})
	}
}

func TestHTTPSourceErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "boom", http.StatusInternalServerError)
	}))
	defer srv.Close()
	_, _, err := fetchOf(context.Background(), HTTPSource("kcm", srv.URL, srv.Client()))
	if err == nil || !strings.Contains(err.Error(), "kcm") || !strings.Contains(err.Error(), "500") {
		t.Fatalf("error %v, want one naming the component and the status", err)
	}
}

// TestSourcesCarryContentType: both sources hand the response's
// Content-Type to the parser along with the body.
func TestSourcesCarryContentType(t *testing.T) {
	const protoType = "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", protoType)
		_, _ = w.Write([]byte("body"))
	}))
	defer srv.Close()
	client, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range []MetricsSource{HTTPSource("c", srv.URL+"/metrics", srv.Client()), APIServerSource(client.CoreV1().RESTClient())} {
		b, contentType, err := fetchOf(context.Background(), src)
		if err != nil {
			t.Fatalf("%s: %v", src.Component, err)
		}
		if string(b) != "body" || contentType != protoType {
			t.Errorf("%s: body %q, Content-Type %q; want %q, %q", src.Component, b, contentType, "body", protoType)
		}
	}
}

// fetchOf fetches src once and returns the body.
func fetchOf(ctx context.Context, src MetricsSource) ([]byte, string, error) {
	var body bytes.Buffer
	contentType, err := src.Fetch(ctx, &body)
	return body.Bytes(), contentType, err
}
