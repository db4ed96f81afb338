package result

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

// mergeT0 is the fixtures' time origin.
var mergeT0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// mergeShard is shard idx (0 or 1) of a handcrafted two-shard run. Shard 1
// restarts one node more and its windows end later, so it is the reference
// shard for cluster-wide figures.
func mergeShard(t *testing.T, idx int) *Result {
	t.Helper()
	f := float64(idx)
	restarts := 3 + idx
	start := mergeT0.Add(time.Second + time.Duration(idx)*100*time.Millisecond)
	storm := mergeT0.Add(30*time.Second + time.Duration(idx)*10*time.Millisecond)
	end := mergeT0.Add(90*time.Second + time.Duration(idx)*5*time.Second)
	windows := []Window{{Name: WindowBaseline, Start: storm.Add(-10 * time.Second), End: storm}, {Name: WindowStorm, Start: storm, End: end}}
	kubelet := func(verb, resource, sub string) map[string]string {
		return Labels(LabelSource, "kubelet", LabelVerb, verb, LabelResource, resource, LabelSubresource, sub)
	}
	ms := func(ds ...int) []time.Duration {
		out := make([]time.Duration, len(ds))
		for i, d := range ds {
			out[i] = time.Duration(d) * time.Millisecond
		}
		return out
	}
	api := Measurement{
		Name:    MeasurementAPIServer,
		Windows: windows,
		Values: []Value{
			{Name: APIRequests, Window: WindowStorm, Unit: UnitRequests, Value: 1000 + 10*f},
			{Name: APIRequestRatePeak, Window: WindowStorm, Unit: UnitRequestsPerSecond, Value: 80 + f},
			{Name: APIExcessRequests, Window: WindowStorm, Unit: UnitRequests, Value: 600 + 12*f},
			{Name: APIExcessPerRestart, Window: WindowStorm, Unit: UnitRequests, Value: (600 + 12*f) / float64(restarts)},
			{Name: APIExcessPerRestart, Window: WindowStorm, Unit: UnitRequests, Value: 42 / float64(restarts),
				Labels: Labels(LabelVerb, "PATCH", LabelResource, "pods", LabelSubresource, "status")},
			{Name: APIInflightMax, Unit: UnitCount, Value: 7 + f, Labels: Labels(LabelRequestKind, "mutating")},
		},
		Histograms: []Histogram{
			FromBuckets(APIRequestDuration, WindowStorm, Labels(LabelClass, ClassMutating), durationBounds,
				[]float64{10, 50, 80, 95, 99, 100, 100, 100, 100, 100 + f}, 4.2),
		},
		Series: []Series{{Name: SeriesRequestRate, Unit: UnitRequestsPerSecond, Start: start,
			Points: []Point{{T: 1, V: 40 + f}, {T: 2, V: 80 + f}}}},
	}
	client := Measurement{
		Name: MeasurementClientLatency,
		Values: []Value{
			{Name: ClientRequests, Labels: kubelet("GET", "nodes", ""), Unit: UnitRequests, Value: float64(restarts)},
			{Name: ClientRequests, Labels: kubelet("PATCH", "pods", "status"), Unit: UnitRequests, Value: 10 + f},
		},
		Histograms: []Histogram{
			hdrOf(t, ClientLatency, "", kubelet("GET", "nodes", ""), ms(5, 6, 7, 8)[:restarts]...),
			hdrOf(t, ClientLatency, "", kubelet("PATCH", "pods", "status"), ms(10, 20)...),
		},
		Warnings: []string{"shared caveat"},
	}
	if idx == 1 {
		client.Values = append(client.Values, Value{Name: ClientErrors, Labels: kubelet("PATCH", "pods", "status"), Unit: UnitRequests, Value: 2})
		client.Warnings = append(client.Warnings, "only in shard 1")
	}
	slices := Measurement{
		Name:    MeasurementEndpointSlices,
		Windows: windows,
		Values: []Value{
			{Name: SliceWrites, Window: WindowStorm, Unit: UnitCount, Value: 50 + f},
			{Name: SliceWatcherEvents, Unit: UnitEvents, Value: 100 * (1 + f)},
		},
		Series: []Series{{Name: SeriesSliceWrites, Unit: UnitCount, Start: storm, Points: []Point{{T: 1, V: 5 + f}}}},
	}
	firstDown := storm.Add(500*time.Millisecond + time.Duration(idx)*250*time.Millisecond)
	rec := Measurement{
		Name: MeasurementRecovery,
		Values: []Value{
			{Name: RecoveryUnrecovered, Window: WindowStorm, Unit: UnitCount, Value: 0, Labels: Labels(LabelKind, "node")},
			{Name: RecoveryUnrecovered, Window: WindowStorm, Unit: UnitCount, Value: f, Labels: Labels(LabelKind, "service")},
			{Name: RecoveryUnattributed, Window: WindowStorm, Unit: UnitCount, Value: 5, Labels: Labels(LabelKind, "pod")},
			{Name: RecoveryFromEvents, Window: WindowStorm, Unit: UnitCount, Value: 1},
		},
		Histograms: []Histogram{
			hdrOf(t, RecoveryNode, WindowStorm, nil, ms(4000, 4100, 4200, 4300)[:restarts]...),
			hdrOf(t, RecoveryService, WindowStorm, nil, ms(5000+1000*idx)...),
			// Shard 0: first Down at 30.5 s, recovered 9 s later; shard 1:
			// first Down at 30.76 s, recovered 10 s later. Fleet: 10.26 s.
			hdrOf(t, RecoveryStorm, WindowStorm, nil, ms(9000+1000*idx)...),
		},
		Series: []Series{{Name: SeriesUnrecoveredNodes, Unit: UnitCount, Start: firstDown,
			Points: []Point{{T: 1, V: float64(restarts)}, {T: 2, V: 2}, {T: 3, V: 0}}}},
	}
	stormM := Measurement{
		Name:    measurementStorm,
		Windows: []Window{{Name: WindowStorm, Start: storm, End: end}},
		Values: []Value{
			{Name: "restarts", Window: WindowStorm, Unit: UnitCount, Value: float64(restarts)},
			{Name: "tokenRequests", Window: WindowStorm, Unit: UnitCount, Value: 10 + f},
			{Name: "podsLost", Window: WindowStorm, Unit: UnitCount, Value: 1 + f},
			{Name: "stormbenchCPUSeconds", Window: WindowStorm, Unit: UnitSeconds, Value: 1.5},
			{Name: "stormbenchRSSStartBytes", Window: WindowStorm, Unit: UnitBytes, Value: 100 << 20},
			{Name: "stormbenchRSSPeakBytes", Window: WindowStorm, Unit: UnitBytes, Value: float64(100<<20 + restarts<<20)},
			{Name: "stormbenchRSSGrowthPerRestartBytes", Window: WindowStorm, Unit: UnitBytes, Value: 1 << 20},
		},
	}
	return &Result{
		SchemaVersion: SchemaVersion,
		Complete:      true,
		Run: Run{
			ID: "shard-run", ToolVersion: "v0.1.0", GitRevision: "abc1234",
			Start: mergeT0.Add(time.Duration(idx) * 100 * time.Millisecond), End: end.Add(time.Minute),
			Cluster: Cluster{Versions: map[string]string{"kube-apiserver": "v1.36.3"},
				Settings: Settings{NodeMonitorGracePeriod: Duration(50 * time.Second)}},
			Fleet:   Fleet{Nodes: 12, Pods: 60, Services: 6},
			Seed:    7,
			Profile: json.RawMessage(`{"seed": 7, "fleet": {"nodes": 12}}`),
		},
		Variants: []VariantRun{{
			Variant: "default", FeatureGates: map[string]bool{"ChangeContainerStatusOnKubeletRestart": true},
			Start: start, StormStart: storm, End: end, Restarts: restarts, Complete: true,
			Measurements: []Measurement{api, client, slices, rec, stormM},
		}},
	}
}

func encodeResult(t *testing.T, r *Result) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Encode(&buf, r); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestMergeGolden(t *testing.T) {
	a, b := mergeShard(t, 0), mergeShard(t, 1)
	beforeA, beforeB := encodeResult(t, a), encodeResult(t, b)
	m, err := Merge(a, b)
	if err != nil {
		t.Fatal(err)
	}
	got := encodeResult(t, m) // Encode validates.
	golden(t, "merge-two-shards.golden.json", got)
	if !bytes.Equal(encodeResult(t, a), beforeA) || !bytes.Equal(encodeResult(t, b), beforeB) {
		t.Error("Merge modified its inputs")
	}
	// The merged document reads back.
	if _, err := Decode(bytes.NewReader(got)); err != nil {
		t.Fatalf("Decode(merged): %v", err)
	}
}

func TestMergeFigures(t *testing.T) {
	m, err := Merge(mergeShard(t, 0), mergeShard(t, 1))
	if err != nil {
		t.Fatal(err)
	}
	v := &m.Variants[0]
	kubelet := func(verb, resource, sub string) []string {
		return []string{LabelSource, "kubelet", LabelVerb, verb, LabelResource, resource, LabelSubresource, sub}
	}
	value := func(meas, name, window string, labels ...string) float64 {
		t.Helper()
		x, ok := v.Measurement(meas).Value(name, window, labels...)
		if !ok {
			t.Fatalf("%s %s (%s) %v missing", meas, name, window, labels)
		}
		return x
	}
	hist := func(meas, name, window string, labels ...string) Summary {
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
		{"client GET nodes", value(MeasurementClientLatency, ClientRequests, "", kubelet("GET", "nodes", "")...), 7},
		{"client PATCH pods/status", value(MeasurementClientLatency, ClientRequests, "", kubelet("PATCH", "pods", "status")...), 21},
		{"client errors (one shard)", value(MeasurementClientLatency, ClientErrors, "", kubelet("PATCH", "pods", "status")...), 2},
		{"client latency samples", float64(hist(MeasurementClientLatency, ClientLatency, "", kubelet("GET", "nodes", "")...).Count), 7},
		{"client latency max (ms)", math.Round(hist(MeasurementClientLatency, ClientLatency, "", kubelet("GET", "nodes", "")...).Max * 1000), 8},
		{"storm restarts", value(measurementStorm, "restarts", WindowStorm), 7},
		{"storm tokenRequests", value(measurementStorm, "tokenRequests", WindowStorm), 21},
		{"storm CPU", value(measurementStorm, "stormbenchCPUSeconds", WindowStorm), 3},
		{"storm RSS peak summed", value(measurementStorm, "stormbenchRSSPeakBytes", WindowStorm), 207 << 20},
		{"storm RSS growth recomputed", value(measurementStorm, "stormbenchRSSGrowthPerRestartBytes", WindowStorm), 1 << 20},
		{"storm podsLost max", value(measurementStorm, "podsLost", WindowStorm), 2},
		{"recovery node samples", float64(hist(MeasurementRecovery, RecoveryNode, WindowStorm).Count), 7},
		{"recovery service samples", float64(hist(MeasurementRecovery, RecoveryService, WindowStorm).Count), 2},
		{"recovery unrecovered nodes", value(MeasurementRecovery, RecoveryUnrecovered, WindowStorm, LabelKind, "node"), 0},
		{"recovery unrecovered services max", value(MeasurementRecovery, RecoveryUnrecovered, WindowStorm, LabelKind, "service"), 1},
		{"recovery from events", value(MeasurementRecovery, RecoveryFromEvents, WindowStorm), 2},
		{"fleet recovered samples", float64(hist(MeasurementRecovery, RecoveryStorm, WindowStorm).Count), 1},
		// 10.26 s within HdrHistogram's 3 digits.
		{"fleet recovered", math.Round(hist(MeasurementRecovery, RecoveryStorm, WindowStorm).Max*50) / 50, 10.26},
		// Cluster-wide: the reference shard (1), not sums.
		{"api requests", value(MeasurementAPIServer, APIRequests, WindowStorm), 1010},
		{"api peak", value(MeasurementAPIServer, APIRequestRatePeak, WindowStorm), 81},
		{"api inflight max", value(MeasurementAPIServer, APIInflightMax, "", LabelRequestKind, "mutating"), 8},
		{"api excess per restart", value(MeasurementAPIServer, APIExcessPerRestart, WindowStorm), 612.0 / 7},
		{"api excess per restart by kind", value(MeasurementAPIServer, APIExcessPerRestart, WindowStorm,
			LabelVerb, "PATCH", LabelResource, "pods", LabelSubresource, "status"), 42.0 / 7},
		{"api request duration count", float64(hist(MeasurementAPIServer, APIRequestDuration, WindowStorm, LabelClass, ClassMutating).Count), 101},
		{"slice writes", value(MeasurementEndpointSlices, SliceWrites, WindowStorm), 51},
		{"extra watcher events summed", value(MeasurementEndpointSlices, SliceWatcherEvents, ""), 300},
	}
	for _, tt := range tests {
		if !near(tt.got, tt.want) {
			t.Errorf("%s = %v, want %v", tt.name, tt.got, tt.want)
		}
	}
	if _, ok := v.Measurement(MeasurementRecovery).Value(RecoveryUnattributed, WindowStorm, LabelKind, "pod"); ok {
		t.Error("unattributed kept; want it dropped")
	}

	// Windows: per-shard measurements span both shards; cluster-wide ones
	// are the reference shard's.
	b := mergeShard(t, 1).Variants[0]
	if w, _ := v.Measurement(measurementStorm).Window(WindowStorm); !w.Start.Equal(mergeShard(t, 0).Variants[0].StormStart) || !w.End.Equal(b.End) {
		t.Errorf("storm window %v..%v, want shard 0's start to shard 1's end", w.Start, w.End)
	}
	if w, _ := v.Measurement(MeasurementAPIServer).Window(WindowStorm); !w.Start.Equal(b.StormStart) {
		t.Errorf("apiserver storm window starts %v, want the reference shard's %v", w.Start, b.StormStart)
	}
	if !v.StormStart.Equal(mergeShard(t, 0).Variants[0].StormStart) || !v.End.Equal(b.End) || !v.Start.Equal(mergeShard(t, 0).Variants[0].Start) {
		t.Errorf("variant times %v %v %v", v.Start, v.StormStart, v.End)
	}

	// The unrecovered_nodes series: shard 0 from +0.5 s (3, 2, 0), shard 1
	// from +0.75 s (4, 2, 0), on shard 0's axis.
	s := seriesOf(v.Measurement(MeasurementRecovery), SeriesUnrecoveredNodes)
	want := []Point{{T: 1, V: 3}, {T: 2, V: 6}, {T: 3, V: 2}, {T: 4, V: 0}}
	if s == nil || !s.Start.Equal(mergeShard(t, 0).Variants[0].Measurement(MeasurementRecovery).Series[0].Start) || !pointsEqual(s.Points, want) {
		t.Errorf("unrecovered_nodes = %+v, want %v from shard 0's start", s, want)
	}

	if n := MergedShards(m); n != 2 {
		t.Errorf("MergedShards = %d, want 2", n)
	}
	if !m.Complete || !v.Complete {
		t.Error("merged result of complete shards is incomplete")
	}
	notes := strings.Join(MergeNotes(m), "\n")
	for _, w := range []string{"apiserver: cluster-wide figures taken from shard 1", "unattributed dropped", "service_ready: a Service degraded",
		"excess_requests_per_restart recomputed over the 7 restarts of all shards (shard 1 restarted 4)"} {
		if !strings.Contains(notes, w) {
			t.Errorf("merge notes lack %q:\n%s", w, notes)
		}
	}
	warnings := strings.Join(v.Measurement(MeasurementClientLatency).Warnings, "\n")
	if !strings.Contains(warnings, "shards 0, 1: shared caveat") || !strings.Contains(warnings, "shard 1: only in shard 1") {
		t.Errorf("client latency warnings:\n%s", warnings)
	}
}

func pointsEqual(a, b []Point) bool {
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

func TestMergeRejects(t *testing.T) {
	tests := []struct {
		name   string
		edit   func(a, b *Result)
		inputs func(a, b *Result) []*Result
		want   []string
	}{
		{name: "none", inputs: func(a, b *Result) []*Result { return nil }, want: []string{"none given"}},
		{name: "nil", inputs: func(a, b *Result) []*Result { return []*Result{a, nil} }, want: []string{"shard 1 is nil"}},
		{name: "other run", edit: func(a, b *Result) { b.Run.ID = "other"; b.Run.Seed = 8 },
			want: []string{"shard 1 is not of the same run as shard 0: run id other, want shard-run", "seed 8, want 7"}},
		{name: "other profile", edit: func(a, b *Result) { b.Run.Profile = json.RawMessage(`{"seed": 7, "fleet": {"nodes": 13}}`) },
			want: []string{"resolved profiles differ"}},
		{name: "other tool", edit: func(a, b *Result) { b.Run.ToolVersion = "v0.2.0" }, want: []string{"tool version v0.2.0"}},
		{name: "other cluster", edit: func(a, b *Result) { b.Run.Cluster.Versions["kube-apiserver"] = "v1.35.0" }, want: []string{"cluster embedded=false"}},
		{name: "same shard twice", inputs: func(a, b *Result) []*Result { return []*Result{a, a} }, want: []string{"shards 0 and 1 started at the same instant"}},
		{name: "other variants", edit: func(a, b *Result) { b.Variants[0].Variant = "preserve" },
			want: []string{"variant run 0 is preserve#0, want default#0"}},
		{name: "other gates", edit: func(a, b *Result) { b.Variants[0].FeatureGates["ChangeContainerStatusOnKubeletRestart"] = false },
			want: []string{"ran with feature gates"}},
		{name: "complete shard with fewer variant runs", edit: func(a, b *Result) {
			extra := a.Variants[0]
			extra.Repetition = 1
			a.Variants = append(a.Variants, extra)
		}, want: []string{"shard 0 has 2 variant runs but shard 1, which is complete, has 1"}},
		{name: "already merged", inputs: func(a, b *Result) []*Result {
			m, err := Merge(a, b)
			if err != nil {
				t.Fatal(err)
			}
			return []*Result{m}
		}, want: []string{"shard 0 is already merged from 2 shards"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := mergeShard(t, 0), mergeShard(t, 1)
			if tt.edit != nil {
				tt.edit(a, b)
			}
			in := []*Result{a, b}
			if tt.inputs != nil {
				in = tt.inputs(a, b)
			}
			_, err := Merge(in...)
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
	m, err := Merge(a, b)
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
	rec := b.Variants[0].Measurement(MeasurementRecovery)
	for i := range rec.Histograms {
		if rec.Histograms[i].Name == RecoveryStorm {
			rec.Histograms[i] = hdrOf(t, RecoveryStorm, WindowStorm, nil)
		}
	}
	m, err := Merge(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if h := m.Variants[0].Measurement(MeasurementRecovery).Histogram(RecoveryStorm, WindowStorm); h == nil || h.Summary.Count != 0 {
		t.Errorf("fleet_recovered = %+v, want empty: shard 1 had not recovered", h)
	}
}

func TestMergeOneShard(t *testing.T) {
	a := mergeShard(t, 0)
	m, err := Merge(a)
	if err != nil {
		t.Fatal(err)
	}
	if MergedShards(m) != 1 || m.Variants[0].Restarts != 3 {
		t.Errorf("merged shards %d, restarts %d", MergedShards(m), m.Variants[0].Restarts)
	}
	if notes := MergeNotes(m); len(notes) != 0 {
		t.Errorf("one shard: unexpected notes %q", notes)
	}
	if got, _ := m.Variants[0].Measurement(MeasurementAPIServer).Value(APIExcessPerRestart, WindowStorm); got != 200 {
		t.Errorf("excess per restart %v, want 200", got)
	}
}

func TestMergeStormSpread(t *testing.T) {
	a, b := mergeShard(t, 0), mergeShard(t, 1)
	b.Variants[0].StormStart = b.Variants[0].StormStart.Add(3 * time.Second)
	m, err := Merge(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if notes := strings.Join(MergeNotes(m), "\n"); !strings.Contains(notes, "storms started up to 3.01s apart") {
		t.Errorf("no storm spread note:\n%s", notes)
	}
}

func TestSumSeries(t *testing.T) {
	s := func(start time.Duration, pts ...float64) *Series {
		out := &Series{Name: "x", Unit: UnitCount, Start: mergeT0.Add(start)}
		for i := 0; i+1 < len(pts); i += 2 {
			out.Points = append(out.Points, Point{T: pts[i], V: pts[i+1]})
		}
		return out
	}
	tests := []struct {
		name  string
		in    []*Series
		start time.Duration
		want  []Point
	}{
		{"one", []*Series{s(0, 1, 5, 2, 6)}, 0, []Point{{1, 5}, {2, 6}}},
		{"aligned", []*Series{s(0, 1, 5, 2, 6), s(0, 1, 1, 2, 1)}, 0, []Point{{1, 6}, {2, 7}}},
		{"later series holds its last level", []*Series{s(0, 1, 1, 2, 1, 3, 1), s(time.Second, 1, 2)}, 0, []Point{{1, 1}, {2, 3}, {3, 3}}},
		{"earlier second series", []*Series{s(2*time.Second, 1, 1), s(0, 1, 4, 2, 4)}, 0, []Point{{1, 4}, {2, 4}, {3, 5}}},
		{"sub-second offset", []*Series{s(0, 1, 1, 2, 1), s(300*time.Millisecond, 1, 2, 2, 0)}, 0, []Point{{1, 1}, {2, 3}, {3, 1}}},
		{"empty", []*Series{{Name: "x", Unit: UnitCount, Start: mergeT0}}, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := sumSeries(tt.in...)
			if !got.Start.Equal(mergeT0.Add(tt.start)) || !pointsEqual(got.Points, tt.want) {
				t.Errorf("sumSeries = start %v %v, want %v %v", got.Start.Sub(mergeT0), got.Points, tt.start, tt.want)
			}
		})
	}
}
