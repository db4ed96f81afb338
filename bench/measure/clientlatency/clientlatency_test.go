package clientlatency

import (
	"context"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/stormbench/stormbench/bench/measure"
	"github.com/stormbench/stormbench/bench/measure/internal/measuretest"
	"github.com/stormbench/stormbench/bench/result"
)

func TestAtomicHistMatchesHDR(t *testing.T) {
	for _, highest := range []int64{60_000_000, 7_200_000_000, 1000} {
		a := newAtomicHist(highest)
		h := hdrhistogram.New(1, highest, result.HDRSignificantFigures)
		vals := []int64{0, 1, 2, 1023, 1024, 2047, 2048, 2049, 4095, 4096, 999_999, 1_000_000, highest - 1, highest}
		r := rand.New(rand.NewPCG(1, 2))
		for range 20000 {
			vals = append(vals, r.Int64N(highest+1))
			vals = append(vals, int64(float64(highest)/(1+r.ExpFloat64()*1000)))
		}
		for _, v := range vals {
			if v > highest {
				continue
			}
			a.record(v)
			if err := h.RecordValue(v); err != nil {
				t.Fatalf("hdr.RecordValue(%d): %v", v, err)
			}
		}
		if !slices.Equal(a.snapshot().Export().Counts, h.Export().Counts) {
			t.Fatalf("highest=%d: atomicHist bucket layout differs from hdrhistogram's", highest)
		}
		if !a.snapshot().Equals(h) {
			t.Errorf("highest=%d: snapshot not equal to the reference histogram", highest)
		}
	}
	a := newAtomicHist(1000)
	a.record(5000)
	a.record(-3)
	if a.clamped.Load() != 1 {
		t.Errorf("clamped = %d, want 1", a.clamped.Load())
	}
	if s := a.snapshot(); s.Max() < 1000 || s.TotalCount() != 2 {
		t.Errorf("clamped sample: max=%d count=%d, want max≈1000 and 2 samples", s.Max(), s.TotalCount())
	}
}

func TestParseRequest(t *testing.T) {
	tests := []struct {
		method, url, contentType string
		want                     RequestInfo
	}{
		{"GET", "/api/v1/pods?watch=true&fieldSelector=spec.nodeName%3Dkn-1", "", RequestInfo{Verb: "WATCH", Resource: "pods"}},
		{"GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dkn-1&limit=500", "", RequestInfo{Verb: "LIST", Resource: "pods"}},
		{"GET", "/api/v1/pods?watch=false", "", RequestInfo{Verb: "LIST", Resource: "pods"}},
		{"GET", "/api/v1/pods?watch=0", "", RequestInfo{Verb: "LIST", Resource: "pods"}},
		{"GET", "/api/v1/pods?watch=1", "", RequestInfo{Verb: "WATCH", Resource: "pods"}},
		{"GET", "/api/v1/nodes?fieldSelector=metadata.name%3Dkn-1", "", RequestInfo{Verb: "LIST", Resource: "nodes"}},
		{"GET", "/api/v1/nodes/kn-1", "", RequestInfo{Verb: "GET", Resource: "nodes", Name: "kn-1"}},
		{"GET", "/api/v1/namespaces/sb/configmaps/cm-1", "", RequestInfo{Verb: "GET", Resource: "configmaps", Namespace: "sb", Name: "cm-1"}},
		{"GET", "/api/v1/namespaces/sb/configmaps?watch=true&fieldSelector=metadata.name%3Dcm-1", "", RequestInfo{Verb: "WATCH", Resource: "configmaps", Namespace: "sb"}},
		{"PATCH", "/api/v1/namespaces/x/pods/y/status", "application/strategic-merge-patch+json", RequestInfo{Verb: "PATCH", Resource: "pods", Subresource: "status", Namespace: "x", Name: "y"}},
		{"PATCH", "/api/v1/nodes/kn-1/status", "application/merge-patch+json", RequestInfo{Verb: "PATCH", Resource: "nodes", Subresource: "status", Name: "kn-1"}},
		{"PATCH", "/api/v1/nodes/kn-1", "application/apply-patch+yaml", RequestInfo{Verb: "APPLY", Resource: "nodes", Name: "kn-1"}},
		{"POST", "/api/v1/namespaces/sb/serviceaccounts/default/token", "", RequestInfo{Verb: "POST", Resource: "serviceaccounts", Subresource: "token", Namespace: "sb", Name: "default"}},
		{"POST", "/api/v1/namespaces/sb/events", "", RequestInfo{Verb: "POST", Resource: "events", Namespace: "sb"}},
		{"PUT", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/kn-1", "", RequestInfo{Verb: "PUT", Resource: "leases", Namespace: "kube-node-lease", Name: "kn-1"}},
		{"GET", "/apis/storage.k8s.io/v1/csidrivers?limit=500&resourceVersion=0", "", RequestInfo{Verb: "LIST", Resource: "csidrivers"}},
		{"GET", "/apis/node.k8s.io/v1/runtimeclasses?allowWatchBookmarks=true&watch=true", "", RequestInfo{Verb: "WATCH", Resource: "runtimeclasses"}},
		{"DELETE", "/api/v1/namespaces/sb/pods/p", "", RequestInfo{Verb: "DELETE", Resource: "pods", Namespace: "sb", Name: "p"}},
		{"DELETE", "/api/v1/namespaces/sb/pods", "", RequestInfo{Verb: "DELETECOLLECTION", Resource: "pods", Namespace: "sb"}},
		{"POST", "/api/v1/namespaces/sb/pods/p/exec", "", RequestInfo{Verb: "CONNECT", Resource: "pods", Subresource: "exec", Namespace: "sb", Name: "p"}},
		{"GET", "/api/v1/namespaces", "", RequestInfo{Verb: "LIST", Resource: "namespaces"}},
		{"GET", "/api/v1/namespaces/sb", "", RequestInfo{Verb: "GET", Resource: "namespaces", Namespace: "sb", Name: "sb"}},
		{"PUT", "/api/v1/namespaces/sb/status", "", RequestInfo{Verb: "PUT", Resource: "namespaces", Subresource: "status", Namespace: "sb", Name: "sb"}},
		{"GET", "/api/v1/watch/namespaces/sb/pods", "", RequestInfo{Verb: "WATCH", Resource: "pods", Namespace: "sb"}},
		{"GET", "/healthz", "", RequestInfo{Verb: "GET"}},
		{"GET", "/apis/coordination.k8s.io/v1", "", RequestInfo{Verb: "GET"}},
		{"GET", "/metrics", "", RequestInfo{Verb: "GET"}},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.url, func(t *testing.T) {
			u, err := url.Parse("https://127.0.0.1:6443" + tt.url)
			if err != nil {
				t.Fatal(err)
			}
			req := &http.Request{Method: tt.method, URL: u, Header: http.Header{}}
			if tt.contentType != "" {
				req.Header.Set("Content-Type", tt.contentType)
			}
			if got := ParseRequest(req); got != tt.want {
				t.Errorf("ParseRequest = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// stepTransport answers every request after advancing the fake clock by
// its latency, so recorded latencies are exact.
type stepTransport struct {
	clk     *testingclock.FakeClock
	latency time.Duration
	code    int
	header  http.Header
	body    string
	err     error
	bodyLag time.Duration // clock advance while the body is read
}

func (s *stepTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	s.clk.Step(s.latency)
	if s.err != nil {
		return nil, s.err
	}
	h := s.header
	if h == nil {
		h = http.Header{}
	}
	return &http.Response{StatusCode: s.code, Header: h, Body: &lagBody{r: strings.NewReader(s.body), clk: s.clk, lag: s.bodyLag}, Request: req}, nil
}

type lagBody struct {
	r   io.Reader
	clk *testingclock.FakeClock
	lag time.Duration
}

func (b *lagBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err == io.EOF {
		b.clk.Step(b.lag)
	}
	return n, err
}

func (b *lagBody) Close() error { return nil }

func TestClientLatencyTransport(t *testing.T) {
	clk := testingclock.NewFakeClock(measuretest.T0)
	c := New(Options{})
	if err := c.Start(context.Background(), &measure.Env{Clock: clk}); err != nil {
		t.Fatal(err)
	}
	do := func(rt *stepTransport, source, method, path string, read bool) {
		t.Helper()
		u, _ := url.Parse("https://127.0.0.1:6443" + path)
		resp, err := c.Wrapper(source)(rt).RoundTrip(&http.Request{Method: method, URL: u, Header: http.Header{}})
		if err != nil {
			return
		}
		if read {
			if _, err := io.ReadAll(resp.Body); err != nil {
				t.Fatal(err)
			}
		}
		resp.Body.Close()
	}
	// LIST: 20 ms to headers plus 30 ms to read the body.
	do(&stepTransport{clk: clk, latency: 20 * time.Millisecond, bodyLag: 30 * time.Millisecond, code: 200, body: "{}"}, SourceKubelet, "GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dkn-1", true)
	// WATCH: time to headers only.
	do(&stepTransport{clk: clk, latency: 5 * time.Millisecond, bodyLag: time.Hour, code: 200, body: "{}"}, SourceKubelet, "GET", "/api/v1/pods?watch=true", true)
	// 429 with Retry-After, closed without reading: a throttle and a retry.
	do(&stepTransport{clk: clk, latency: time.Millisecond, code: 429, header: http.Header{"Retry-After": {"1"}}, body: "x"}, SourceKubelet, "GET", "/api/v1/pods", false)
	// A transport error.
	do(&stepTransport{clk: clk, latency: 2 * time.Second, err: errors.New("connection reset")}, SourceKubelet, "PATCH", "/api/v1/namespaces/x/pods/y/status", false)
	// A 500 without Retry-After: an error, no retry.
	do(&stepTransport{clk: clk, latency: time.Millisecond, code: 500, body: "x"}, SourceKubelet, "PATCH", "/api/v1/namespaces/x/pods/y/status", true)
	// A harness request is kept apart.
	do(&stepTransport{clk: clk, latency: time.Millisecond, code: 200, body: "{}"}, SourceHarness, "PATCH", "/api/v1/nodes/kn-1", true)

	out, err := c.Gather(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out.Sort()
	lbl := func(source, verb, resource, sub string) []string {
		return []string{result.LabelSource, source, result.LabelVerb, verb, result.LabelResource, resource, result.LabelSubresource, sub}
	}
	listPods := lbl(SourceKubelet, "LIST", "pods", "")
	if h := out.Histogram(RequestLatency, "", listPods...); h == nil || h.Summary.Count != 2 || !measuretest.Approx(h.Summary.Max, 0.05) && math.Abs(h.Summary.Max-0.05) > 0.05*1e-3 {
		t.Errorf("LIST pods histogram = %+v, want 2 samples, max 50ms", h)
	}
	if h := out.Histogram(RequestLatency, "", lbl(SourceKubelet, "WATCH", "pods", "")...); h == nil || math.Abs(h.Summary.Max-0.005) > 0.005*1e-3 {
		t.Errorf("WATCH pods histogram = %+v, want 5ms (headers only)", h)
	}
	checks := []struct {
		name   string
		labels []string
		want   float64
	}{
		{Requests, listPods, 2},
		{Throttled, listPods, 1},
		{Retries, listPods, 1},
		{Requests, lbl(SourceKubelet, "PATCH", "pods", "status"), 2},
		{Errors, lbl(SourceKubelet, "PATCH", "pods", "status"), 2},
		{Requests, lbl(SourceHarness, "PATCH", "nodes", ""), 1},
	}
	for _, ck := range checks {
		if got := measuretest.Value(t, &out, ck.name, "", ck.labels...); got != ck.want {
			t.Errorf("%s %v = %v, want %v", ck.name, ck.labels, got, ck.want)
		}
	}
	if _, ok := out.Value(Retries, "", lbl(SourceKubelet, "PATCH", "pods", "status")...); ok {
		t.Error("a 500 without Retry-After was counted as a retry")
	}
	// The transport can be unwrapped by client-go.
	inner := &stepTransport{clk: clk}
	if w, ok := c.Wrapper(SourceKubelet)(inner).(interface{ WrappedRoundTripper() http.RoundTripper }); !ok || w.WrappedRoundTripper() != inner {
		t.Error("Wrapper's transport does not expose the wrapped RoundTripper")
	}
}

func TestClientLatencyRecordDoesNotAllocate(t *testing.T) {
	c := New(Options{})
	k := RequestKey{Source: SourceKubelet, Verb: "LIST", Resource: "pods"}
	c.Record(k, time.Millisecond, 200, false, false) // first use adds the key
	if n := testing.AllocsPerRun(1000, func() { c.Record(k, 3*time.Millisecond, 200, false, false) }); n != 0 {
		t.Errorf("Record allocates %v times per call, want 0", n)
	}
}

func TestClientLatencyConcurrent(t *testing.T) {
	c := New(Options{})
	keys := []RequestKey{{Source: SourceKubelet, Verb: "GET", Resource: "nodes"}, {Source: SourceKubelet, Verb: "LIST", Resource: "pods"}, {Source: SourceKubelet, Verb: "PATCH", Resource: "pods", Subresource: "status"}}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 1000 {
				c.Record(keys[(g+i)%len(keys)], time.Duration(i)*time.Microsecond, 200, false, false)
			}
		})
	}
	wg.Wait()
	out, err := c.Gather(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, h := range out.Histograms {
		total += h.Summary.Count
	}
	if total != 8000 {
		t.Errorf("recorded %d samples, want 8000", total)
	}
}

// BenchmarkClientLatencyRecord measures the record path: one call per
// request, from many goroutines. It must report 0 allocs/op.
func BenchmarkClientLatencyRecord(b *testing.B) {
	c := New(Options{})
	keys := []RequestKey{
		{Source: SourceKubelet, Verb: "LIST", Resource: "pods"},
		{Source: SourceKubelet, Verb: "PATCH", Resource: "pods", Subresource: "status"},
		{Source: SourceKubelet, Verb: "PUT", Resource: "leases"},
		{Source: SourceKubelet, Verb: "WATCH", Resource: "configmaps"},
	}
	for _, k := range keys {
		c.Record(k, time.Millisecond, 200, false, false)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			c.Record(keys[i&3], time.Duration(i&0xffff)*time.Microsecond, 200, false, false)
			i++
		}
	})
}
