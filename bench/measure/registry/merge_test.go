package registry

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
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

// mergeT0 is the fixtures' time origin.
var mergeT0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// mergeShard is shard idx (0 or 1) of a handcrafted two-shard run. Shard 1
// restarts one node more and its windows end later, so it is the reference
// shard for cluster-wide figures.
func mergeShard(t *testing.T, idx int) *result.Result {
	t.Helper()
	f := float64(idx)
	restarts := 3 + idx
	start := mergeT0.Add(time.Second + time.Duration(idx)*100*time.Millisecond)
	storm := mergeT0.Add(30*time.Second + time.Duration(idx)*10*time.Millisecond)
	end := mergeT0.Add(90*time.Second + time.Duration(idx)*5*time.Second)
	windows := []result.Window{{Name: result.WindowBaseline, Start: storm.Add(-10 * time.Second), End: storm}, {Name: result.WindowStorm, Start: storm, End: end}}
	kubeletLabels := func(verb, resource, sub string) map[string]string {
		return result.Labels(result.LabelSource, clientlatency.SourceKubelet, result.LabelVerb, verb, result.LabelResource, resource, result.LabelSubresource, sub)
	}
	ms := func(ds ...int) []time.Duration {
		out := make([]time.Duration, len(ds))
		for i, d := range ds {
			out[i] = time.Duration(d) * time.Millisecond
		}
		return out
	}
	api := result.Measurement{
		Name:    apiserver.Name,
		Windows: windows,
		Values: []result.Value{
			{Name: apiserver.Requests, Window: result.WindowStorm, Unit: result.UnitRequests, Value: 1000 + 10*f},
			{Name: apiserver.RequestRatePeak, Window: result.WindowStorm, Unit: result.UnitRequestsPerSecond, Value: 80 + f},
			{Name: apiserver.ExcessRequests, Window: result.WindowStorm, Unit: result.UnitRequests, Value: 600 + 12*f},
			{Name: apiserver.ExcessPerRestart, Window: result.WindowStorm, Unit: result.UnitRequests, Value: (600 + 12*f) / float64(restarts)},
			{Name: apiserver.ExcessPerRestart, Window: result.WindowStorm, Unit: result.UnitRequests, Value: 42 / float64(restarts),
				Labels: result.Labels(result.LabelVerb, "PATCH", result.LabelResource, "pods", result.LabelSubresource, "status")},
			{Name: apiserver.InflightMax, Unit: result.UnitCount, Value: 7 + f, Labels: result.Labels(result.LabelRequestKind, "mutating")},
		},
		Histograms: []result.Histogram{
			result.FromBuckets(apiserver.RequestDuration, result.WindowStorm, result.Labels(result.LabelClass, apiserver.ClassMutating), durationBounds,
				[]float64{10, 50, 80, 95, 99, 100, 100, 100, 100, 100 + f}, 4.2),
		},
		Series: []result.Series{{Name: apiserver.SeriesRequestRate, Unit: result.UnitRequestsPerSecond, Start: start,
			Points: []result.Point{{T: 1, V: 40 + f}, {T: 2, V: 80 + f}}}},
	}
	client := result.Measurement{
		Name: clientlatency.Name,
		Values: []result.Value{
			{Name: clientlatency.Requests, Labels: kubeletLabels("GET", "nodes", ""), Unit: result.UnitRequests, Value: float64(restarts)},
			{Name: clientlatency.Requests, Labels: kubeletLabels("PATCH", "pods", "status"), Unit: result.UnitRequests, Value: 10 + f},
		},
		Histograms: []result.Histogram{
			hdrOf(t, clientlatency.RequestLatency, "", kubeletLabels("GET", "nodes", ""), ms(5, 6, 7, 8)[:restarts]...),
			hdrOf(t, clientlatency.RequestLatency, "", kubeletLabels("PATCH", "pods", "status"), ms(10, 20)...),
		},
		Warnings: []string{"shared caveat"},
	}
	if idx == 1 {
		client.Values = append(client.Values, result.Value{Name: clientlatency.Errors, Labels: kubeletLabels("PATCH", "pods", "status"), Unit: result.UnitRequests, Value: 2})
		client.Warnings = append(client.Warnings, "only in shard 1")
	}
	slices := result.Measurement{
		Name:    churn.Name,
		Windows: windows,
		Values: []result.Value{
			{Name: churn.SliceWrites, Window: result.WindowStorm, Unit: result.UnitCount, Value: 50 + f},
			{Name: churn.SliceWatcherEvents, Unit: result.UnitEvents, Value: 100 * (1 + f)},
		},
		Series: []result.Series{{Name: churn.SeriesSliceWrites, Unit: result.UnitCount, Start: storm, Points: []result.Point{{T: 1, V: 5 + f}}}},
	}
	firstDown := storm.Add(500*time.Millisecond + time.Duration(idx)*250*time.Millisecond)
	rec := result.Measurement{
		Name: recovery.Name,
		Values: []result.Value{
			{Name: recovery.Unrecovered, Window: result.WindowStorm, Unit: result.UnitCount, Value: 0, Labels: result.Labels(result.LabelKind, "node")},
			{Name: recovery.Unrecovered, Window: result.WindowStorm, Unit: result.UnitCount, Value: f, Labels: result.Labels(result.LabelKind, "service")},
			{Name: recovery.Unattributed, Window: result.WindowStorm, Unit: result.UnitCount, Value: 5, Labels: result.Labels(result.LabelKind, "pod")},
			{Name: recovery.FromEvents, Window: result.WindowStorm, Unit: result.UnitCount, Value: 1},
		},
		Histograms: []result.Histogram{
			hdrOf(t, recovery.Node, result.WindowStorm, nil, ms(4000, 4100, 4200, 4300)[:restarts]...),
			hdrOf(t, recovery.Service, result.WindowStorm, nil, ms(5000+1000*idx)...),
			// Shard 0: first Down at 30.5 s, recovered 9 s later; shard 1:
			// first Down at 30.76 s, recovered 10 s later. Fleet: 10.26 s.
			hdrOf(t, recovery.FleetRecovered, result.WindowStorm, nil, ms(9000+1000*idx)...),
		},
		Series: []result.Series{{Name: recovery.SeriesUnrecoveredNodes, Unit: result.UnitCount, Start: firstDown,
			Points: []result.Point{{T: 1, V: float64(restarts)}, {T: 2, V: 2}, {T: 3, V: 0}}}},
	}
	stormM := result.Measurement{
		Name:    self.Name,
		Windows: []result.Window{{Name: result.WindowBaseline, Start: storm.Add(-20 * time.Second), End: storm}, {Name: result.WindowStorm, Start: storm, End: end}},
		Values: []result.Value{
			// Each shard: 0.2 s of CPU in a 20 s baseline (10 ms/s over
			// 12 nodes), and 1.5 s in a storm of 60 s (0.6 s standing) or
			// 65 s (0.65 s).
			{Name: self.CPUSeconds, Window: result.WindowBaseline, Unit: result.UnitSeconds, Value: 0.2},
			{Name: self.StandingCPU, Window: result.WindowBaseline, Unit: result.UnitCores, Value: 0.01 / 0.012},
			{Name: self.MarginalCPU, Window: result.WindowStorm, Unit: result.UnitSeconds, Value: 0.9 - 0.05*f},
			{Name: self.MarginalCPUPerRestart, Window: result.WindowStorm, Unit: result.UnitSeconds, Value: (0.9 - 0.05*f) / float64(restarts)},
			{Name: self.Restarts, Window: result.WindowStorm, Unit: result.UnitCount, Value: float64(restarts)},
			{Name: self.TokenRequests, Window: result.WindowStorm, Unit: result.UnitCount, Value: 10 + f},
			{Name: self.PodsLost, Window: result.WindowStorm, Unit: result.UnitCount, Value: 1 + f},
			{Name: self.CPUSeconds, Window: result.WindowStorm, Unit: result.UnitSeconds, Value: 1.5},
			{Name: self.RSSStart, Window: result.WindowStorm, Unit: result.UnitBytes, Value: 100 << 20},
			{Name: self.RSSPeak, Window: result.WindowStorm, Unit: result.UnitBytes, Value: float64(100<<20 + restarts<<20)},
			{Name: self.RSSGrowthPerRestart, Window: result.WindowStorm, Unit: result.UnitBytes, Value: 1 << 20},
		},
	}
	return &result.Result{
		SchemaVersion: result.SchemaVersion,
		Complete:      true,
		Run: result.Run{
			ID: "shard-run", ToolVersion: "v0.1.0", GitRevision: "abc1234",
			Start: mergeT0.Add(time.Duration(idx) * 100 * time.Millisecond), End: end.Add(time.Minute),
			Cluster: result.Cluster{Versions: map[string]string{"kube-apiserver": "v1.36.3"},
				Settings: result.Settings{NodeMonitorGracePeriod: result.Duration(50 * time.Second)}},
			Fleet:   result.Fleet{Nodes: 12, Pods: 60, Services: 6},
			Seed:    7,
			Profile: json.RawMessage(`{"seed": 7, "fleet": {"nodes": 12}}`),
			Shard:   &result.Shard{Index: idx, Count: 2},
		},
		Variants: []result.VariantRun{{
			Variant: "default", FeatureGates: map[string]bool{"ChangeContainerStatusOnKubeletRestart": true},
			Start: start, StormStart: storm, End: end, Restarts: restarts, Complete: true,
			Measurements: []result.Measurement{api, client, slices, rec, stormM},
		}},
	}
}

func encodeResult(t *testing.T, r *result.Result) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := result.Encode(&buf, r); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestMergeGolden(t *testing.T) {
	a, b := mergeShard(t, 0), mergeShard(t, 1)
	beforeA, beforeB := encodeResult(t, a), encodeResult(t, b)
	m, err := result.Merge(MergeRules(), a, b)
	if err != nil {
		t.Fatal(err)
	}
	got := encodeResult(t, m) // Encode validates.
	testutil.Golden(t, "merge-two-shards.golden.json", got)
	if !bytes.Equal(encodeResult(t, a), beforeA) || !bytes.Equal(encodeResult(t, b), beforeB) {
		t.Error("Merge modified its inputs")
	}
	// The merged document reads back.
	if _, err := result.Decode(bytes.NewReader(got)); err != nil {
		t.Fatalf("Decode(merged): %v", err)
	}
}

func TestMergeFigures(t *testing.T) {
	m, err := result.Merge(MergeRules(), mergeShard(t, 0), mergeShard(t, 1))
	if err != nil {
		t.Fatal(err)
	}
	v := &m.Variants[0]
	kubeletLabels := func(verb, resource, sub string) []string {
		return []string{result.LabelSource, clientlatency.SourceKubelet, result.LabelVerb, verb, result.LabelResource, resource, result.LabelSubresource, sub}
	}
	value := func(meas, name, window string, labels ...string) float64 {
		t.Helper()
		x, ok := v.Measurement(meas).Value(name, window, labels...)
		if !ok {
			t.Fatalf("%s %s (%s) %v missing", meas, name, window, labels)
		}
		return x
	}
	hist := func(meas, name, window string, labels ...string) result.Summary {
		t.Helper()
		h := v.Measurement(meas).Histogram(name, window, labels...)
		if h == nil {
			t.Fatalf("%s histogram %s (%s) %v missing", meas, name, window, labels)
		}
		return h.Summary
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
	tests := []struct {
		name      string
		got, want float64
	}{
		// Per shard: sums.
		{"restarts", float64(v.Restarts), 7},
		{"client GET nodes", value(clientlatency.Name, clientlatency.Requests, "", kubeletLabels("GET", "nodes", "")...), 7},
		{"client PATCH pods/status", value(clientlatency.Name, clientlatency.Requests, "", kubeletLabels("PATCH", "pods", "status")...), 21},
		{"client errors (one shard)", value(clientlatency.Name, clientlatency.Errors, "", kubeletLabels("PATCH", "pods", "status")...), 2},
		{"client latency samples", float64(hist(clientlatency.Name, clientlatency.RequestLatency, "", kubeletLabels("GET", "nodes", "")...).Count), 7},
		{"client latency max (ms)", math.Round(hist(clientlatency.Name, clientlatency.RequestLatency, "", kubeletLabels("GET", "nodes", "")...).Max * 1000), 8},
		{"storm restarts", value(self.Name, self.Restarts, result.WindowStorm), 7},
		{"storm tokenRequests", value(self.Name, self.TokenRequests, result.WindowStorm), 21},
		{"storm CPU", value(self.Name, self.CPUSeconds, result.WindowStorm), 3},
		{"storm RSS peak summed", value(self.Name, self.RSSPeak, result.WindowStorm), 207 << 20},
		{"baseline CPU summed", value(self.Name, self.CPUSeconds, result.WindowBaseline), 0.4},
		{"standing CPU summed: two processes", value(self.Name, self.StandingCPU, result.WindowBaseline), 2 * 0.01 / 0.012},
		{"marginal CPU summed", value(self.Name, self.MarginalCPU, result.WindowStorm), 1.75},
		{"marginal CPU per restart recomputed", value(self.Name, self.MarginalCPUPerRestart, result.WindowStorm), 1.75 / 7},
		{"storm RSS growth recomputed", value(self.Name, self.RSSGrowthPerRestart, result.WindowStorm), 1 << 20},
		{"storm podsLost max", value(self.Name, self.PodsLost, result.WindowStorm), 2},
		{"recovery node samples", float64(hist(recovery.Name, recovery.Node, result.WindowStorm).Count), 7},
		{"recovery service samples", float64(hist(recovery.Name, recovery.Service, result.WindowStorm).Count), 2},
		{"recovery unrecovered nodes", value(recovery.Name, recovery.Unrecovered, result.WindowStorm, result.LabelKind, "node"), 0},
		{"recovery unrecovered services max", value(recovery.Name, recovery.Unrecovered, result.WindowStorm, result.LabelKind, "service"), 1},
		{"recovery from events", value(recovery.Name, recovery.FromEvents, result.WindowStorm), 2},
		{"fleet recovered samples", float64(hist(recovery.Name, recovery.FleetRecovered, result.WindowStorm).Count), 1},
		// 10.26 s within HdrHistogram's 3 digits.
		{"fleet recovered", math.Round(hist(recovery.Name, recovery.FleetRecovered, result.WindowStorm).Max*50) / 50, 10.26},
		// Cluster-wide: the reference shard (1), not sums.
		{"api requests", value(apiserver.Name, apiserver.Requests, result.WindowStorm), 1010},
		{"api peak", value(apiserver.Name, apiserver.RequestRatePeak, result.WindowStorm), 81},
		{"api inflight max", value(apiserver.Name, apiserver.InflightMax, "", result.LabelRequestKind, "mutating"), 8},
		{"api excess per restart", value(apiserver.Name, apiserver.ExcessPerRestart, result.WindowStorm), 612.0 / 7},
		{"api excess per restart by kind", value(apiserver.Name, apiserver.ExcessPerRestart, result.WindowStorm,
			result.LabelVerb, "PATCH", result.LabelResource, "pods", result.LabelSubresource, "status"), 42.0 / 7},
		{"api request duration count", float64(hist(apiserver.Name, apiserver.RequestDuration, result.WindowStorm, result.LabelClass, apiserver.ClassMutating).Count), 101},
		{"slice writes", value(churn.Name, churn.SliceWrites, result.WindowStorm), 51},
		{"extra watcher events summed", value(churn.Name, churn.SliceWatcherEvents, ""), 300},
	}
	for _, tt := range tests {
		if !near(tt.got, tt.want) {
			t.Errorf("%s = %v, want %v", tt.name, tt.got, tt.want)
		}
	}
	if _, ok := v.Measurement(recovery.Name).Value(recovery.Unattributed, result.WindowStorm, result.LabelKind, "pod"); ok {
		t.Error("unattributed kept; want it dropped")
	}

	// Windows: per-shard measurements span both shards; cluster-wide ones
	// are the reference shard's.
	b := mergeShard(t, 1).Variants[0]
	if w, _ := v.Measurement(self.Name).Window(result.WindowStorm); !w.Start.Equal(mergeShard(t, 0).Variants[0].StormStart) || !w.End.Equal(b.End) {
		t.Errorf("storm window %v..%v, want shard 0's start to shard 1's end", w.Start, w.End)
	}
	if w, _ := v.Measurement(apiserver.Name).Window(result.WindowStorm); !w.Start.Equal(b.StormStart) {
		t.Errorf("apiserver storm window starts %v, want the reference shard's %v", w.Start, b.StormStart)
	}
	if !v.StormStart.Equal(mergeShard(t, 0).Variants[0].StormStart) || !v.End.Equal(b.End) || !v.Start.Equal(mergeShard(t, 0).Variants[0].Start) {
		t.Errorf("variant times %v %v %v", v.Start, v.StormStart, v.End)
	}

	// The unrecovered_nodes series: shard 0 from +0.5 s (3, 2, 0), shard 1
	// from +0.75 s (4, 2, 0), on shard 0's axis.
	s := v.Measurement(recovery.Name).SeriesNamed(recovery.SeriesUnrecoveredNodes)
	want := []result.Point{{T: 1, V: 3}, {T: 2, V: 6}, {T: 3, V: 2}, {T: 4, V: 0}}
	if s == nil || !s.Start.Equal(mergeShard(t, 0).Variants[0].Measurement(recovery.Name).Series[0].Start) || !pointsEqual(s.Points, want) {
		t.Errorf("unrecovered_nodes = %+v, want %v from shard 0's start", s, want)
	}

	if n := result.MergedShards(m); n != 2 {
		t.Errorf("MergedShards = %d, want 2", n)
	}
	if !m.Complete || !v.Complete {
		t.Error("merged result of complete shards is incomplete")
	}
	notes := strings.Join(result.MergeNotes(m), "\n")
	for _, w := range []string{"apiserver: cluster-wide figures taken from shard 1", "unattributed dropped", "service_ready: a Service degraded",
		"excess_requests_per_restart recomputed over the 7 restarts of all shards (shard 1 restarted 4)"} {
		if !strings.Contains(notes, w) {
			t.Errorf("merge notes lack %q:\n%s", w, notes)
		}
	}
	warnings := strings.Join(v.Measurement(clientlatency.Name).Warnings, "\n")
	if !strings.Contains(warnings, "shards 0, 1: shared caveat") || !strings.Contains(warnings, "shard 1: only in shard 1") {
		t.Errorf("client latency warnings:\n%s", warnings)
	}
}

func TestMergeRejects(t *testing.T) {
	tests := []struct {
		name   string
		edit   func(a, b *result.Result)
		inputs func(a, b *result.Result) []*result.Result
		want   []string
	}{
		{name: "none", inputs: func(a, b *result.Result) []*result.Result { return nil }, want: []string{"none given"}},
		{name: "nil", inputs: func(a, b *result.Result) []*result.Result { return []*result.Result{a, nil} }, want: []string{"shard 1 is nil"}},
		{name: "other run", edit: func(a, b *result.Result) { b.Run.ID = "other"; b.Run.Seed = 8 },
			want: []string{"shard 1 is not of the same run as shard 0: run id other, want shard-run", "seed 8, want 7"}},
		{name: "other profile", edit: func(a, b *result.Result) { b.Run.Profile = json.RawMessage(`{"seed": 7, "fleet": {"nodes": 13}}`) },
			want: []string{"resolved profiles differ"}},
		{name: "other tool", edit: func(a, b *result.Result) { b.Run.ToolVersion = "v0.2.0" }, want: []string{"tool version v0.2.0"}},
		{name: "other cluster", edit: func(a, b *result.Result) { b.Run.Cluster.Versions["kube-apiserver"] = "v1.35.0" }, want: []string{"component versions kube-apiserver v1.35.0, want v1.36.3"}},
		{name: "same shard twice", inputs: func(a, b *result.Result) []*result.Result { return []*result.Result{a, a} }, want: []string{"shards 0 and 1 started at the same instant"}},
		{name: "other variants", edit: func(a, b *result.Result) { b.Variants[0].Variant = "preserve" },
			want: []string{"variant run 0 is preserve#0, want default#0"}},
		{name: "other gates", edit: func(a, b *result.Result) { b.Variants[0].FeatureGates["ChangeContainerStatusOnKubeletRestart"] = false },
			want: []string{"ran with feature gates"}},
		{name: "complete shard with fewer variant runs", edit: func(a, b *result.Result) {
			extra := a.Variants[0]
			extra.Repetition = 1
			a.Variants = append(a.Variants, extra)
		}, want: []string{"shard 0 has 2 variant runs but shard 1, which is complete, has 1"}},
		{name: "already merged", inputs: func(a, b *result.Result) []*result.Result {
			m, err := result.Merge(MergeRules(), a, b)
			if err != nil {
				t.Fatal(err)
			}
			return []*result.Result{m}
		}, want: []string{"shard 0 is already merged from 2 shards"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := mergeShard(t, 0), mergeShard(t, 1)
			if tt.edit != nil {
				tt.edit(a, b)
			}
			in := []*result.Result{a, b}
			if tt.inputs != nil {
				in = tt.inputs(a, b)
			}
			_, err := result.Merge(MergeRules(), in...)
			if err == nil {
				t.Fatal("Merge accepted mismatched shards")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestMergeIncompleteShard(t *testing.T) {
	a, b := mergeShard(t, 0), mergeShard(t, 1)
	// Shard 0 ran a second repetition; shard 1 was interrupted before it.
	extra := a.Variants[0]
	extra.Repetition = 1
	a.Variants = append(a.Variants, extra)
	b.Complete = false
	b.Errors = []string{"context canceled"}
	m, err := result.Merge(MergeRules(), a, b)
	if err != nil {
		t.Fatal(err)
	}
	if m.Complete {
		t.Error("merged result of an interrupted shard is complete")
	}
	if len(m.Variants) != 1 {
		t.Fatalf("%d variant runs merged, want the 1 both shards hold", len(m.Variants))
	}
	errs := strings.Join(m.Errors, "\n")
	for _, w := range []string{"shard 1: context canceled", "variant default repetition 1 ran in shard 0 but not in every shard"} {
		if !strings.Contains(errs, w) {
			t.Errorf("errors lack %q:\n%s", w, errs)
		}
	}
	encodeResult(t, m)
}

func TestMergeUnrecoveredShard(t *testing.T) {
	a, b := mergeShard(t, 0), mergeShard(t, 1)
	rec := b.Variants[0].Measurement(recovery.Name)
	for i := range rec.Histograms {
		if rec.Histograms[i].Name == recovery.FleetRecovered {
			rec.Histograms[i] = hdrOf(t, recovery.FleetRecovered, result.WindowStorm, nil)
		}
	}
	m, err := result.Merge(MergeRules(), a, b)
	if err != nil {
		t.Fatal(err)
	}
	if h := m.Variants[0].Measurement(recovery.Name).Histogram(recovery.FleetRecovered, result.WindowStorm); h == nil || h.Summary.Count != 0 {
		t.Errorf("fleet_recovered = %+v, want empty: shard 1 had not recovered", h)
	}
}

func TestMergeOneShard(t *testing.T) {
	a := mergeShard(t, 0)
	m, err := result.Merge(MergeRules(), a)
	if err != nil {
		t.Fatal(err)
	}
	if result.MergedShards(m) != 1 || m.Variants[0].Restarts != 3 {
		t.Errorf("merged shards %d, restarts %d", result.MergedShards(m), m.Variants[0].Restarts)
	}
	if notes := result.MergeNotes(m); len(notes) != 0 {
		t.Errorf("one shard: unexpected notes %q", notes)
	}
	if got, _ := m.Variants[0].Measurement(apiserver.Name).Value(apiserver.ExcessPerRestart, result.WindowStorm); got != 200 {
		t.Errorf("excess per restart %v, want 200", got)
	}
}

// A shard that could not split its CPU (no baseline window) leaves the
// merged run without the split: sums over the other shards would pass for
// the whole tool's.
func TestMergePartialSelfCostSplit(t *testing.T) {
	a, b := mergeShard(t, 0), mergeShard(t, 1)
	st := b.Variants[0].Measurement(self.Name)
	st.Values = slices.DeleteFunc(st.Values, func(v result.Value) bool {
		return v.Window == result.WindowBaseline || v.Name == self.MarginalCPU || v.Name == self.MarginalCPUPerRestart
	})
	m, err := result.Merge(MergeRules(), a, b)
	if err != nil {
		t.Fatal(err)
	}
	got := m.Variants[0].Measurement(self.Name)
	for _, f := range []struct{ name, window string }{
		{self.CPUSeconds, result.WindowBaseline}, {self.StandingCPU, result.WindowBaseline},
		{self.MarginalCPU, result.WindowStorm}, {self.MarginalCPUPerRestart, result.WindowStorm},
	} {
		if x, ok := got.Value(f.name, f.window); ok {
			t.Errorf("%s (%s) = %v merged from one shard of two, want none", f.name, f.window, x)
		}
	}
	if x, ok := got.Value(self.CPUSeconds, result.WindowStorm); !ok || x != 3 {
		t.Errorf("storm CPU %v, %v; want both shards' 3 s", x, ok)
	}
	if notes := strings.Join(result.MergeNotes(m), "\n"); !strings.Contains(notes, "1 of 2 shards had no baseline window") {
		t.Errorf("no note of the missing split:\n%s", notes)
	}
	encodeResult(t, m)
}

func TestMergeStormSpread(t *testing.T) {
	a, b := mergeShard(t, 0), mergeShard(t, 1)
	b.Variants[0].StormStart = b.Variants[0].StormStart.Add(3 * time.Second)
	m, err := result.Merge(MergeRules(), a, b)
	if err != nil {
		t.Fatal(err)
	}
	if notes := strings.Join(result.MergeNotes(m), "\n"); !strings.Contains(notes, "storms started up to 3.01s apart") {
		t.Errorf("no storm spread note:\n%s", notes)
	}
}

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

func pointsEqual(a, b []result.Point) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i].T-b[i].T) > 1e-9 || math.Abs(a[i].V-b[i].V) > 1e-9 {
			return false
		}
	}
	return true
}
