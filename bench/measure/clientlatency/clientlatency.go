package clientlatency

import (
	"context"
	"io"
	"maps"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/utils/clock"

	"github.com/stormbench/stormbench/bench/measure"
	"github.com/stormbench/stormbench/bench/result"
)

// Request sources: who sent a request, so that harness requests can be
// subtracted from kubelet ones.
const (
	// SourceKubelet marks requests a simulated kubelet replays.
	SourceKubelet = "kubelet"
	// SourceHarness marks stormbench's own requests (relabelling nodes,
	// creating the fleet).
	SourceHarness = "harness"
)

// RequestKey identifies one client-side latency histogram.
type RequestKey struct {
	// Source is SourceKubelet or SourceHarness.
	Source string
	// Verb, Resource and Subresource are as in RequestInfo.
	Verb, Resource, Subresource string
}

// Options configure Recorder.
type Options struct {
	// Highest is the largest latency a histogram tracks; default 60s. Larger
	// samples are recorded as Highest and counted as clamped.
	Highest time.Duration
}

// Recorder records the latency of every request the simulated kubelets
// send, in one HdrHistogram per (source, verb, resource, subresource), from
// 1 µs to 60 s at 3 significant digits, together with error, 429 and retry
// counts.
//
// Recording takes no lock: the histogram for a key is found in a
// copy-on-write map read through an atomic pointer, and counts are atomic
// adds (see atomicHist for why this beats one histogram per goroutine
// here). Only the first request of a new key takes a mutex, to add it.
// Record and the RoundTripper are safe for concurrent use by any number of
// goroutines; BenchmarkClientLatencyRecord checks that recording does not
// allocate.
//
// Latency is measured around the HTTP round trip, after client-go's
// client-side rate limiter: for WATCH, until the response headers arrive;
// for every other verb, until the body has been read to EOF or closed, so
// that a LIST includes transferring its payload.
type Recorder struct {
	clk     atomic.Pointer[clockRef]
	highest time.Duration

	series atomic.Pointer[map[RequestKey]*clientSeries]
	mu     sync.Mutex // serializes adding keys
}

var _ measure.Measurement = (*Recorder)(nil)

// clockRef boxes a clock for atomic.Pointer.
type clockRef struct{ clock.PassiveClock }

type clientSeries struct {
	hist      *atomicHist
	requests  atomic.Int64
	errors    atomic.Int64
	throttled atomic.Int64
	retries   atomic.Int64
}

// New returns an empty recorder using the real clock until
// Start provides env.Clock.
func New(opts Options) *Recorder {
	if opts.Highest <= 0 {
		opts.Highest = 60 * time.Second
	}
	c := &Recorder{highest: opts.Highest}
	c.clk.Store(&clockRef{clock.RealClock{}})
	empty := map[RequestKey]*clientSeries{}
	c.series.Store(&empty)
	return c
}

// Name implements Measurement.
func (c *Recorder) Name() string { return Name }

// Start takes the clock from env; transports created by Wrapper use it from
// then on. Recording works before Start too, with the real clock.
func (c *Recorder) Start(_ context.Context, env *measure.Env) error {
	if env.Clock != nil {
		c.clk.Store(&clockRef{env.Clock})
	}
	return nil
}

// MarkStormStart implements Measurement. Client-side histograms cover the
// replayed requests only, which all belong to the storm.
func (c *Recorder) MarkStormStart(time.Time) {}

// Dispose implements Measurement.
func (c *Recorder) Dispose() {}

func (c *Recorder) seriesFor(k RequestKey) *clientSeries {
	if s, ok := (*c.series.Load())[k]; ok {
		return s
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old := *c.series.Load()
	if s, ok := old[k]; ok {
		return s
	}
	next := maps.Clone(old)
	s := &clientSeries{hist: newAtomicHist(c.highest.Microseconds())}
	next[k] = s
	c.series.Store(&next)
	return s
}

// Record records one request: its latency, its HTTP status code (0 when the
// round trip failed), whether it failed at the transport level, and whether
// the response asked client-go to retry (a 429 or 5xx with Retry-After; see
// checkWait in k8s.io/client-go/rest/with_retry.go). It does not allocate
// once the key has been seen.
func (c *Recorder) Record(k RequestKey, d time.Duration, code int, transportErr, retryable bool) {
	s := c.seriesFor(k)
	s.requests.Add(1)
	s.hist.record(d.Microseconds())
	switch {
	case transportErr || code >= 500:
		s.errors.Add(1)
	case code == http.StatusTooManyRequests:
		s.throttled.Add(1)
	}
	if retryable {
		s.retries.Add(1)
	}
}

// Wrapper returns a client-go transport wrapper recording every request
// under the given source. Install it on a rest.Config with
// cfg.Wrap(c.Wrapper(SourceKubelet)), which chains it after any existing
// wrapper.
func (c *Recorder) Wrapper(source string) func(http.RoundTripper) http.RoundTripper {
	return func(rt http.RoundTripper) http.RoundTripper {
		return &latencyTransport{c: c, source: source, next: rt}
	}
}

// latencyTransport is the recording http.RoundTripper.
type latencyTransport struct {
	c      *Recorder
	source string
	next   http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (t *latencyTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	info := ParseRequest(req)
	k := RequestKey{Source: t.source, Verb: info.Verb, Resource: info.Resource, Subresource: info.Subresource}
	clk := t.c.clk.Load().PassiveClock
	start := clk.Now()
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		t.c.Record(k, clk.Since(start), 0, true, false)
		return resp, err
	}
	retryable := (resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500) && resp.Header.Get("Retry-After") != ""
	if info.Verb == "WATCH" || resp.Body == nil || resp.Body == http.NoBody {
		t.c.Record(k, clk.Since(start), resp.StatusCode, false, retryable)
		return resp, nil
	}
	resp.Body = &timedBody{ReadCloser: resp.Body, c: t.c, clk: clk, key: k, start: start, code: resp.StatusCode, retryable: retryable}
	return resp, nil
}

// WrappedRoundTripper lets client-go's utilnet unwrap this transport.
func (t *latencyTransport) WrappedRoundTripper() http.RoundTripper { return t.next }

// timedBody records its request when the body is read to EOF, fails, or is
// closed, whichever comes first.
type timedBody struct {
	io.ReadCloser
	c         *Recorder
	clk       clock.PassiveClock
	key       RequestKey
	start     time.Time
	code      int
	retryable bool
	done      atomic.Bool
}

func (b *timedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil {
		b.finish(err != io.EOF)
	}
	return n, err
}

func (b *timedBody) Close() error {
	b.finish(false)
	return b.ReadCloser.Close()
}

func (b *timedBody) finish(failed bool) {
	if b.done.CompareAndSwap(false, true) {
		b.c.Record(b.key, b.clk.Since(b.start), b.code, failed, b.retryable)
	}
}

// Gather implements Measurement: per key, the latency histogram and the
// request, error, 429, retry and clamped counts.
func (c *Recorder) Gather(context.Context) (result.Measurement, error) {
	out := result.Measurement{Name: c.Name()}
	m := *c.series.Load()
	for k, s := range m {
		labels := []string{result.LabelSource, k.Source, result.LabelVerb, k.Verb, result.LabelResource, k.Resource, result.LabelSubresource, k.Subresource}
		h, err := result.FromHDR(RequestLatency, "", result.Labels(labels...), s.hist.snapshot())
		if err != nil {
			return out, err
		}
		out.Histograms = append(out.Histograms, h)
		for i, n := range []int64{s.requests.Load(), s.errors.Load(), s.throttled.Load(), s.retries.Load(), s.hist.clamped.Load()} {
			if n > 0 || i == 0 { // requests, even none
				name := []string{Requests, Errors, Throttled, Retries, Clamped}[i]
				out.Values = append(out.Values, result.Value{Name: name, Labels: result.Labels(labels...), Unit: result.UnitRequests, Value: float64(n)})
			}
		}
	}
	return out, nil
}
