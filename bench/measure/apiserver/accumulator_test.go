package apiserver

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stormbench/stormbench/bench/measure"
	"github.com/stormbench/stormbench/bench/measure/internal/measuretest"
	"github.com/stormbench/stormbench/bench/measure/internal/track"
	"github.com/stormbench/stormbench/bench/result"
)

// Series keys for the accumulator tests.
var (
	getPods   = seriesKey{fam: famRequests, a: "GET", b: "pods", d: "200"}
	patchPods = seriesKey{fam: famRequests, a: "PATCH", b: "pods", c: "status", d: "200"}
	listPods  = seriesKey{fam: famRequests, a: "LIST", b: "pods", d: "429"}
	cpuKey    = seriesKey{fam: famCPU}
	readOnly  = seriesKey{fam: famInflight, a: "readOnly"}
	watchers  = seriesKey{fam: famWatchers}
	getLat    = seriesKey{fam: famRequestDuration, a: ClassGet}
)

// feed is one step of an accumulator test: a sample of a component, or the
// storm start when mark is set.
type feed struct {
	component string
	s         *sample
	mark      time.Time
}

// scrapeAt is a sample of kube-apiserver at sec seconds after t0.
func scrapeAt(sec float64, counters map[seriesKey]float64, gauges map[seriesKey]float64) feed {
	return scrapeOf(measure.ComponentAPIServer, sec, 0, counters, gauges)
}

// scrapeOf is a sample of component at sec seconds after t0, of a process
// started start seconds after t0 (0: unknown).
func scrapeOf(component string, sec, start float64, counters map[seriesKey]float64, gauges map[seriesKey]float64) feed {
	var startTime float64
	if start != 0 {
		startTime = float64(measuretest.At(0).Unix()) + start
	}
	s := &sample{at: measuretest.At(time.Duration(sec * float64(time.Second))), startTime: startTime,
		counters: map[seriesKey]float64{}, gauges: map[seriesKey]float64{}, hists: map[seriesKey]*bucketSample{}}
	for k, v := range counters {
		s.counters[k] = v
	}
	for k, v := range gauges {
		s.gauges[k] = v
	}
	return feed{component: component, s: s}
}

func markAt(sec float64) feed {
	return feed{mark: measuretest.At(time.Duration(sec * float64(time.Second)))}
}

// steady is n kube-apiserver samples a second apart from sec on, with the
// GET count growing by rate a second from base.
func steady(sec float64, n int, base, rate float64) []feed {
	var out []feed
	for i := range n {
		out = append(out, scrapeAt(sec+float64(i), map[seriesKey]float64{getPods: base + rate*float64(i)}, nil))
	}
	return out
}

func join(parts ...[]feed) []feed {
	var out []feed
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// want is one expected figure; absent says there must be none.
type want struct {
	name, window string
	labels       []string
	v            float64
	absent       bool
}

// accumulate feeds an accumulator with a 3 s baseline and a 1 s interval,
// closes it and returns its figures and every warning.
func accumulate(feeds []feed, restarts int) (result.Measurement, []string) {
	var warnings caveats
	acc := newAPIAccumulator(measuretest.T0, 3*time.Second, time.Second, &warnings)
	for _, f := range feeds {
		if f.s == nil {
			acc.MarkStormStart(f.mark)
			continue
		}
		acc.Add(f.component, f.s)
	}
	out := acc.Close(restarts)
	return out, append(warnings.close(), out.Warnings...)
}

// checkWants checks out's figures against wants.
func checkWants(t *testing.T, out result.Measurement, wants []want) {
	t.Helper()
	for _, w := range wants {
		v, ok := out.Value(w.name, w.window, w.labels...)
		switch {
		case w.absent && ok:
			t.Errorf("%s %s %v = %v, want none", w.name, w.window, w.labels, v)
		case !w.absent && !ok:
			t.Errorf("%s %s %v missing, want %v", w.name, w.window, w.labels, w.v)
		case !w.absent && !measuretest.Approx(v, w.v):
			t.Errorf("%s %s %v = %v, want %v", w.name, w.window, w.labels, v, w.v)
		}
	}
}

// TestAPIAccumulator feeds the accumulator sequences of samples, without a
// clock or a scraper, and checks the figures.
func TestAPIAccumulator(t *testing.T) {
	base, storm := result.WindowBaseline, result.WindowStorm
	tests := []struct {
		name     string
		feeds    []feed
		restarts int
		want     []want
		// warnings are substrings of the expected warnings, in order.
		warnings []string
	}{{
		name: "baseline then storm",
		// 10 GETs/s up to t=3, the storm starts at 3.5, 50 GETs/s after.
		feeds: join(steady(0, 4, 0, 10), []feed{markAt(3.5)}, steady(4, 3, 80, 50)),
		// t=3..4 is a storm interval: 80−30 = 50.
		restarts: 2,
		want: []want{
			{name: Requests, window: base, v: 30},
			{name: RequestRateMean, window: base, v: 10},
			{name: RequestRateStdDev, window: base, v: 0},
			{name: Requests, window: storm, v: 150},
			{name: Requests, window: storm, labels: []string{result.LabelVerb, "GET", result.LabelResource, "pods", result.LabelSubresource, ""}, v: 150},
			{name: Requests, window: storm, labels: []string{result.LabelCode, "200"}, v: 150},
			{name: Throttled, window: storm, v: 0},
			{name: RequestRateMean, window: storm, v: 50},
			{name: RequestRatePeak, window: storm, v: 50},
			{name: BurstThreshold, window: storm, v: 20}, // max(mean+3sd, 2·mean)
			{name: BurstSeconds, window: storm, v: 3},
			// No flow schema dispatched anything: nothing to take out.
			{name: ExcessRequests, window: storm, v: 120},
			{name: RawExcessRequests, window: storm, v: 120},
			{name: ExcessPerRestart, window: storm, v: 60},
			{name: RawExcessPerRestart, window: storm, v: 60},
			{name: RawExcessPerRestart, window: storm, labels: []string{result.LabelVerb, "GET", result.LabelResource, "pods", result.LabelSubresource, ""}, v: 60},
			{name: ExcessPerRestart, window: storm, labels: []string{result.LabelVerb, "GET", result.LabelResource, "pods", result.LabelSubresource, ""}, absent: true},
		},
	}, {
		name:  "no restarts: no excess per restart",
		feeds: join(steady(0, 4, 0, 10), []feed{markAt(3.5)}, steady(4, 3, 80, 50)),
		want: []want{
			{name: ExcessRequests, window: storm, v: 120},
			{name: ExcessPerRestart, window: storm, absent: true},
		},
	}, {
		name: "a counter that decreases is a reset and counts from zero",
		feeds: join(steady(0, 4, 0, 10), []feed{markAt(3.5)},
			[]feed{scrapeAt(4, map[seriesKey]float64{getPods: 40}, nil), scrapeAt(5, map[seriesKey]float64{getPods: 7}, nil), scrapeAt(6, map[seriesKey]float64{getPods: 17}, nil)}),
		want: []want{
			{name: Requests, window: storm, v: 10 + 7 + 10},
			{name: RequestRatePeak, window: storm, v: 10},
		},
		warnings: []string{"counter reset in kube-apiserver between 2026-03-01T12:00:04Z and 2026-03-01T12:00:05Z"},
	}, {
		name: "a new process start time resets every series, even one that grew",
		feeds: []feed{
			scrapeOf(measure.ComponentAPIServer, 0, 100, map[seriesKey]float64{getPods: 0, cpuKey: 1}, nil),
			markAt(0.5),
			scrapeOf(measure.ComponentAPIServer, 1, 100, map[seriesKey]float64{getPods: 10, cpuKey: 2}, nil),
			scrapeOf(measure.ComponentAPIServer, 2, 200, map[seriesKey]float64{getPods: 12, cpuKey: 2.5}, nil),
		},
		want: []want{
			{name: Requests, window: storm, v: 10 + 12},
			{name: CPUSeconds, window: storm, labels: []string{result.LabelComponent, measure.ComponentAPIServer}, v: 1 + 2.5},
		},
		warnings: []string{"counter reset in kube-apiserver between 2026-03-01T12:00:01Z and 2026-03-01T12:00:02Z", "no scrape interval fell in the baseline window"},
	}, {
		// process_start_time_seconds moved by a second with /proc/stat's
		// btime (prometheus/client_golang#289): the same process.
		name: "a start time a second off, before the last scrape, is the same process",
		feeds: []feed{
			scrapeOf(measure.ComponentAPIServer, 0, -600, map[seriesKey]float64{getPods: 0, cpuKey: 1}, nil),
			markAt(0.5),
			scrapeOf(measure.ComponentAPIServer, 1, -600, map[seriesKey]float64{getPods: 10, cpuKey: 2}, nil),
			scrapeOf(measure.ComponentAPIServer, 2, -599, map[seriesKey]float64{getPods: 12, cpuKey: 2.5}, nil),
		},
		want: []want{
			{name: Requests, window: storm, v: 12},
			{name: CPUSeconds, window: storm, labels: []string{result.LabelComponent, measure.ComponentAPIServer}, v: 1.5},
		},
		warnings: []string{"no scrape interval fell in the baseline window"},
	}, {
		// Overlapping scrapes: the one at 2 s read the counter before the
		// one at 1 s did. Not a reset: 0 in its interval, and the next one
		// counts from 10, so the window total is the counter's growth.
		name: "a series older than in the scrape before counts in the next interval",
		feeds: []feed{
			scrapeOf(measure.ComponentAPIServer, 0, 100, map[seriesKey]float64{getPods: 0}, nil),
			markAt(0.5),
			scrapeOf(measure.ComponentAPIServer, 1, 100, map[seriesKey]float64{getPods: 10}, nil),
			scrapeOf(measure.ComponentAPIServer, 2, 100, map[seriesKey]float64{getPods: 8}, nil),
			scrapeOf(measure.ComponentAPIServer, 3, 100, map[seriesKey]float64{getPods: 30}, nil),
		},
		want: []want{
			{name: Requests, window: storm, v: 30},
			{name: RequestRatePeak, window: storm, v: 20},
		},
		warnings: []string{"scrape of kube-apiserver at 2026-03-01T12:00:02Z: 1 series older than in the scrape before", "no scrape interval fell in the baseline window"},
	}, {
		name: "a gap is one longer interval: nothing lost, rate over the real time",
		// No sample at t=5 (the scrape failed): t=4..6 is one interval of
		// 100 GETs over 2 s.
		feeds: join(steady(0, 4, 0, 10), []feed{markAt(3.5)}, []feed{
			scrapeAt(4, map[seriesKey]float64{getPods: 40}, nil),
			scrapeAt(6, map[seriesKey]float64{getPods: 140}, nil),
			scrapeAt(7, map[seriesKey]float64{getPods: 150}, nil),
		}),
		want: []want{
			{name: Requests, window: storm, v: 10 + 100 + 10},
			{name: RequestRateMean, window: storm, v: 120.0 / 4},
			{name: RequestRatePeak, window: storm, v: 50},
			// Intervals above 20/s: the 2 s one.
			{name: BurstSeconds, window: storm, v: 2},
		},
	}, {
		name: "a series new in a scrape counts from zero",
		feeds: join(steady(0, 4, 0, 10), []feed{markAt(3.5)}, []feed{
			scrapeAt(4, map[seriesKey]float64{getPods: 40}, nil),
			scrapeAt(5, map[seriesKey]float64{getPods: 50, listPods: 7}, nil),
		}),
		want: []want{
			{name: Requests, window: storm, v: 10 + 10 + 7},
			{name: Throttled, window: storm, v: 7},
			{name: Requests, window: storm, labels: []string{result.LabelCode, "429"}, v: 7},
		},
	}, {
		name: "missing families: no request figures and no burst, the others stay",
		feeds: []feed{
			scrapeAt(0, map[seriesKey]float64{cpuKey: 1}, map[seriesKey]float64{readOnly: 2}),
			scrapeAt(1, map[seriesKey]float64{cpuKey: 1.5}, map[seriesKey]float64{readOnly: 4}),
			markAt(1.5),
			scrapeAt(2, map[seriesKey]float64{cpuKey: 3}, map[seriesKey]float64{readOnly: 9}),
			scrapeAt(3, map[seriesKey]float64{cpuKey: 3.5}, nil), // the gauge is gone
		},
		want: []want{
			{name: Requests, window: storm, absent: true},
			{name: RequestRateMean, window: storm, absent: true},
			{name: BurstThreshold, window: storm, absent: true},
			{name: WatchersMax, window: storm, absent: true},
			{name: CPUSeconds, window: base, labels: []string{result.LabelComponent, measure.ComponentAPIServer}, v: 0.5},
			{name: CPUSeconds, window: storm, labels: []string{result.LabelComponent, measure.ComponentAPIServer}, v: 2},
			{name: InflightMax, window: base, labels: []string{result.LabelRequestKind, "readOnly"}, v: 4},
			{name: InflightMax, window: storm, labels: []string{result.LabelRequestKind, "readOnly"}, v: 9},
		},
	}, {
		name: "registered watchers win over long-running WATCHes",
		feeds: []feed{
			scrapeAt(0, nil, nil),
			markAt(0.5),
			scrapeAt(1, nil, map[seriesKey]float64{watchers: 30, {fam: famLongRunning}: 50}),
			scrapeAt(2, nil, map[seriesKey]float64{watchers: 20, {fam: famLongRunning}: 70}),
		},
		want:     []want{{name: WatchersMax, window: storm, v: 30}},
		warnings: []string{"no scrape interval fell in the baseline window"},
	}, {
		name: "intervals older than the baseline before the storm start are dropped",
		// 20 s of samples, baseline 3 s: only t=8..10 are in the baseline.
		feeds: join(steady(0, 11, 0, 10), []feed{markAt(10.5)}, steady(11, 2, 110, 10)),
		want: []want{
			{name: Requests, window: base, v: 30},
			{name: Requests, window: storm, v: 20},
		},
	}, {
		name: "components: CPU apart, requests summed",
		feeds: []feed{
			scrapeOf(measure.ComponentAPIServer, 0, 0, map[seriesKey]float64{getPods: 0, cpuKey: 1}, nil),
			scrapeOf(measure.ComponentEtcd, 0, 0, map[seriesKey]float64{cpuKey: 10}, nil),
			markAt(0.5),
			scrapeOf(measure.ComponentAPIServer, 1, 0, map[seriesKey]float64{getPods: 5, cpuKey: 2}, nil),
			scrapeOf(measure.ComponentEtcd, 1.2, 0, map[seriesKey]float64{cpuKey: 13}, nil),
			scrapeOf("kube-apiserver-2", 1.5, 0, map[seriesKey]float64{getPods: 100}, nil), // its first sample: a base only
			scrapeOf("kube-apiserver-2", 2.5, 0, map[seriesKey]float64{getPods: 104}, nil),
		},
		want: []want{
			{name: Requests, window: storm, v: 5 + 4},
			{name: CPUSeconds, window: storm, labels: []string{result.LabelComponent, measure.ComponentAPIServer}, v: 1},
			{name: CPUSeconds, window: storm, labels: []string{result.LabelComponent, measure.ComponentEtcd}, v: 3},
		},
		warnings: []string{"no scrape interval fell in the baseline window"},
	}, {
		name:     "no storm start: no windows",
		feeds:    steady(0, 4, 0, 10),
		want:     []want{{name: Requests, window: base, absent: true}, {name: Requests, window: storm, absent: true}},
		warnings: []string{"no scrape interval fell in the baseline window", "no scrape interval fell in the storm window"},
	}, {
		name: "histograms: bucket deltas per window, a changed layout ignored",
		feeds: []feed{
			histAt(0, []float64{1, math.Inf(1)}, []float64{1, 2}),
			markAt(0.5),
			histAt(1, []float64{1, math.Inf(1)}, []float64{4, 6}),
			histAt(2, []float64{1, 2, math.Inf(1)}, []float64{5, 7, 8}), // new layout: counted from zero
			histAt(3, []float64{1, 2, math.Inf(1)}, []float64{5, 7, 9}),
		},
		warnings: []string{"no scrape interval fell in the baseline window", "storm window: 2 histogram intervals with a changed bucket layout ignored"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, got := accumulate(tt.feeds, tt.restarts)
			checkWants(t, out, tt.want)
			if len(got) != len(tt.warnings) {
				t.Fatalf("warnings %q, want %d matching %q", got, len(tt.warnings), tt.warnings)
			}
			for i, w := range tt.warnings {
				if !strings.Contains(got[i], w) {
					t.Errorf("warning %d = %q, want one containing %q", i, got[i], w)
				}
			}
		})
	}
}

// histAt is a sample at sec seconds after t0 holding one GET latency
// histogram with the given cumulative bucket counts.
func histAt(sec float64, bounds, cum []float64) feed {
	f := scrapeAt(sec, nil, nil)
	f.s.hists[getLat] = &bucketSample{bounds: bounds, cum: cum, count: cum[len(cum)-1]}
	return f
}

func TestAPIAccumulatorHistogramDeltas(t *testing.T) {
	out, _ := accumulate([]feed{
		histAt(0, []float64{1, math.Inf(1)}, []float64{1, 2}),
		histAt(1, []float64{1, math.Inf(1)}, []float64{3, 5}),
		markAt(1.5),
		histAt(2, []float64{1, math.Inf(1)}, []float64{4, 9}),
		histAt(3, []float64{1, math.Inf(1)}, []float64{10, 15}),
	}, 0)
	for _, tt := range []struct {
		window string
		count  int64
	}{{result.WindowBaseline, 3}, {result.WindowStorm, 4 + 6}} {
		h := out.Histogram(RequestDuration, tt.window, result.LabelClass, ClassGet)
		if h == nil || h.Summary.Count != tt.count {
			t.Errorf("%s GET latency = %+v, want %d requests", tt.window, h, tt.count)
		}
	}
}

// TestAPIAccumulatorClosed: samples and a storm start after Close change
// nothing.
func TestAPIAccumulatorClosed(t *testing.T) {
	var warnings caveats
	acc := newAPIAccumulator(measuretest.T0, 3*time.Second, time.Second, &warnings)
	for _, f := range steady(0, 3, 0, 10) {
		acc.Add(f.component, f.s)
	}
	acc.Close(0)
	acc.MarkStormStart(measuretest.At(time.Second))
	acc.Add(measure.ComponentAPIServer, steady(3, 1, 30, 0)[0].s)
	if out := acc.Close(0); len(out.Windows) != 0 {
		t.Errorf("windows after Close: %v", out.Windows)
	}
}

func TestCaveatsBounded(t *testing.T) {
	var c caveats
	for i := range track.MaxWarnings + 5 {
		c.addf("warning %d", i)
	}
	got := c.close()
	if len(got) != track.MaxWarnings+1 || got[0] != "warning 0" || got[track.MaxWarnings] != "5 more warnings dropped" {
		t.Errorf("caveats = %q, want the first %d and a count of the 5 dropped", got, track.MaxWarnings)
	}
}

// TestAPISeriesBuild: a per-resource series has a point at every
// request-bearing interval, zero where its resource had no requests, so
// that it shares the time axis of the total (which result's sparse layout
// relies on); the other series have points only where measured.
func TestAPISeriesBuild(t *testing.T) {
	var b apiSeries
	resource := func(r string) seriesID {
		return seriesID{SeriesRequestRate, result.UnitRequestsPerSecond, result.LabelResource, r}
	}
	throttled := seriesID{name: SeriesThrottledRate, unit: result.UnitRequestsPerSecond}
	b.add(point{to: measuretest.At(time.Second), values: map[seriesID]float64{requestRate: 3, throttled: 0, resource("pods"): 3}})
	b.add(point{to: measuretest.At(1500 * time.Millisecond), values: map[seriesID]float64{{SeriesCPUCores, result.UnitCores, result.LabelComponent, measure.ComponentEtcd}: 0.25}})
	b.add(point{to: measuretest.At(2 * time.Second), values: map[seriesID]float64{requestRate: 5, throttled: 1, resource("nodes"): 5}})
	b.add(point{to: measuretest.At(3 * time.Second), values: map[seriesID]float64{requestRate: 0, throttled: 0}})
	got := map[string]string{}
	var order []string
	for _, s := range b.build(measuretest.T0) {
		key := s.Name + fmt.Sprint(s.Labels)
		order = append(order, key)
		got[key] = fmt.Sprint(s.Points)
	}
	want := map[string]string{
		SeriesRequestRate + "map[]":                                     "[{1 3} {2 5} {3 0}]",
		SeriesThrottledRate + "map[]":                                   "[{1 0} {2 1} {3 0}]",
		SeriesRequestRate + "map[resource:nodes]":                       "[{1 0} {2 5} {3 0}]",
		SeriesRequestRate + "map[resource:pods]":                        "[{1 3} {2 0} {3 0}]",
		SeriesCPUCores + "map[component:" + measure.ComponentEtcd + "]": "[{1.5 0.25}]",
	}
	if len(got) != len(want) {
		t.Errorf("series %v, want %d", order, len(want))
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s points = %s, want %s", k, got[k], w)
		}
	}
	wantOrder := []string{SeriesCPUCores + "map[component:" + measure.ComponentEtcd + "]", SeriesRequestRate + "map[]", SeriesRequestRate + "map[resource:nodes]", SeriesRequestRate + "map[resource:pods]", SeriesThrottledRate + "map[]"}
	if fmt.Sprint(order) != fmt.Sprint(wantOrder) {
		t.Errorf("series order %v, want %v", order, wantOrder)
	}
}

// flowScrapes are kube-apiserver samples a second apart from t=0, one per
// element of steps plus the first, and the storm start at 3.5 s: each step
// gives the requests each flow schema dispatched in that second, and
// apiserver_request_total grows by their sum (GET pods).
func flowScrapes(steps []map[string]float64) []feed {
	disp := func(schema string) seriesKey { return seriesKey{fam: famFlowDispatched, a: "some-level", b: schema} }
	cum := map[seriesKey]float64{getPods: 0}
	for _, st := range steps {
		for schema := range st {
			cum[disp(schema)] = 0
		}
	}
	out := []feed{scrapeAt(0, cum, nil)}
	for i, st := range steps {
		for schema, v := range st {
			cum[disp(schema)] += v
			cum[getPods] += v
		}
		out = append(out, scrapeAt(float64(i+1), cum, nil))
	}
	return append(out[:4:4], append([]feed{markAt(3.5)}, out[4:]...)...)
}

// TestAPIAccumulatorFlows feeds synthetic flows through the accumulator
// and checks the split by flow, the control (baseline) subtraction per
// flow, the key figure without the simulation's flows, and burst seconds
// that a lease burst of KWOK's in the baseline cannot decide.
func TestAPIAccumulatorFlows(t *testing.T) {
	const (
		kubelet      = "system-node-high"
		slices       = "stormbench-flow-endpointslice-controller"
		kcmElection  = "stormbench-flow-kube-controller-manager-leader-election"
		kwokBeats    = "stormbench-kwok-heartbeats"
		observer     = "stormbench-observer"
		harness      = "stormbench-harness"
		exemptSchema = "exempt"
	)
	steps := []map[string]float64{
		// Baseline, 3 s: KCM's leader election, the harness's scrapes,
		// and a burst of 30 KWOK lease renewals in one second.
		{kcmElection: 1, observer: 1},
		{kcmElection: 1, observer: 1, kwokBeats: 30},
		{kcmElection: 1, observer: 1},
		// Storm, 6 s (twice the baseline): the kubelets and the
		// EndpointSlice controller for 3 s, the harness's relabels,
		// KWOK's few heartbeats, the API server's own requests.
		{kcmElection: 1, observer: 1, kubelet: 40, slices: 10, harness: 8},
		{kcmElection: 1, observer: 1, kubelet: 40, slices: 10, kwokBeats: 10},
		{kcmElection: 1, observer: 1, kubelet: 40, slices: 10, exemptSchema: 4},
		{kcmElection: 1, observer: 1},
		{kcmElection: 1, observer: 1},
		{kcmElection: 1, observer: 1},
	}
	out, warnings := accumulate(flowScrapes(steps), 3)
	base, storm := result.WindowBaseline, result.WindowStorm
	flow := func(f string) []string { return []string{result.LabelFlow, f} }
	// Storm 184 requests less the baseline's 36 × 2: 112. Per flow, storm
	// less baseline × 2: kubelet 120, endpointslice-controller 30,
	// kube-controller-manager 6 − 6, other 4, kwok 10 − 60, harness 14 − 6.
	checkWants(t, out, []want{
		{name: FlowRequests, window: base, labels: flow("kwok"), v: 30},
		{name: FlowRequests, window: base, labels: flow("harness"), v: 3},
		{name: FlowRequests, window: base, labels: flow("kube-controller-manager"), v: 3},
		{name: FlowRequests, window: base, labels: flow("kubelet"), v: 0},
		{name: FlowRequests, window: storm, labels: flow("kubelet"), v: 120},
		{name: FlowRequests, window: storm, labels: flow("endpointslice-controller"), v: 30},
		{name: FlowRequests, window: storm, labels: flow("kwok"), v: 10},
		{name: FlowRequests, window: storm, labels: flow("harness"), v: 14},
		{name: FlowRequests, window: storm, labels: flow("other"), v: 4},
		{name: RawExcessRequests, window: storm, v: 112},
		{name: RawExcessPerRestart, window: storm, v: 112.0 / 3},
		// The simulation's own, −50 + 8, taken out: 112 + 42.
		{name: ExcessRequests, window: storm, v: 154},
		{name: ExcessPerRestart, window: storm, v: 154.0 / 3},
		{name: ExcessPerRestart, window: storm, labels: flow("kubelet"), v: 40},
		{name: ExcessPerRestart, window: storm, labels: flow("endpointslice-controller"), v: 10},
		{name: ExcessPerRestart, window: storm, labels: flow("kube-controller-manager"), v: 0},
		{name: ExcessPerRestart, window: storm, labels: flow("other"), v: 4.0 / 3},
		{name: ExcessPerRestart, window: storm, labels: flow("kwok"), v: -50.0 / 3},
		{name: ExcessPerRestart, window: storm, labels: flow("harness"), v: 8.0 / 3},
		// The baseline's charged rate is KCM's 1/s (the lease burst is
		// KWOK's), with a Poisson count's σ of 1: threshold 1 + 3·1,
		// exceeded by the three seconds of kubelets, not by the idle
		// tail's 1/s. On all requests the burst (rates 2, 32, 2) would
		// have set it at 54 and found none.
		{name: BurstThreshold, window: storm, v: 4},
		{name: BurstSeconds, window: storm, v: 3},
	})
	// The split adds up: the flows' excess is the raw excess, and the
	// flows not the simulation's are the key figure.
	all, charged := 0.0, 0.0
	for _, v := range out.Values {
		if v.Name == ExcessPerRestart && v.Labels[result.LabelFlow] != "" {
			all += v.Value
			if f := v.Labels[result.LabelFlow]; f != "kwok" && f != "harness" {
				charged += v.Value
			}
		}
	}
	if !measuretest.Approx(all, 112.0/3) || !measuretest.Approx(charged, 154.0/3) {
		t.Errorf("flows add up to %v (want the raw 37.33) and without the simulation to %v (want 51.33)", all, charged)
	}
	if len(warnings) > 0 {
		t.Errorf("warnings %q, want none", warnings)
	}
}

// TestAPIAccumulatorFlowsUndistinguished: with APF exempt every request is
// the exempt schema's; the key figure keeps the simulation's, and a
// warning says so.
func TestAPIAccumulatorFlowsUndistinguished(t *testing.T) {
	steps := []map[string]float64{{"exempt": 2}, {"exempt": 2}, {"exempt": 2}, {"exempt": 10}, {"exempt": 10}}
	out, warnings := accumulate(flowScrapes(steps), 2)
	raw, _ := out.Value(RawExcessPerRestart, result.WindowStorm)
	key, _ := out.Value(ExcessPerRestart, result.WindowStorm)
	if !measuretest.Approx(raw, 8) || !measuretest.Approx(key, raw) {
		t.Errorf("excess per restart %v, raw %v; want both 8", key, raw)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "were not told apart") {
		t.Errorf("warnings %q, want one saying the simulation's requests were not told apart", warnings)
	}
}
