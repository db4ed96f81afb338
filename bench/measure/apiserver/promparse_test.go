package apiserver

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/stormbench/stormbench/bench/measure/internal/measuretest"
)

// parse parses one scrape taken at the given time whose body tells its
// format; see decode.
func (p *metricsParser) parse(body []byte, at time.Time) (*sample, error) {
	return p.decode(body, "", at)
}

func TestIsProtoDelimited(t *testing.T) {
	text := "# HELP up Up.\n# TYPE up gauge\nup 1\n"
	tests := []struct {
		name string
		body []byte
		want bool
	}{
		{"text with comments", []byte(text), false},
		{"text without comments", []byte("up 1\n"), false},
		{"empty", nil, false},
		{"protobuf", toProto(t, []byte(text)), true},
		{"truncated protobuf", toProto(t, []byte(text))[:3], false},
	}
	for _, tt := range tests {
		if got := isProtoDelimited(tt.body); got != tt.want {
			t.Errorf("%s: isProtoDelimited = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestFilterKeepsOnlyWantedFamilies(t *testing.T) {
	in := strings.Join([]string{
		"# HELP go_goroutines Goroutines.",
		"# TYPE go_goroutines gauge",
		"go_goroutines 10",
		"# HELP etcd_request_duration_seconds Etcd latency.",
		"# TYPE etcd_request_duration_seconds histogram",
		`etcd_request_duration_seconds_bucket{operation="get",le="+Inf"} 3`,
		`etcd_request_duration_seconds_sum{operation="get"} 0.5`,
		`etcd_request_duration_seconds_count{operation="get"} 3`,
		"# some other comment",
		`apiserver_request_total_other{x="y"} 1`,
		"process_cpu_seconds_total 12.5",
	}, "\n")
	got := string(newMetricsParser().filter([]byte(in)))
	want := strings.Join([]string{
		"# HELP etcd_request_duration_seconds Etcd latency.",
		"# TYPE etcd_request_duration_seconds histogram",
		`etcd_request_duration_seconds_bucket{operation="get",le="+Inf"} 3`,
		`etcd_request_duration_seconds_sum{operation="get"} 0.5`,
		`etcd_request_duration_seconds_count{operation="get"} 3`,
		"process_cpu_seconds_total 12.5",
	}, "\n") + "\n"
	if got != want {
		t.Errorf("filter =\n%s\nwant\n%s", got, want)
	}
}

func TestDelta(t *testing.T) {
	req := seriesKey{fam: famRequests, a: "GET", b: "pods", d: "200"}
	other := seriesKey{fam: famRequests, a: "LIST", b: "pods", d: "200"}
	lat := seriesKey{fam: famRequestDuration, a: "get"}
	inf := math.Inf(1)
	h := func(c1, c2 float64) *bucketSample {
		return &bucketSample{bounds: []float64{1, inf}, cum: []float64{c1, c2}, sum: c2, count: c2}
	}
	mk := func(start float64, counters map[seriesKey]float64, hist *bucketSample) *sample {
		s := &sample{startTime: start, counters: counters, hists: map[seriesKey]*bucketSample{}}
		if hist != nil {
			s.hists[lat] = hist
		}
		return s
	}
	// t0 is a scrape time in seconds since the epoch; at sets a sample's.
	const t0 = 1796449715.0
	at := func(s *sample, sec float64) *sample {
		s.at = time.Unix(0, int64(sec*1e9))
		return s
	}
	tests := []struct {
		name      string
		prev, cur *sample
		want      map[seriesKey]float64
		wantHist  []float64
		wantReset bool
	}{
		{"increase", mk(1, map[seriesKey]float64{req: 10}, h(1, 2)), mk(1, map[seriesKey]float64{req: 15}, h(3, 5)),
			map[seriesKey]float64{req: 5}, []float64{2, 3}, false},
		{"new series counts from zero", mk(1, map[seriesKey]float64{req: 10}, nil), mk(1, map[seriesKey]float64{req: 10, other: 4}, h(1, 1)),
			map[seriesKey]float64{req: 0, other: 4}, []float64{1, 1}, false},
		{"decrease with no start time is a reset", mk(0, map[seriesKey]float64{req: 10, other: 3}, h(5, 9)), mk(0, map[seriesKey]float64{req: 2, other: 5}, h(1, 2)),
			map[seriesKey]float64{req: 2, other: 2}, []float64{1, 2}, true},
		// An overlapping scrape read these series before the previous one
		// did: no increment, and base keeps the previous values.
		{"decrease with the same start time is stale", mk(1, map[seriesKey]float64{req: 10, other: 3}, h(5, 9)), mk(1, map[seriesKey]float64{req: 2, other: 5}, h(1, 2)),
			map[seriesKey]float64{req: 0, other: 2}, []float64{0, 0}, false},
		{"a new start time resets everything", mk(1, map[seriesKey]float64{req: 10, other: 3}, h(5, 9)), mk(2, map[seriesKey]float64{req: 12, other: 5}, h(6, 10)),
			map[seriesKey]float64{req: 12, other: 5}, []float64{6, 10}, true},
		// process_start_time_seconds read through a btime that moved by a
		// second: the same process, counted as increments.
		{"a start time a second off, long before the last scrape, is the same process",
			at(mk(t0-600, map[seriesKey]float64{req: 10, other: 3}, h(5, 9)), t0), at(mk(t0-599, map[seriesKey]float64{req: 12, other: 5}, h(6, 10)), t0+1),
			map[seriesKey]float64{req: 2, other: 2}, []float64{1, 1}, false},
		{"a start time after the last scrape is a restart",
			at(mk(t0-600, map[seriesKey]float64{req: 10, other: 3}, h(5, 9)), t0), at(mk(t0+0.5, map[seriesKey]float64{req: 12, other: 5}, h(6, 10)), t0+1),
			map[seriesKey]float64{req: 12, other: 5}, []float64{6, 10}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, hists, reset, base, stale := delta(tt.prev, tt.cur)
			if reset != tt.wantReset {
				t.Errorf("reset = %v, want %v", reset, tt.wantReset)
			}
			if stale > 0 {
				if base == tt.cur || base.counters[req] != tt.prev.counters[req] || base.counters[other] != tt.cur.counters[other] || base.hists[lat] != tt.prev.hists[lat] {
					t.Errorf("base after %d stale series: %+v, want cur with the stale series' previous values", stale, base)
				}
				if tt.cur.counters[req] != 2 {
					t.Error("delta changed cur")
				}
			} else if base != tt.cur {
				t.Error("base is not cur with no stale series")
			}
			if len(got) != len(tt.want) {
				t.Errorf("deltas = %v, want %v", got, tt.want)
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("delta[%v] = %v, want %v", k, got[k], v)
				}
			}
			if hd := hists[lat]; hd == nil || hd.cum[0] != tt.wantHist[0] || hd.cum[1] != tt.wantHist[1] {
				t.Errorf("histogram delta = %+v, want cumulative %v", hd, tt.wantHist)
			}
		})
	}
}

func TestFamilyName(t *testing.T) {
	tests := []struct {
		name string
		msg  []byte
		want string
	}{
		{"name first", []byte{0x0a, 2, 'u', 'p', 0x18, 1}, "up"},
		// help (field 2) and type (field 3) before the name: still found.
		{"name after other fields", []byte{0x12, 1, 'h', 0x18, 1, 0x0a, 2, 'u', 'p'}, "up"},
		{"no name", []byte{0x18, 1}, ""},
		{"truncated name", []byte{0x0a, 5, 'u'}, ""},
		{"bad tag", []byte{0xff}, ""},
		{"empty", nil, ""},
	}
	for _, tt := range tests {
		if got := familyName(tt.msg); got != tt.want {
			t.Errorf("%s: familyName = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestParseProtoSkipsUnwantedFamilies: the protobuf path decodes only the
// families stormbench reads, and yields the same sample as the text path.
func TestParseProtoSkipsUnwantedFamilies(t *testing.T) {
	text := []byte(strings.Join([]string{
		"# TYPE go_goroutines gauge",
		"go_goroutines 10",
		"# TYPE apiserver_request_total counter",
		`apiserver_request_total{code="200",resource="pods",subresource="",verb="GET"} 7`,
		"# TYPE etcd_request_duration_seconds histogram",
		`etcd_request_duration_seconds_bucket{operation="get",type="pods",le="1"} 2`,
		`etcd_request_duration_seconds_bucket{operation="get",type="pods",le="+Inf"} 3`,
		`etcd_request_duration_seconds_sum{operation="get",type="pods"} 0.5`,
		`etcd_request_duration_seconds_count{operation="get",type="pods"} 3`,
		"# TYPE process_cpu_seconds_total counter",
		"process_cpu_seconds_total 12.5",
	}, "\n") + "\n")
	fromText, err := newMetricsParser().parse(text, measuretest.T0)
	if err != nil {
		t.Fatal(err)
	}
	body := toProto(t, text)
	fromProto, err := newMetricsParser().parse(body, measuretest.T0)
	if err != nil {
		t.Fatal(err)
	}
	if len(fromProto.counters) != 2 || len(fromProto.counters) != len(fromText.counters) {
		t.Fatalf("counters from protobuf %v, from text %v; want the 2 wanted ones", fromProto.counters, fromText.counters)
	}
	for k, v := range fromText.counters {
		if fromProto.counters[k] != v {
			t.Errorf("%v: protobuf %v, text %v", k, fromProto.counters[k], v)
		}
	}
	if len(fromProto.gauges) != len(fromText.gauges) || len(fromProto.hists) != len(fromText.hists) {
		t.Errorf("gauges/histograms from protobuf %d/%d, from text %d/%d", len(fromProto.gauges), len(fromProto.hists), len(fromText.gauges), len(fromText.hists))
	}
	if _, err := newMetricsParser().parse(body[:len(body)-2], measuretest.T0); err == nil {
		t.Error("a truncated protobuf body parsed without error")
	}
}

// TestDecodeFormat: protobuf delimited and text 0.0.4 take the fast paths
// (decode), every other format expfmt's decoder.
func TestDecodeFormat(t *testing.T) {
	text := []byte("# TYPE up gauge\nup 1\n")
	proto := toProto(t, text)
	tests := []struct {
		name        string
		body        []byte
		contentType string
		want        expfmt.FormatType
	}{
		{"promhttp protobuf", proto, "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited", expfmt.TypeProtoDelim},
		{"promhttp text", text, "text/plain; version=0.0.4; charset=utf-8; escaping=underscores", expfmt.TypeTextPlain},
		{"text without version", text, "text/plain; charset=utf-8", expfmt.TypeTextPlain},
		{"no Content-Type, protobuf body", proto, "", expfmt.TypeProtoDelim},
		{"no Content-Type, text body", text, "", expfmt.TypeTextPlain},
		{"OpenMetrics", text, "application/openmetrics-text; version=1.0.0; charset=utf-8", expfmt.TypeUnknown},
		{"text 1.0.0", text, "text/plain; version=1.0.0", expfmt.TypeUnknown},
		{"protobuf text encoding", text, "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=text", expfmt.TypeUnknown},
		{"unparsable", text, "text/plain; ;;", expfmt.TypeUnknown},
	}
	for _, tt := range tests {
		if got := decodeFormat(tt.body, tt.contentType).FormatType(); got != tt.want {
			t.Errorf("%s: decodeFormat = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestDecodeFormatsAgree: the fast paths and expfmt's decoder read the same
// sample from one scrape, whatever its exposition format.
func TestDecodeFormatsAgree(t *testing.T) {
	text, err := os.ReadFile(filepath.Join("testdata", "apiserver", "scrape-4.prom"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := newMetricsParser().decode(text, string(expfmt.NewFormat(expfmt.TypeTextPlain)), measuretest.T0)
	if err != nil {
		t.Fatal(err)
	}
	if len(want.counters) == 0 || len(want.hists) == 0 || len(want.gauges) == 0 || want.startTime == 0 {
		t.Fatalf("the text fast path read too little: %d counters, %d histograms, %d gauges, start time %v",
			len(want.counters), len(want.hists), len(want.gauges), want.startTime)
	}
	tests := []struct {
		name        string
		body        []byte
		contentType string
	}{
		{"protobuf fast path", toProto(t, text), string(expfmt.NewFormat(expfmt.TypeProtoDelim))},
		{"OpenMetrics through expfmt", toOpenMetrics(t, text), string(expfmt.NewFormat(expfmt.TypeOpenMetrics))},
		{"text 1.0.0 through expfmt", text, "text/plain; version=1.0.0; charset=utf-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := newMetricsParser().decode(tt.body, tt.contentType, measuretest.T0)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.counters, want.counters) || !reflect.DeepEqual(got.gauges, want.gauges) ||
				!reflect.DeepEqual(got.hists, want.hists) || got.startTime != want.startTime || got.skipped != want.skipped {
				t.Errorf("sample differs from the text fast path's: %d/%d/%d counters/gauges/histograms, want %d/%d/%d",
					len(got.counters), len(got.gauges), len(got.hists), len(want.counters), len(want.gauges), len(want.hists))
			}
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	om := string(expfmt.NewFormat(expfmt.TypeOpenMetrics))
	_, err := newMetricsParser().decode([]byte("apiserver_request_total{code=\"200\" 1\n"), om, measuretest.T0)
	if err == nil || !strings.Contains(err.Error(), "openmetrics") {
		t.Errorf("a malformed OpenMetrics body: error %v, want one naming the format", err)
	}
	_, err = newMetricsParser().decode([]byte("apiserver_request_total{code=\"200\" 1\n"), "text/plain; version=0.0.4", measuretest.T0)
	if err == nil || !strings.Contains(err.Error(), "text") {
		t.Errorf("a malformed text body: error %v, want one naming the format", err)
	}
}

// TestFamiliesCoverEveryFamily: the families map, the one list of names,
// names every family exactly once.
func TestFamiliesCoverEveryFamily(t *testing.T) {
	names := map[family][]string{}
	for name, fam := range families {
		names[fam] = append(names[fam], name)
	}
	for fam := famNone + 1; fam <= famFlowWait; fam++ {
		if len(names[fam]) != 1 {
			t.Errorf("family %d has names %q, want one", fam, names[fam])
		}
	}
	if len(names[famNone]) != 0 {
		t.Errorf("names %q map to no family", names[famNone])
	}
	p := newMetricsParser()
	for name := range families {
		if !p.keep[name] {
			t.Errorf("the line filter drops %s", name)
		}
	}
}
