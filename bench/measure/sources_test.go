package measure

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
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
				b, _, err := src.Fetch(context.Background())
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
	_, _, err := HTTPSource("kcm", srv.URL, srv.Client()).Fetch(context.Background())
	if err == nil || !strings.Contains(err.Error(), "kcm") || !strings.Contains(err.Error(), "500") {
		t.Fatalf("error %v, want one naming the component and the status", err)
	}
}
