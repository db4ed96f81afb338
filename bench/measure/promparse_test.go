package measure

import (
	"math"
	"strings"
	"testing"
)

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
		{"decrease is a reset", mk(1, map[seriesKey]float64{req: 10, other: 3}, h(5, 9)), mk(1, map[seriesKey]float64{req: 2, other: 5}, h(1, 2)),
			map[seriesKey]float64{req: 2, other: 2}, []float64{1, 2}, true},
		{"a new start time resets everything", mk(1, map[seriesKey]float64{req: 10, other: 3}, h(5, 9)), mk(2, map[seriesKey]float64{req: 12, other: 5}, h(6, 10)),
			map[seriesKey]float64{req: 12, other: 5}, []float64{6, 10}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, hists, reset := delta(tt.prev, tt.cur)
			if reset != tt.wantReset {
				t.Errorf("reset = %v, want %v", reset, tt.wantReset)
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
