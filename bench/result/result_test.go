package result_test

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

	"github.com/stormbench/stormbench/bench/measure/apiserver"
	"github.com/stormbench/stormbench/bench/measure/churn"
	"github.com/stormbench/stormbench/bench/measure/clientlatency"
	"github.com/stormbench/stormbench/bench/measure/recovery"
	"github.com/stormbench/stormbench/bench/measure/self"
	"github.com/stormbench/stormbench/bench/result"
	"github.com/stormbench/stormbench/bench/testutil"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// hdrOf records the given durations into a histogram.
func hdrOf(t *testing.T, name, window string, labels map[string]string, ds ...time.Duration) result.Histogram {
	t.Helper()
	h := result.NewHDR(time.Hour)
	for _, d := range ds {
		if err := h.RecordValue(d.Microseconds()); err != nil {
			t.Fatal(err)
		}
	}
	out, err := result.FromHDR(name, window, labels, h)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

var durationBounds = []float64{0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1, math.Inf(1)}

// fixture is a fixed two-variant result covering every summary row.
func fixture(t *testing.T) *result.Result {
	t.Helper()
	variant := func(name string, gate bool, flipsDown, writes float64, recov []time.Duration) result.VariantRun {
		storm := t0.Add(20 * time.Second)
		end := storm.Add(2 * time.Minute)
		api := result.Measurement{
			Name: apiserver.Name,
			Windows: []result.Window{
				{Name: result.WindowBaseline, Start: t0.Add(10 * time.Second), End: storm},
				{Name: result.WindowStorm, Start: storm, End: end},
			},
			Values: []result.Value{
				{Name: apiserver.Requests, Window: result.WindowStorm, Unit: result.UnitRequests, Value: 12345},
				{Name: apiserver.Requests, Window: result.WindowBaseline, Unit: result.UnitRequests, Value: 400},
				{Name: apiserver.Requests, Window: result.WindowStorm, Unit: result.UnitRequests, Value: 300,
					Labels: result.Labels(result.LabelVerb, "LIST", result.LabelResource, "pods", result.LabelSubresource, "")},
				{Name: apiserver.RequestRatePeak, Window: result.WindowStorm, Unit: result.UnitRequestsPerSecond, Value: 812.5},
				{Name: apiserver.BurstSeconds, Window: result.WindowStorm, Unit: result.UnitSeconds, Value: 14},
				{Name: apiserver.ExcessPerRestart, Window: result.WindowStorm, Unit: result.UnitRequests, Value: 98.25},
				{Name: apiserver.Throttled, Window: result.WindowStorm, Unit: result.UnitRequests, Value: 3},
				{Name: apiserver.ExcessPerRestart, Window: result.WindowStorm, Unit: result.UnitRequests, Value: 3.5,
					Labels: result.Labels(result.LabelVerb, "PUT", result.LabelResource, "endpoints", result.LabelSubresource, "")},
				{Name: apiserver.ExcessPerRestart, Window: result.WindowStorm, Unit: result.UnitRequests, Value: 2,
					Labels: result.Labels(result.LabelVerb, "PUT", result.LabelResource, "deployments", result.LabelSubresource, "status")},
				{Name: apiserver.ExcessPerRestart, Window: result.WindowStorm, Unit: result.UnitRequests, Value: 1.5,
					Labels: result.Labels(result.LabelVerb, "PUT", result.LabelResource, "replicasets", result.LabelSubresource, "status")},
				// Not a status write: not counted.
				{Name: apiserver.ExcessPerRestart, Window: result.WindowStorm, Unit: result.UnitRequests, Value: 9,
					Labels: result.Labels(result.LabelVerb, "PUT", result.LabelResource, "deployments", result.LabelSubresource, "")},
				{Name: apiserver.CPUSeconds, Window: result.WindowStorm, Unit: result.UnitSeconds, Value: 40, Labels: result.Labels(result.LabelComponent, "kube-apiserver")},
				// 150 slots: 140 scrapes, 4 of them failed; 10 slots skipped.
				{Name: apiserver.ScrapesScheduled, Unit: result.UnitCount, Value: 150, Labels: result.Labels(result.LabelComponent, "kube-apiserver")},
				{Name: apiserver.Scrapes, Unit: result.UnitCount, Value: 140, Labels: result.Labels(result.LabelComponent, "kube-apiserver")},
				{Name: apiserver.ScrapeFailures, Unit: result.UnitCount, Value: 4, Labels: result.Labels(result.LabelComponent, "kube-apiserver")},
				{Name: apiserver.ScrapeMaxGap, Unit: result.UnitSeconds, Value: 7.5, Labels: result.Labels(result.LabelComponent, "kube-apiserver")},
				{Name: apiserver.Scrapes, Unit: result.UnitCount, Value: 1, Labels: result.Labels(result.LabelComponent, "etcd")},
				{Name: apiserver.FlowInqueueMax, Window: result.WindowStorm, Unit: result.UnitCount, Value: 12, Labels: result.Labels(result.LabelPriorityLevel, "system", result.LabelFlowSchema, "system-nodes")},
				{Name: apiserver.FlowInqueueMax, Window: result.WindowStorm, Unit: result.UnitCount, Value: 30, Labels: result.Labels(result.LabelPriorityLevel, "workload-high", result.LabelFlowSchema, "kube-system-service-accounts")},
				{Name: apiserver.FlowInqueueMax, Window: result.WindowBaseline, Unit: result.UnitCount, Value: 99, Labels: result.Labels(result.LabelPriorityLevel, "system", result.LabelFlowSchema, "system-nodes")},
			},
			Histograms: []result.Histogram{
				result.FromBuckets(apiserver.RequestDuration, result.WindowStorm, result.Labels(result.LabelClass, apiserver.ClassMutating), durationBounds,
					[]float64{10, 50, 80, 95, 99, 100, 100, 100, 100, 100}, 4.2),
				result.FromBuckets(apiserver.RequestDuration, result.WindowBaseline, result.Labels(result.LabelClass, apiserver.ClassMutating), durationBounds,
					[]float64{90, 100, 100, 100, 100, 100, 100, 100, 100, 100}, 0.3),
				result.FromBuckets(apiserver.RequestDuration, result.WindowStorm, result.Labels(result.LabelClass, apiserver.ClassList), durationBounds,
					[]float64{0, 0, 10, 20, 40, 60, 80, 90, 95, 100}, 48),
				// The worst p99 wait is system-nodes' (all of it in the 4th
				// bucket), though kube-system-service-accounts queued more.
				result.FromBuckets(apiserver.FlowWait, result.WindowStorm, result.Labels(result.LabelPriorityLevel, "system", result.LabelFlowSchema, "system-nodes"), durationBounds,
					[]float64{0, 0, 0, 10, 10, 10, 10, 10, 10, 10}, 1),
				result.FromBuckets(apiserver.FlowWait, result.WindowStorm, result.Labels(result.LabelPriorityLevel, "workload-high", result.LabelFlowSchema, "kube-system-service-accounts"), durationBounds,
					[]float64{20, 30, 30, 30, 30, 30, 30, 30, 30, 30}, 0.1),
			},
			Series: []result.Series{{Name: apiserver.SeriesRequestRate, Unit: result.UnitRequestsPerSecond, Start: t0,
				Points: []result.Point{{T: 1, V: 40}, {T: 2, V: 41.5}, {T: 4, V: 812.5}}}},
			Warnings: []string{"scrape of kube-apiserver at 12:00:03 failed: connection refused"},
		}
		slices := result.Measurement{
			Name: churn.Name,
			Values: []result.Value{
				{Name: churn.SliceWrites, Window: result.WindowStorm, Unit: result.UnitCount, Value: writes},
				{Name: churn.SliceReadyFlips, Window: result.WindowStorm, Unit: result.UnitCount, Value: flipsDown, Labels: result.Labels(result.LabelDirection, churn.DirectionReadyToNot)},
				{Name: churn.SliceReadyFlips, Window: result.WindowStorm, Unit: result.UnitCount, Value: flipsDown, Labels: result.Labels(result.LabelDirection, churn.DirectionNotToReady)},
				{Name: churn.SliceNotReadyPeak, Window: result.WindowStorm, Unit: result.UnitCount, Value: flipsDown / 2},
				{Name: churn.SliceNotReadySeconds, Window: result.WindowStorm, Unit: result.UnitEndpointSeconds, Value: flipsDown * 7.5},
				{Name: churn.SliceOutageSeconds, Window: result.WindowStorm, Unit: result.UnitSeconds, Value: flipsDown / 10},
				{Name: churn.SliceServicesOutage, Window: result.WindowStorm, Unit: result.UnitCount, Value: math.Min(flipsDown, 1)},
			},
		}
		rec := result.Measurement{
			Name: recovery.Name,
			Histograms: []result.Histogram{
				hdrOf(t, recovery.Node, result.WindowStorm, nil, recov...),
				hdrOf(t, recovery.FleetRecovered, result.WindowStorm, nil, recov[len(recov)-1]+3*time.Second),
			},
			Values: []result.Value{
				{Name: recovery.HealthyLeaseNodes, Window: result.WindowStorm, Unit: result.UnitCount, Value: 900},
				{Name: recovery.HealthyLeaseLateNodes, Window: result.WindowStorm, Unit: result.UnitCount, Value: 37},
				{Name: recovery.Unattributed, Window: result.WindowStorm, Unit: result.UnitCount, Value: 4, Labels: result.Labels(result.LabelKind, "node")},
				{Name: recovery.Unattributed, Window: result.WindowStorm, Unit: result.UnitCount, Value: 120, Labels: result.Labels(result.LabelKind, "pod")},
			},
		}
		if flipsDown > 0 {
			rec.Histograms = append(rec.Histograms, hdrOf(t, recovery.Pod, result.WindowStorm, nil, recov[0]+2*time.Second, recov[0]+5*time.Second))
		}
		tool := result.Measurement{
			Name: self.Name,
			Values: []result.Value{
				{Name: self.CPUSeconds, Window: result.WindowStorm, Unit: result.UnitSeconds, Value: 10},
				{Name: self.RSSGrowthPerRestart, Window: result.WindowStorm, Unit: result.UnitBytes, Value: 300 << 10},
			},
		}
		// 100 restarts: 5 watch-lists each, plus a LIST and a WATCH of
		// secrets on some; the harness's own requests are not the kubelets'.
		cl := result.Measurement{
			Name: clientlatency.Name,
			Values: []result.Value{
				{Name: clientlatency.Requests, Unit: result.UnitRequests, Value: 500, Labels: result.Labels(result.LabelSource, clientlatency.SourceKubelet, result.LabelVerb, "WATCH", result.LabelResource, "pods")},
				{Name: clientlatency.Requests, Unit: result.UnitRequests, Value: 30, Labels: result.Labels(result.LabelSource, clientlatency.SourceKubelet, result.LabelVerb, "WATCH", result.LabelResource, "secrets")},
				{Name: clientlatency.Requests, Unit: result.UnitRequests, Value: 30, Labels: result.Labels(result.LabelSource, clientlatency.SourceKubelet, result.LabelVerb, "LIST", result.LabelResource, "secrets")},
				{Name: clientlatency.Requests, Unit: result.UnitRequests, Value: 999, Labels: result.Labels(result.LabelSource, clientlatency.SourceHarness, result.LabelVerb, "LIST", result.LabelResource, "pods")},
			},
		}
		return result.VariantRun{
			Variant: name, FeatureGates: map[string]bool{"ChangeContainerStatusOnKubeletRestart": gate},
			Start: t0, StormStart: storm, End: end, Restarts: 100, Complete: true,
			Measurements: []result.Measurement{api, slices, rec, tool, cl},
		}
	}
	legacy := variant("legacy", true, 200, 340, []time.Duration{11 * time.Second, 12 * time.Second, 12500 * time.Millisecond, 14 * time.Second})
	preserve := variant("preserve", false, 0, 0, []time.Duration{11 * time.Second, 11800 * time.Millisecond, 13 * time.Second})
	preserve.Measurements[0].Error = "scraping kube-apiserver: context deadline exceeded"
	return &result.Result{
		SchemaVersion: result.SchemaVersion,
		Complete:      true,
		Run: result.Run{
			ID: "sb-1a2b3c", ToolVersion: "v0.1.0", GitRevision: "34746ab", Start: t0, End: t0.Add(10 * time.Minute),
			Cluster: result.Cluster{Embedded: true, Versions: map[string]string{"kube-apiserver": "v1.36.3", "etcd": "3.6.8"},
				Settings: result.Settings{NodeMonitorGracePeriod: result.Duration(50 * time.Second), NodeLeaseDuration: result.Duration(40 * time.Second),
					NodeStatusUpdateFrequency: result.Duration(10 * time.Second)}},
			Fleet:   result.Fleet{Nodes: 1000, Pods: 30000, Services: 300},
			Seed:    42,
			Profile: json.RawMessage(`{"apiVersion":"stormbench.io/v1alpha1","kind":"StormProfile"}`),
		},
		Variants: []result.VariantRun{legacy, preserve},
	}
}

func TestSchemaGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := result.Encode(&buf, fixture(t)); err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, "result.golden.json", buf.Bytes())

	// The golden document must read back to the same document.
	r, err := result.Decode(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatalf("Decode(golden): %v", err)
	}
	var again bytes.Buffer
	if err := result.Encode(&again, r); err != nil {
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
	edit := func(f func(m map[string]any)) string { return edited(t, valid, f) }
	variant0 := func(m map[string]any) map[string]any { return m["variants"].([]any)[0].(map[string]any) }
	tests := []struct {
		name string
		doc  string
		want []string
	}{
		{"not json", "{", []string{"decoding result"}},
		{"no schemaVersion", `{"complete":true}`, []string{"schemaVersion: Required value"}},
		{"future schemaVersion", edit(func(m map[string]any) { m["schemaVersion"] = result.SchemaVersion + 1 }),
			[]string{"schemaVersion: Unsupported value: 5", "reads schema version 4 only"}},
		{"schemaVersion 1", edit(func(m map[string]any) { m["schemaVersion"] = 1 }), []string{"schemaVersion: Unsupported value: 1", "reads schema version 4 only"}},
		{"schemaVersion 2", edit(func(m map[string]any) { m["schemaVersion"] = 2 }), []string{"schemaVersion: Unsupported value: 2", "reads schema version 4 only"}},
		{"schemaVersion 3", edit(func(m map[string]any) { m["schemaVersion"] = 3 }), []string{"schemaVersion: Unsupported value: 3", "reads schema version 4 only"}},
		{"unknown field", edit(func(m map[string]any) { m["colour"] = "blue" }), []string{`colour: unknown field`}},
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
		}), []string{"series[0].points[0]: must be a point [t, v] of two numbers, got a list of 3 elements"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := result.Decode(strings.NewReader(tt.doc))
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
	if err := result.WriteFile(path, r, result.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	err := result.WriteFile(path, r, result.WriteOptions{})
	if !errors.Is(err, os.ErrExist) {
		t.Fatalf("second WriteFile without force: got %v, want an error wrapping os.ErrExist", err)
	}
	r.Complete = false
	if err := result.WriteFile(path, r, result.WriteOptions{Force: true}); err != nil {
		t.Fatalf("WriteFile with force: %v", err)
	}
	got, err := result.ReadFile(path)
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
	if err := result.WriteFile(filepath.Join(dir, "bad.json"), r, result.WriteOptions{}); err == nil {
		t.Error("WriteFile wrote an invalid document")
	}
	if _, err := os.Stat(filepath.Join(dir, "bad.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("invalid document left a file: %v", err)
	}
}

func TestSweepOf(t *testing.T) {
	for _, tc := range []struct {
		run  result.VariantRun
		want result.SweepStep
		ok   bool
	}{
		{result.VariantRun{Variant: "legacy/wave=50", Sweep: &result.SweepStep{Variant: "legacy", WaveSize: 50}}, result.SweepStep{"legacy", 50}, true},
		{result.VariantRun{Variant: "legacy/wave=50"}, result.SweepStep{"legacy", 50}, true}, // written before Sweep
		{result.VariantRun{Variant: "a/b/wave=7"}, result.SweepStep{"a/b", 7}, true},
		{result.VariantRun{Variant: "legacy"}, result.SweepStep{}, false},
		{result.VariantRun{Variant: "legacy/wave=0"}, result.SweepStep{}, false},
		{result.VariantRun{Variant: "legacy/wave=x"}, result.SweepStep{}, false},
	} {
		got, ok := tc.run.SweepOf()
		if got != tc.want || ok != tc.ok {
			t.Errorf("SweepOf(%q) = %+v, %t; want %+v, %t", tc.run.Variant, got, ok, tc.want, tc.ok)
		}
		if ok && result.SweepVariantName(got.Variant, got.WaveSize) != tc.run.Variant {
			t.Errorf("result.SweepVariantName(%+v) = %q, want %q", got, result.SweepVariantName(got.Variant, got.WaveSize), tc.run.Variant)
		}
	}
}
