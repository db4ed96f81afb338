package apiserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/kubernetes/fake"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/stormbench/stormbench/bench/measure"
	"github.com/stormbench/stormbench/bench/measure/internal/measuretest"
	"github.com/stormbench/stormbench/bench/result"
	"github.com/stormbench/stormbench/bench/storm"
)

// fetchBytes adapts a fetch returning its body to MetricsSource.Fetch.
func fetchBytes(f func(ctx context.Context) ([]byte, string, error)) func(context.Context, *bytes.Buffer) (string, error) {
	return func(ctx context.Context, body *bytes.Buffer) (string, error) {
		b, contentType, err := f(ctx)
		body.Write(b)
		return contentType, err
	}
}

// scriptedSource serves testdata/apiserver/scrape-<n>.prom, n being the
// fake clock's whole seconds since t0, in the text format or converted to
// the protobuf delimited format, with the Content-Type promhttp sends; a
// missing file is a failed scrape.
func scriptedSource(t *testing.T, clk *testingclock.FakeClock, proto bool) measure.MetricsSource {
	if proto {
		return scriptedSourceAs(t, clk, encProto)
	}
	return scriptedSourceAs(t, clk, encText)
}

// encoding is how a scripted source serves its scrapes.
type encoding struct {
	name        string
	contentType string
	encode      func(t testing.TB, text []byte) []byte
}

var (
	encText        = encoding{"text", string(expfmt.NewFormat(expfmt.TypeTextPlain)), func(_ testing.TB, b []byte) []byte { return b }}
	encProto       = encoding{"protobuf", string(expfmt.NewFormat(expfmt.TypeProtoDelim)), toProto}
	encOpenMetrics = encoding{"openmetrics", string(expfmt.NewFormat(expfmt.TypeOpenMetrics)), toOpenMetrics}
	// A source that sends no Content-Type: the body tells the format.
	encTextBare  = encoding{"text without Content-Type", "", func(_ testing.TB, b []byte) []byte { return b }}
	encProtoBare = encoding{"protobuf without Content-Type", "", toProto}
)

// scriptedSourceAs is scriptedSource in the given encoding.
func scriptedSourceAs(t *testing.T, clk *testingclock.FakeClock, enc encoding) measure.MetricsSource {
	return measure.MetricsSource{
		Component: measure.ComponentAPIServer,
		Fetch: fetchBytes(func(context.Context) ([]byte, string, error) {
			n := int(clk.Now().Sub(measuretest.T0) / time.Second)
			b, err := os.ReadFile(filepath.Join("testdata", "apiserver", fmt.Sprintf("scrape-%d.prom", n)))
			if errors.Is(err, os.ErrNotExist) {
				return nil, "", errors.New("connection refused")
			}
			if err != nil {
				return nil, "", err
			}
			return enc.encode(t, b), enc.contentType, nil
		}),
	}
}

// toProto re-encodes a text exposition in the protobuf delimited format, as
// promhttp serves it to a client sending MetricsAccept.
func toProto(t testing.TB, text []byte) []byte {
	t.Helper()
	return reencode(t, text, expfmt.NewFormat(expfmt.TypeProtoDelim))
}

// toOpenMetrics re-encodes a text exposition in OpenMetrics 1.0.0, as
// promhttp serves it to a client that asks for it.
func toOpenMetrics(t testing.TB, text []byte) []byte {
	t.Helper()
	return reencode(t, text, expfmt.NewFormat(expfmt.TypeOpenMetrics))
}

func reencode(t testing.TB, text []byte, format expfmt.Format) []byte {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	enc := expfmt.NewEncoder(&out, format)
	for _, name := range slices.Sorted(maps.Keys(fams)) {
		if err := enc.Encode(fams[name]); err != nil {
			t.Fatal(err)
		}
	}
	if c, ok := enc.(expfmt.Closer); ok {
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return out.Bytes()
}

// runScripted drives the scraper through the canned scrapes 0..8: a 3 s
// baseline of 11 requests/s, a storm from t=3.5s, a failed scrape at t=5
// and an API-server restart before t=7; Gather takes the scrape at t=8.
func runScripted(t *testing.T, proto bool) result.Measurement {
	t.Helper()
	if proto {
		return runScriptedAs(t, encProto)
	}
	return runScriptedAs(t, encText)
}

// runScriptedAs is runScripted with the scrapes served in enc.
func runScriptedAs(t *testing.T, enc encoding) result.Measurement {
	t.Helper()
	clk := testingclock.NewFakeClock(measuretest.T0)
	events := &storm.Outcomes{}
	for i, n := range []string{"kn-1", "kn-2", "kn-3"} {
		events.Add(storm.Outcome{Restart: storm.Restart{Node: n}, Down: measuretest.At(3500*time.Millisecond + time.Duration(i)*time.Millisecond)})
	}
	env := &measure.Env{Client: fake.NewClientset(), Clock: clk, Outcomes: events, Scrapers: []measure.MetricsSource{scriptedSourceAs(t, clk, enc)}}
	m, err := New(Options{Interval: time.Second, Baseline: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.setup(env); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := range 8 {
		clk.SetTime(measuretest.At(time.Duration(i) * time.Second))
		err := m.fold(m.comps[0], m.comps[0].scrape(ctx))
		if (err != nil) != (i == 5) {
			t.Fatalf("scrape %d: error %v", i, err)
		}
		if i == 3 {
			m.MarkStormStart(measuretest.At(3500 * time.Millisecond))
		}
	}
	clk.SetTime(measuretest.At(8 * time.Second))
	out, err := m.Gather(ctx)
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	return out
}

// TestAPIServerScriptedGolden checks the figures of the scripted scrapes
// against a golden file, for both exposition formats.
func TestAPIServerScriptedGolden(t *testing.T) {
	for _, proto := range []bool{false, true} {
		t.Run(map[bool]string{false: "text", true: "protobuf"}[proto], func(t *testing.T) {
			measuretest.GoldenMeasurement(t, "apiserver.golden.json", runScripted(t, proto))
		})
	}
}

// TestAPIServerScriptedFormats: every exposition format a source may serve
// gives the same figures: the fast paths (protobuf delimited and text, told
// by the Content-Type or by the body) and expfmt's decoder (OpenMetrics).
func TestAPIServerScriptedFormats(t *testing.T) {
	for _, enc := range []encoding{encText, encProto, encOpenMetrics, encTextBare, encProtoBare} {
		t.Run(enc.name, func(t *testing.T) {
			measuretest.GoldenMeasurement(t, "apiserver.golden.json", runScriptedAs(t, enc))
		})
	}
}

func TestAPIServerScriptedFigures(t *testing.T) {
	out := runScripted(t, true)
	storm, base := result.WindowStorm, result.WindowBaseline
	tests := []struct {
		name, window string
		labels       []string
		want         float64
	}{
		// Baseline: scrapes 1..3, 11 requests each.
		{Requests, base, nil, 33},
		{RequestRateMean, base, nil, 11},
		{RequestRateStdDev, base, nil, 0},
		// Storm: 106 (t=4) + 212 over the gap (t=6) + 11 after the reset
		// (t=7, counted from zero) + 11 (t=8).
		{Requests, storm, nil, 340},
		{Requests, storm, []string{result.LabelCode, "429"}, 30},
		{Throttled, storm, nil, 30},
		{Requests, storm, []string{result.LabelVerb, "PATCH", result.LabelResource, "pods", result.LabelSubresource, "status"}, 120},
		{RequestRatePeak, storm, nil, 106},
		{RequestRateMean, storm, nil, 68},
		{BurstThreshold, storm, nil, 22},
		{BurstSeconds, storm, nil, 3},
		{ExcessRequests, storm, nil, 340 - 11*5},
		{ExcessPerRestart, storm, nil, (340 - 11*5) / 3.0},
		{RawExcessRequests, storm, nil, 340 - 11*5},
		{RawExcessPerRestart, storm, []string{result.LabelVerb, "LIST", result.LabelResource, "pods", result.LabelSubresource, ""}, 150 / 3.0},
		{FlowDispatched, storm, []string{result.LabelPriorityLevel, "node-high", result.LabelFlowSchema, "system-node-high"}, 50},
		{FlowRejected, storm, []string{result.LabelPriorityLevel, "system", result.LabelFlowSchema, "system-nodes", result.LabelReason, "queue-full"}, 30},
		{FlowInqueueMax, storm, []string{result.LabelPriorityLevel, "system", result.LabelFlowSchema, "system-nodes"}, 12},
		{InflightMax, storm, []string{result.LabelRequestKind, "readOnly"}, 80},
		{InflightMax, base, []string{result.LabelRequestKind, "readOnly"}, 3},
		{WatchersMax, storm, nil, 400},
		{WatchEvents, storm, []string{result.LabelResource, "pods"}, 100 + 200 + 2 + 2},
		// CPU: +1.5 (t=4), +3 (t=6), 0.5 after the reset, +0.5.
		{CPUSeconds, storm, []string{result.LabelComponent, measure.ComponentAPIServer}, 5.5},
		{Scrapes, "", []string{result.LabelComponent, measure.ComponentAPIServer}, 9},
		{ScrapeFailures, "", []string{result.LabelComponent, measure.ComponentAPIServer}, 1},
		// Scrape 5 failed: 4 s and 6 s are the farthest apart.
		{ScrapeMaxGap, "", []string{result.LabelComponent, measure.ComponentAPIServer}, 2},
		// The script calls scrape itself; only Gather's final scrape is a
		// slot of the measurement's own.
		{ScrapesScheduled, "", []string{result.LabelComponent, measure.ComponentAPIServer}, 1},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%s/%v", tt.name, tt.window, tt.labels), func(t *testing.T) {
			if got := measuretest.Value(t, &out, tt.name, tt.window, tt.labels...); !measuretest.Approx(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}

	// Latency classes from bucket deltas; WATCH and non-resource GETs excluded.
	hist := func(window, class string) *result.Histogram {
		h := out.Histogram(RequestDuration, window, result.LabelClass, class)
		if h == nil {
			t.Fatalf("no %s histogram for class %s", window, class)
		}
		return h
	}
	if h := hist(base, ClassMutating); h.Summary.Count != 15 || !measuretest.Approx(h.Summary.P99, 0.005+0.02*0.99) {
		t.Errorf("baseline mutating = %+v, want 15 requests, p99 0.0248", h.Summary)
	}
	// Storm mutating: 25 PUTs at 0.02 s and 120 PATCHes at 0.15 s.
	if h := hist(storm, ClassMutating); h.Summary.Count != 145 || !measuretest.Approx(h.Summary.P99, 0.1+0.1*(0.99*145-25)/120) {
		t.Errorf("storm mutating = %+v, want 145 requests, p99 %v", h.Summary, 0.1+0.1*(0.99*145-25)/120)
	}
	// APF queue wait: 40 executed and 10 rejected system-nodes requests,
	// 12 s in queue between them; the baseline queued nothing, so it has
	// no histogram.
	if h := out.Histogram(FlowWait, storm, result.LabelPriorityLevel, "system", result.LabelFlowSchema, "system-nodes"); h == nil || h.Summary.Count != 50 || !measuretest.Approx(h.Summary.Mean, 12.0/50) {
		t.Errorf("storm APF wait of system-nodes = %+v, want 50 requests, mean 0.24 s", h)
	}
	if h := out.Histogram(FlowWait, base, result.LabelPriorityLevel, "system", result.LabelFlowSchema, "system-nodes"); h != nil {
		t.Errorf("baseline APF wait histogram %+v, want none (nothing queued)", h.Summary)
	}
	if h := hist(storm, ClassGet); h.Summary.Count != 25 {
		t.Errorf("storm GET count = %d, want 25 (5 storm intervals; the non-resource GETs are excluded)", h.Summary.Count)
	}
	if h := hist(storm, ClassList); h.Summary.Count != 150 || h.Summary.P50 <= 0.4 {
		t.Errorf("storm LIST = %+v, want 150 requests, p50 in (0.4, 0.6]", h.Summary)
	}
	if out.Histogram(EtcdRequestDuration, storm) == nil {
		t.Error("no overall etcd histogram")
	}

	// The failed scrape and the reset are reported as warnings, and that
	// the simulation's requests could not be told apart (the script's APF
	// has no stormbench flow schema).
	if len(out.Warnings) != 3 || !strings.Contains(out.Warnings[2], "not told apart") {
		t.Errorf("warnings = %q, want the gap, the reset, and the simulation not told apart", out.Warnings)
	}
}

func TestAPIServerWithoutStormStart(t *testing.T) {
	clk := testingclock.NewFakeClock(measuretest.At(time.Second))
	env := &measure.Env{Client: fake.NewClientset(), Clock: clk, Scrapers: []measure.MetricsSource{scriptedSource(t, clk, false)}}
	m, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.setup(env); err != nil {
		t.Fatal(err)
	}
	if err := m.fold(m.comps[0], m.comps[0].scrape(context.Background())); err != nil {
		t.Fatal(err)
	}
	clk.SetTime(measuretest.At(2 * time.Second))
	out, err := m.Gather(context.Background())
	if err == nil {
		t.Error("Gather without MarkStormStart returned no error")
	}
	if len(out.Windows) != 0 {
		t.Errorf("windows = %v, want none", out.Windows)
	}
	if v, _ := out.Value(Scrapes, "", result.LabelComponent, measure.ComponentAPIServer); v != 2 {
		t.Errorf("scrapes = %v, want 2: partial figures survive the error", v)
	}
}

func TestAPIServerOptions(t *testing.T) {
	for _, o := range []Options{{Interval: -1}, {Baseline: -time.Second}, {Timeout: -1}} {
		if _, err := New(o); err == nil {
			t.Errorf("NewAPIServerMetrics(%+v) accepted invalid options", o)
		}
	}
	m, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m.BaselineWait() != 11*time.Second {
		t.Errorf("default BaselineWait = %v, want 11s", m.BaselineWait())
	}
	if err := m.Start(context.Background(), &measure.Env{Clock: testingclock.NewFakeClock(measuretest.T0)}); err == nil {
		t.Error("Start without scrapers succeeded")
	}
}

// TestAPIServerLoop checks that Start scrapes once, then once per interval
// of the injected clock, and that Dispose stops the loop.
func TestAPIServerLoop(t *testing.T) {
	clk := testingclock.NewFakeClock(measuretest.T0)
	var n atomic.Int32
	src := measure.MetricsSource{Component: "kwok-controller", Fetch: fetchBytes(func(context.Context) ([]byte, string, error) {
		n.Add(1)
		return []byte("# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total 1\n"), "", nil
	})}
	m, err := New(Options{Interval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Start(context.Background(), &measure.Env{Clock: clk, Scrapers: []measure.MetricsSource{src}}); err != nil {
		t.Fatal(err)
	}
	defer m.Dispose()
	if got := n.Load(); got != 1 {
		t.Fatalf("scrapes after Start = %d, want 1", got)
	}
	for want := int32(2); want <= 4; want++ {
		measuretest.WaitFor(t, "the scrape loop to wait on the clock", func() bool { return clk.HasWaiters() })
		clk.Step(time.Second)
		measuretest.WaitFor(t, fmt.Sprintf("scrape %d", want), func() bool { return n.Load() == want })
	}
	m.Dispose()
	if clk.HasWaiters() {
		t.Error("the scrape loop still waits on the clock after Dispose")
	}
}

func TestAPIServerStartFailsWhenEverySourceFails(t *testing.T) {
	bad := measure.MetricsSource{Component: "etcd", Fetch: fetchBytes(func(context.Context) ([]byte, string, error) { return nil, "", errors.New("refused") })}
	good := measure.MetricsSource{Component: "kwok-controller", Fetch: fetchBytes(func(context.Context) ([]byte, string, error) { return []byte("up 1\n"), "", nil })}
	m, _ := New(Options{})
	if err := m.Start(context.Background(), &measure.Env{Clock: testingclock.NewFakeClock(measuretest.T0), Scrapers: []measure.MetricsSource{bad}}); err == nil {
		t.Error("Start succeeded with every source failing")
	}
	m.Dispose()
	m, _ = New(Options{})
	if err := m.Start(context.Background(), &measure.Env{Clock: testingclock.NewFakeClock(measuretest.T0), Scrapers: []measure.MetricsSource{bad, good}}); err != nil {
		t.Errorf("Start failed with one good source: %v", err)
	}
	m.Dispose()
}
