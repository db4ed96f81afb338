package result

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stormbench/stormbench/bench/testutil"
)

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	testutil.Golden(t, name, got)
}

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// hdrOf records the given durations into a histogram.
func hdrOf(t *testing.T, name, window string, labels map[string]string, ds ...time.Duration) Histogram {
	t.Helper()
	h := NewHDR(time.Hour)
	for _, d := range ds {
		if err := h.RecordValue(d.Microseconds()); err != nil {
			t.Fatal(err)
		}
	}
	out, err := FromHDR(name, window, labels, h)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

var durationBounds = []float64{0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1, math.Inf(1)}

// fixture is a fixed two-variant result covering every summary row.
func fixture(t *testing.T) *Result {
	t.Helper()
	variant := func(name string, gate bool, flipsDown, writes float64, recov []time.Duration) VariantRun {
		storm := t0.Add(20 * time.Second)
		end := storm.Add(2 * time.Minute)
		api := Measurement{
			Name: MeasurementAPIServer,
			Windows: []Window{
				{Name: WindowBaseline, Start: t0.Add(10 * time.Second), End: storm},
				{Name: WindowStorm, Start: storm, End: end},
			},
			Values: []Value{
				{Name: APIRequests, Window: WindowStorm, Unit: UnitRequests, Value: 12345},
				{Name: APIRequests, Window: WindowBaseline, Unit: UnitRequests, Value: 400},
				{Name: APIRequests, Window: WindowStorm, Unit: UnitRequests, Value: 300,
					Labels: Labels(LabelVerb, "LIST", LabelResource, "pods", LabelSubresource, "")},
				{Name: APIRequestRatePeak, Window: WindowStorm, Unit: UnitRequestsPerSecond, Value: 812.5},
				{Name: APIBurstSeconds, Window: WindowStorm, Unit: UnitSeconds, Value: 14},
				{Name: APIExcessPerRestart, Window: WindowStorm, Unit: UnitRequests, Value: 98.25},
				{Name: APIThrottled, Window: WindowStorm, Unit: UnitRequests, Value: 3},
				{Name: APIExcessPerRestart, Window: WindowStorm, Unit: UnitRequests, Value: 3.5,
					Labels: Labels(LabelVerb, "PUT", LabelResource, "endpoints", LabelSubresource, "")},
				{Name: APIExcessPerRestart, Window: WindowStorm, Unit: UnitRequests, Value: 2,
					Labels: Labels(LabelVerb, "PUT", LabelResource, "deployments", LabelSubresource, "status")},
				{Name: APIExcessPerRestart, Window: WindowStorm, Unit: UnitRequests, Value: 1.5,
					Labels: Labels(LabelVerb, "PUT", LabelResource, "replicasets", LabelSubresource, "status")},
				// Not a status write: not counted.
				{Name: APIExcessPerRestart, Window: WindowStorm, Unit: UnitRequests, Value: 9,
					Labels: Labels(LabelVerb, "PUT", LabelResource, "deployments", LabelSubresource, "")},
				{Name: APICPUSeconds, Window: WindowStorm, Unit: UnitSeconds, Value: 40, Labels: Labels(LabelComponent, "kube-apiserver")},
				// 150 slots: 140 scrapes, 4 of them failed; 10 slots skipped.
				{Name: APIScrapesScheduled, Unit: UnitCount, Value: 150, Labels: Labels(LabelComponent, "kube-apiserver")},
				{Name: APIScrapes, Unit: UnitCount, Value: 140, Labels: Labels(LabelComponent, "kube-apiserver")},
				{Name: APIScrapeFailures, Unit: UnitCount, Value: 4, Labels: Labels(LabelComponent, "kube-apiserver")},
				{Name: APIScrapeMaxGap, Unit: UnitSeconds, Value: 7.5, Labels: Labels(LabelComponent, "kube-apiserver")},
				{Name: APIScrapes, Unit: UnitCount, Value: 1, Labels: Labels(LabelComponent, "etcd")},
				{Name: APIFlowInqueueMax, Window: WindowStorm, Unit: UnitCount, Value: 12, Labels: Labels(LabelPriorityLevel, "system", LabelFlowSchema, "system-nodes")},
				{Name: APIFlowInqueueMax, Window: WindowStorm, Unit: UnitCount, Value: 30, Labels: Labels(LabelPriorityLevel, "workload-high", LabelFlowSchema, "kube-system-service-accounts")},
				{Name: APIFlowInqueueMax, Window: WindowBaseline, Unit: UnitCount, Value: 99, Labels: Labels(LabelPriorityLevel, "system", LabelFlowSchema, "system-nodes")},
			},
			Histograms: []Histogram{
				FromBuckets(APIRequestDuration, WindowStorm, Labels(LabelClass, ClassMutating), durationBounds,
					[]float64{10, 50, 80, 95, 99, 100, 100, 100, 100, 100}, 4.2),
				FromBuckets(APIRequestDuration, WindowBaseline, Labels(LabelClass, ClassMutating), durationBounds,
					[]float64{90, 100, 100, 100, 100, 100, 100, 100, 100, 100}, 0.3),
				FromBuckets(APIRequestDuration, WindowStorm, Labels(LabelClass, ClassList), durationBounds,
					[]float64{0, 0, 10, 20, 40, 60, 80, 90, 95, 100}, 48),
				// The worst p99 wait is system-nodes' (all of it in the 4th
				// bucket), though kube-system-service-accounts queued more.
				FromBuckets(APIFlowWait, WindowStorm, Labels(LabelPriorityLevel, "system", LabelFlowSchema, "system-nodes"), durationBounds,
					[]float64{0, 0, 0, 10, 10, 10, 10, 10, 10, 10}, 1),
				FromBuckets(APIFlowWait, WindowStorm, Labels(LabelPriorityLevel, "workload-high", LabelFlowSchema, "kube-system-service-accounts"), durationBounds,
					[]float64{20, 30, 30, 30, 30, 30, 30, 30, 30, 30}, 0.1),
			},
			Series: []Series{{Name: SeriesRequestRate, Unit: UnitRequestsPerSecond, Start: t0,
				Points: []Point{{T: 1, V: 40}, {T: 2, V: 41.5}, {T: 4, V: 812.5}}}},
			Warnings: []string{"scrape of kube-apiserver at 12:00:03 failed: connection refused"},
		}
		slices := Measurement{
			Name: MeasurementEndpointSlices,
			Values: []Value{
				{Name: SliceWrites, Window: WindowStorm, Unit: UnitCount, Value: writes},
				{Name: SliceReadyFlips, Window: WindowStorm, Unit: UnitCount, Value: flipsDown, Labels: Labels(LabelDirection, DirectionReadyToNot)},
				{Name: SliceReadyFlips, Window: WindowStorm, Unit: UnitCount, Value: flipsDown, Labels: Labels(LabelDirection, DirectionNotToReady)},
				{Name: SliceNotReadyPeak, Window: WindowStorm, Unit: UnitCount, Value: flipsDown / 2},
				{Name: SliceNotReadySeconds, Window: WindowStorm, Unit: UnitEndpointSeconds, Value: flipsDown * 7.5},
				{Name: SliceOutageSeconds, Window: WindowStorm, Unit: UnitSeconds, Value: flipsDown / 10},
				{Name: SliceServicesOutage, Window: WindowStorm, Unit: UnitCount, Value: math.Min(flipsDown, 1)},
			},
		}
		rec := Measurement{
			Name: MeasurementRecovery,
			Histograms: []Histogram{
				hdrOf(t, RecoveryNode, WindowStorm, nil, recov...),
				hdrOf(t, RecoveryStorm, WindowStorm, nil, recov[len(recov)-1]+3*time.Second),
			},
			Values: []Value{
				{Name: HealthyLeaseNodes, Window: WindowStorm, Unit: UnitCount, Value: 900},
				{Name: HealthyLeaseLateNodes, Window: WindowStorm, Unit: UnitCount, Value: 37},
				{Name: RecoveryUnattributed, Window: WindowStorm, Unit: UnitCount, Value: 4, Labels: Labels(LabelKind, "node")},
				{Name: RecoveryUnattributed, Window: WindowStorm, Unit: UnitCount, Value: 120, Labels: Labels(LabelKind, "pod")},
			},
		}
		if flipsDown > 0 {
			rec.Histograms = append(rec.Histograms, hdrOf(t, RecoveryPod, WindowStorm, nil, recov[0]+2*time.Second, recov[0]+5*time.Second))
		}
		tool := Measurement{
			Name: measurementStorm,
			Values: []Value{
				{Name: "stormbenchCPUSeconds", Window: WindowStorm, Unit: UnitSeconds, Value: 10},
				{Name: "stormbenchRSSGrowthPerRestartBytes", Window: WindowStorm, Unit: UnitBytes, Value: 300 << 10},
			},
		}
		// 100 restarts: 5 watch-lists each, plus a LIST and a WATCH of
		// secrets on some; the harness's own requests are not the kubelets'.
		cl := Measurement{
			Name: MeasurementClientLatency,
			Values: []Value{
				{Name: "requests", Unit: UnitRequests, Value: 500, Labels: Labels("source", "kubelet", "verb", "WATCH", "resource", "pods")},
				{Name: "requests", Unit: UnitRequests, Value: 30, Labels: Labels("source", "kubelet", "verb", "WATCH", "resource", "secrets")},
				{Name: "requests", Unit: UnitRequests, Value: 30, Labels: Labels("source", "kubelet", "verb", "LIST", "resource", "secrets")},
				{Name: "requests", Unit: UnitRequests, Value: 999, Labels: Labels("source", "harness", "verb", "LIST", "resource", "pods")},
			},
		}
		return VariantRun{
			Variant: name, FeatureGates: map[string]bool{"ChangeContainerStatusOnKubeletRestart": gate},
			Start: t0, StormStart: storm, End: end, Restarts: 100, Complete: true,
			Measurements: []Measurement{api, slices, rec, tool, cl},
		}
	}
	legacy := variant("legacy", true, 200, 340, []time.Duration{11 * time.Second, 12 * time.Second, 12500 * time.Millisecond, 14 * time.Second})
	preserve := variant("preserve", false, 0, 0, []time.Duration{11 * time.Second, 11800 * time.Millisecond, 13 * time.Second})
	preserve.Measurements[0].Error = "scraping kube-apiserver: context deadline exceeded"
	return &Result{
		SchemaVersion: SchemaVersion,
		Complete:      true,
		Run: Run{
			ID: "sb-1a2b3c", ToolVersion: "v0.1.0", GitRevision: "34746ab", Start: t0, End: t0.Add(10 * time.Minute),
			Cluster: Cluster{Embedded: true, Versions: map[string]string{"kube-apiserver": "v1.36.3", "etcd": "3.6.8"},
				Settings: Settings{NodeMonitorGracePeriod: Duration(50 * time.Second), NodeLeaseDuration: Duration(40 * time.Second),
					NodeStatusUpdateFrequency: Duration(10 * time.Second)}},
			Fleet:   Fleet{Nodes: 1000, Pods: 30000, Services: 300},
			Seed:    42,
			Profile: json.RawMessage(`{"apiVersion":"stormbench.io/v1alpha1","kind":"StormProfile"}`),
		},
		Variants: []VariantRun{legacy, preserve},
	}
}

func TestSummaryGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteSummary(&buf, fixture(t)); err != nil {
		t.Fatal(err)
	}
	golden(t, "summary.golden", buf.Bytes())
}

func TestSummaryIncompleteAndRepetitions(t *testing.T) {
	r := fixture(t)
	r.Complete = false
	r.Variants[1].Variant = "legacy"
	r.Variants[1].Repetition = 1
	r.Variants[1].Measurements = nil
	r.Errors = []string{"interrupted"}
	var buf bytes.Buffer
	if err := WriteSummary(&buf, r); err != nil {
		t.Fatal(err)
	}
	golden(t, "summary-incomplete.golden", buf.Bytes())
}

func TestSchemaGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := Encode(&buf, fixture(t)); err != nil {
		t.Fatal(err)
	}
	golden(t, "result.golden.json", buf.Bytes())

	// The golden document must read back to the same document.
	r, err := Decode(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatalf("Decode(golden): %v", err)
	}
	var again bytes.Buffer
	if err := Encode(&again, r); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Errorf("encode(decode(doc)) != doc:\n%s", again.String())
	}
}

func TestDecodeRejects(t *testing.T) {
	valid, err := json.Marshal(fixture(t))
	if err != nil {
		t.Fatal(err)
	}
	edit := func(f func(m map[string]any)) string {
		var m map[string]any
		if err := json.Unmarshal(valid, &m); err != nil {
			t.Fatal(err)
		}
		f(m)
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	variant0 := func(m map[string]any) map[string]any { return m["variants"].([]any)[0].(map[string]any) }
	tests := []struct {
		name string
		doc  string
		want []string
	}{
		{"not json", "{", []string{"decoding result"}},
		{"no schemaVersion", `{"complete":true}`, []string{"schemaVersion: Required value"}},
		{"future schemaVersion", edit(func(m map[string]any) { m["schemaVersion"] = SchemaVersion + 1 }),
			[]string{"schemaVersion: Unsupported value: 3", "reads schema versions 1 to 2"}},
		{"unknown field", edit(func(m map[string]any) { m["colour"] = "blue" }), []string{`unknown field "colour"`}},
		{"missing required fields", edit(func(m map[string]any) {
			run := m["run"].(map[string]any)
			delete(run, "toolVersion")
			delete(run, "end")
			delete(variant0(m), "variant")
		}), []string{"run.toolVersion: Required value", "run.end: Required value", "variants[0].variant: Required value"}},
		{"corrupt hdr", edit(func(m map[string]any) {
			h := variant0(m)["measurements"].([]any)[2].(map[string]any)["histograms"].([]any)[0].(map[string]any)
			h["hdr"] = "HISTFAAAAB"
		}), []string{"variants[0].measurements[2].histograms[0].hdr: Invalid value"}},
		{"truncated hdr", edit(func(m map[string]any) {
			h := variant0(m)["measurements"].([]any)[2].(map[string]any)["histograms"].([]any)[0].(map[string]any)
			h["hdr"] = h["hdr"].(string)[:12]
		}), []string{"histograms[0].hdr: Invalid value"}},
		{"buckets without +Inf", edit(func(m map[string]any) {
			h := variant0(m)["measurements"].([]any)[0].(map[string]any)["histograms"].([]any)[0].(map[string]any)
			bs := h["buckets"].([]any)
			h["buckets"] = bs[:len(bs)-1]
		}), []string{"histograms[0].buckets: Invalid value", "+Inf"}},
		{"duplicate measurement", edit(func(m map[string]any) {
			ms := variant0(m)["measurements"].([]any)
			variant0(m)["measurements"] = append(ms, ms[0])
		}), []string{"variants[0].measurements[5].name: Duplicate value"}},
		{"negative counter", edit(func(m map[string]any) {
			v := variant0(m)["measurements"].([]any)[0].(map[string]any)["values"].([]any)[0].(map[string]any)
			v["value"] = -1e308
		}), []string{"variants[0].measurements[0].values[0].value: Invalid value", "cannot be negative"}},
		{"bad point", edit(func(m map[string]any) {
			s := variant0(m)["measurements"].([]any)[0].(map[string]any)["series"].([]any)[0].(map[string]any)
			s["points"] = []any{[]any{1, 2, 3}}
		}), []string{"want [t, v]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode(strings.NewReader(tt.doc))
			if err == nil {
				t.Fatal("Decode accepted an invalid document")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "result.json")
	r := fixture(t)
	if err := WriteFile(path, r, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	err := WriteFile(path, r, WriteOptions{})
	if !errors.Is(err, os.ErrExist) {
		t.Fatalf("second WriteFile without force: got %v, want an error wrapping os.ErrExist", err)
	}
	r.Complete = false
	if err := WriteFile(path, r, WriteOptions{Force: true}); err != nil {
		t.Fatalf("WriteFile with force: %v", err)
	}
	got, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Complete {
		t.Error("forced rewrite did not replace the file")
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("WriteFile left %d files behind, want 1", len(entries))
	}
	// An invalid document is never written.
	r.Run.ToolVersion = ""
	if err := WriteFile(filepath.Join(dir, "bad.json"), r, WriteOptions{}); err == nil {
		t.Error("WriteFile wrote an invalid document")
	}
	if _, err := os.Stat(filepath.Join(dir, "bad.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("invalid document left a file: %v", err)
	}
}

func TestSummaryRelaxedHeartbeats(t *testing.T) {
	tests := []struct {
		factor float64
		want   string // "" means no note
	}{
		{0, ""},
		{1, ""},
		{5, "relaxed heartbeats: heartbeatFactor 5 (3m20s leases, status every 50s, 4m10s grace period); not a fleet at kubelet timing\n"},
	}
	for _, tt := range tests {
		r := fixture(t)
		s := &r.Run.Cluster.Settings
		s.HeartbeatFactor = tt.factor
		s.NodeLeaseDuration = Duration(200 * time.Second)
		s.NodeStatusUpdateFrequency = Duration(50 * time.Second)
		s.NodeMonitorGracePeriod = Duration(250 * time.Second)
		var buf bytes.Buffer
		if err := WriteSummary(&buf, r); err != nil {
			t.Fatal(err)
		}
		has := strings.Contains(buf.String(), "relaxed heartbeats")
		if has != (tt.want != "") || (tt.want != "" && !strings.Contains(buf.String(), tt.want)) {
			t.Errorf("factor %g: summary\n%s\nwant note %q", tt.factor, buf.String(), tt.want)
		}
	}
}
