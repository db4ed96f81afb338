package apiserver

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stormbench/stormbench/bench/measure"
	"github.com/stormbench/stormbench/bench/measure/internal/measuretest"
	testingclock "k8s.io/utils/clock/testing"
)

// bigMetrics generates a kube-apiserver /metrics body shaped like that of a
// control plane serving a 1,000-node cluster: every built-in resource with
// its verbs, codes and scopes, the latency, SLI and response-size
// histograms, etcd, APF, watch cache and Go runtime families. Its size (about
// 91,000 lines, 15 MB as text, 2.5 MB as protobuf) is what such a server
// exposes; the node count shows in
// the values. tick scales the counters so consecutive scrapes differ.
func bigMetrics(tick int) []byte {
	resources := []string{"pods", "nodes", "services", "endpoints", "endpointslices", "configmaps", "secrets", "leases",
		"events", "serviceaccounts", "namespaces", "persistentvolumeclaims", "persistentvolumes", "replicasets",
		"deployments", "statefulsets", "daemonsets", "jobs", "cronjobs", "csidrivers", "csinodes", "runtimeclasses",
		"storageclasses", "volumeattachments", "priorityclasses", "poddisruptionbudgets", "horizontalpodautoscalers",
		"networkpolicies", "ingresses", "ingressclasses", "roles", "rolebindings", "clusterroles", "clusterrolebindings",
		"customresourcedefinitions", "apiservices", "validatingwebhookconfigurations", "mutatingwebhookconfigurations",
		"flowschemas", "prioritylevelconfigurations", "certificatesigningrequests", "controllerrevisions",
		"resourcequotas", "limitranges", "podtemplates", "replicationcontrollers", "tokenreviews",
		"subjectaccessreviews", "selfsubjectaccessreviews", "leasecandidates", "resourceclaims", "resourceslices",
		"deviceclasses", "validatingadmissionpolicies", "validatingadmissionpolicybindings", "clustertrustbundles",
		"podcertificaterequests", "storageversionmigrations", "ipaddresses", "servicecidrs"}
	verbs := []string{"GET", "LIST", "WATCH", "POST", "PUT", "PATCH", "DELETE"}
	codes := []string{"200", "201", "404", "409", "429", "500"}
	scopes := []string{"namespace", "cluster"}
	latency := []string{"0.005", "0.025", "0.05", "0.1", "0.2", "0.4", "0.6", "0.8", "1", "1.25", "1.5", "2", "3", "4", "5", "6", "8", "10", "15", "20", "30", "45", "60", "+Inf"}
	sizes := []string{"1000", "10000", "100000", "1e+06", "1e+07", "1e+08", "1e+09", "+Inf"}
	var b bytes.Buffer
	b.Grow(12 << 20)
	n := 1000 * (tick + 1)
	hist := func(name, labels string, bounds []string, base int) {
		for i, le := range bounds {
			fmt.Fprintf(&b, "%s_bucket{%s,le=%q} %d\n", name, labels, le, base*(i+1)/len(bounds))
		}
		fmt.Fprintf(&b, "%s_sum{%s} %d.25\n%s_count{%s} %d\n", name, labels, base/3, name, labels, base)
	}
	head := func(name, typ string) {
		fmt.Fprintf(&b, "# HELP %s [STABLE] Generated for the scrape benchmark.\n# TYPE %s %s\n", name, name, typ)
	}
	head("apiserver_request_total", "counter")
	for _, r := range resources {
		for _, v := range verbs {
			for _, s := range scopes {
				for _, c := range codes {
					fmt.Fprintf(&b, "apiserver_request_total{code=%q,component=\"apiserver\",dry_run=\"\",group=\"\",resource=%q,scope=%q,subresource=\"\",verb=%q,version=\"v1\"} %d\n", c, r, s, v, n)
				}
			}
		}
	}
	for _, fam := range []string{"apiserver_request_duration_seconds", "apiserver_request_sli_duration_seconds", "apiserver_request_slo_duration_seconds"} {
		head(fam, "histogram")
		for _, r := range resources {
			for _, v := range verbs {
				for _, s := range scopes {
					hist(fam, fmt.Sprintf("component=\"apiserver\",dry_run=\"\",group=\"\",resource=%q,scope=%q,subresource=\"\",verb=%q,version=\"v1\"", r, s, v), latency, n)
				}
			}
		}
	}
	head("apiserver_response_sizes", "histogram")
	for _, r := range resources {
		for _, v := range verbs {
			hist("apiserver_response_sizes", fmt.Sprintf("component=\"apiserver\",group=\"\",resource=%q,scope=\"cluster\",subresource=\"\",verb=%q,version=\"v1\"", r, v), sizes, n)
		}
	}
	head("etcd_request_duration_seconds", "histogram")
	for _, r := range resources {
		for _, op := range []string{"get", "list", "listWithCount", "create", "update", "delete", "count", "watch"} {
			hist("etcd_request_duration_seconds", fmt.Sprintf("group=\"\",operation=%q,resource=%q", op, r), latency, n)
		}
	}
	head("apiserver_storage_objects", "gauge")
	for _, r := range resources {
		fmt.Fprintf(&b, "apiserver_storage_objects{resource=%q} %d\n", r, 30*n)
	}
	levels := []string{"exempt", "system", "node-high", "leader-election", "workload-high", "workload-low", "global-default", "catch-all"}
	schemas := []string{"exempt", "probes", "system-leader-election", "endpoint-controller", "workload-leader-election", "system-node-high", "system-nodes", "kube-controller-manager", "kube-scheduler", "kube-system-service-accounts", "service-accounts", "global-default", "catch-all"}
	head("apiserver_flowcontrol_dispatched_requests_total", "counter")
	for _, l := range levels {
		for _, s := range schemas {
			fmt.Fprintf(&b, "apiserver_flowcontrol_dispatched_requests_total{flow_schema=%q,priority_level=%q} %d\n", s, l, n)
		}
	}
	head("apiserver_flowcontrol_current_inqueue_requests", "gauge")
	for _, l := range levels {
		for _, s := range schemas {
			fmt.Fprintf(&b, "apiserver_flowcontrol_current_inqueue_requests{flow_schema=%q,priority_level=%q} %d\n", s, l, tick%3)
		}
	}
	head("apiserver_flowcontrol_request_wait_duration_seconds", "histogram")
	for _, l := range levels {
		for _, s := range schemas {
			hist("apiserver_flowcontrol_request_wait_duration_seconds", fmt.Sprintf("execute=\"true\",flow_schema=%q,priority_level=%q", s, l), latency, n)
		}
	}
	head("apiserver_watch_events_total", "counter")
	head("apiserver_watch_events_sizes", "histogram")
	for _, r := range resources {
		fmt.Fprintf(&b, "apiserver_watch_events_total{group=\"\",resource=%q,version=\"v1\"} %d\n", r, 1000*n)
		hist("apiserver_watch_events_sizes", fmt.Sprintf("group=\"\",resource=%q,version=\"v1\"", r), sizes, n)
	}
	head("apiserver_longrunning_requests", "gauge")
	for _, r := range resources {
		fmt.Fprintf(&b, "apiserver_longrunning_requests{component=\"apiserver\",group=\"\",resource=%q,scope=\"cluster\",subresource=\"\",verb=\"WATCH\",version=\"v1\"} %d\n", r, 500)
	}
	head("apiserver_current_inflight_requests", "gauge")
	fmt.Fprintf(&b, "apiserver_current_inflight_requests{request_kind=\"mutating\"} %d\napiserver_current_inflight_requests{request_kind=\"readOnly\"} %d\n", 20+tick%5, 50+tick%7)
	head("go_gc_duration_seconds", "summary")
	for _, q := range []string{"0", "0.25", "0.5", "0.75", "1"} {
		fmt.Fprintf(&b, "go_gc_duration_seconds{quantile=%q} 0.0001\n", q)
	}
	fmt.Fprintf(&b, "go_gc_duration_seconds_sum 1.5\ngo_gc_duration_seconds_count %d\n", n)
	head("process_cpu_seconds_total", "counter")
	fmt.Fprintf(&b, "process_cpu_seconds_total %d.5\n", 100+tick)
	head("process_resident_memory_bytes", "gauge")
	fmt.Fprintf(&b, "process_resident_memory_bytes %d\n", 2<<30)
	head("process_start_time_seconds", "gauge")
	b.WriteString("process_start_time_seconds 1.7e+09\n")
	return b.Bytes()
}

// BenchmarkScrapeParse is the cost of parsing one scrape of a big API
// server's /metrics, served as protobuf (what MetricsAccept gets), into the
// series stormbench uses.
func BenchmarkScrapeParse(b *testing.B) {
	data := toProto(b, bigMetrics(0))
	p := newMetricsParser()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.parse(data, measuretest.T0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScrapeParseText is the same scrape served in the text format
// (a source that ignores the Accept header): line filter, then expfmt.
func BenchmarkScrapeParseText(b *testing.B) {
	data := bigMetrics(0)
	p := newMetricsParser()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ReportMetric(float64(bytes.Count(data, []byte("\n"))), "lines")
	for b.Loop() {
		if _, err := p.parse(data, measuretest.T0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScrapeParseUnfiltered parses the same body with expfmt alone, to
// show what the line filter saves.
func BenchmarkScrapeParseUnfiltered(b *testing.B) {
	data := bigMetrics(0)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parser.TextToMetricFamilies(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAPIServerScrape is the whole per-scrape cost of the apiserver
// measurement on a big /metrics: filter, parse, reset-aware deltas, window
// accumulation and the time-series point. At a 1 s interval, ns/op ÷ 1e9 is
// the fraction of one core it takes. Bodies are protobuf, as served.
func BenchmarkAPIServerScrape(b *testing.B) {
	bodies := [][]byte{toProto(b, bigMetrics(0)), toProto(b, bigMetrics(1))}
	clk := testingclock.NewFakeClock(measuretest.T0)
	i := 0
	// Alternate two bodies of one process; the second one's counters are
	// higher, and going back to the first makes every series stale (as an
	// overlapping scrape may), so both delta paths are costed.
	src := measure.MetricsSource{Component: measure.ComponentAPIServer, Fetch: fetchBytes(func(context.Context) ([]byte, string, error) {
		i++
		return bodies[i%2], "", nil
	})}
	m, err := New(Options{Interval: time.Second, Baseline: time.Second})
	if err != nil {
		b.Fatal(err)
	}
	if err := m.setup(&measure.Env{Clock: clk, Scrapers: []measure.MetricsSource{src}}); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if err := m.fold(m.comps[0], m.comps[0].scrape(ctx)); err != nil {
		b.Fatal(err)
	}
	m.MarkStormStart(clk.Now())
	b.SetBytes(int64(len(bodies[0])))
	b.ReportAllocs()
	for b.Loop() {
		clk.Step(time.Second)
		if err := m.fold(m.comps[0], m.comps[0].scrape(ctx)); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if m.acc.storm.counters[seriesKey{fam: famRequests, a: "LIST", b: "pods", c: "", d: "200"}] == 0 {
		b.Fatal("the benchmark's scrapes produced no request deltas")
	}
}

// BenchmarkAPIAccumulatorAdd is the accumulator's share of
// BenchmarkAPIServerScrape: reset-aware deltas, window accumulation and the
// time-series point of one big scrape, without the fetch and the parse.
func BenchmarkAPIAccumulatorAdd(b *testing.B) {
	var samples []*sample
	for tick := range 2 {
		s, err := newMetricsParser().parse(toProto(b, bigMetrics(tick)), measuretest.T0)
		if err != nil {
			b.Fatal(err)
		}
		samples = append(samples, s)
	}
	var warnings caveats
	acc := newAPIAccumulator(measuretest.T0, time.Second, time.Second, &warnings)
	acc.Add(measure.ComponentAPIServer, samples[0])
	acc.MarkStormStart(measuretest.T0)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		// Alternate the two samples a second apart; going back to the
		// first is a counter reset, so both delta paths are costed.
		i++
		s := samples[i%2]
		s.at = measuretest.T0.Add(time.Duration(i) * time.Second)
		acc.Add(measure.ComponentAPIServer, s)
	}
	b.StopTimer()
	if acc.storm.counters[seriesKey{fam: famRequests, a: "LIST", b: "pods", c: "", d: "200"}] == 0 {
		b.Fatal("the benchmark's samples produced no request deltas")
	}
}

// TestBigMetricsParses keeps the benchmark fixture honest: it parses, and
// the parser extracts the expected series from it.
func TestBigMetricsParses(t *testing.T) {
	text := bigMetrics(0)
	s, err := newMetricsParser().parse(text, measuretest.T0)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := newMetricsParser().parse(toProto(t, text), measuretest.T0)
	if err != nil {
		t.Fatal(err)
	}
	if len(sp.counters) != len(s.counters) || len(sp.hists) != len(s.hists) || len(sp.gauges) != len(s.gauges) {
		t.Errorf("protobuf and text parses differ: %d/%d/%d vs %d/%d/%d series",
			len(sp.counters), len(sp.hists), len(sp.gauges), len(s.counters), len(s.hists), len(s.gauges))
	}
	if got := s.counters[seriesKey{fam: famRequests, a: "LIST", b: "pods", c: "", d: "429"}]; got != 2000 {
		t.Errorf("LIST pods 429 = %v, want 2000 (1000 per scope)", got)
	}
	if h := s.hists[seriesKey{fam: famRequestDuration, a: ClassList}]; h == nil || h.count != 120000 {
		t.Errorf("LIST latency histogram = %+v, want 60 resources × 2 scopes × 1000", h)
	}
	if s.skipped != 0 {
		t.Errorf("%d series skipped", s.skipped)
	}
}
