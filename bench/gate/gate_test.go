package gate

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stormbench/stormbench/bench/compare"
	"github.com/stormbench/stormbench/bench/measure"
	"github.com/stormbench/stormbench/bench/result"
	"github.com/stormbench/stormbench/profiles"

	"github.com/stormbench/stormbench/bench/testutil"
)

// regressed returns the fixture with the legacy variant made worse: 30 %
// more API requests and slice writes, 2.5 s of service outage.
func regressed(t *testing.T) *result.Result {
	r := readFixture(t)
	setValue(t, r, "legacy", measure.MeasurementAPIServer, measure.APIRequests, func(x float64) float64 { return x * 1.3 })
	setValue(t, r, "legacy", measure.MeasurementEndpointSlices, measure.SliceWrites, func(x float64) float64 { return x * 1.3 })
	setValue(t, r, "legacy", measure.MeasurementEndpointSlices, measure.SliceOutageSeconds, func(float64) float64 { return 2.5 })
	return r
}

func gateOpts(mod func(*Options)) Options {
	o := DefaultOptions()
	if mod != nil {
		mod(&o)
	}
	return o
}

func TestEvaluateGates(t *testing.T) {
	base := compare.Input{Name: "base.json", Result: readFixture(t)}
	tests := []struct {
		name    string
		current *result.Result
		opts    Options
		failed  []string // "variant/gate name"
	}{
		{"same result passes", readFixture(t), gateOpts(func(o *Options) { o.MaxRegression = map[string]float64{AllMetrics: 0.10} }), nil},
		{"regression", regressed(t), gateOpts(func(o *Options) {
			o.MaxRegression = map[string]float64{AllMetrics: 0.10, compare.MetricRequests: 0.50}
			o.MaxOutageSeconds = nil
		}), []string{"legacy/regression EndpointSlice writes", "legacy/regression Service outage seconds"}},
		{"outage SLO", regressed(t), gateOpts(nil), []string{"legacy/SLO service outage seconds"}},
		{"tight latency SLO", readFixture(t), gateOpts(func(o *Options) { o.MutatingP99 = 50 * time.Millisecond }), []string{"legacy/SLO API p99 mutating (storm)"}},
		{"recovery SLO", readFixture(t), gateOpts(func(o *Options) { o.RecoveryP99 = 9700 * time.Millisecond }), []string{"legacy/SLO node recovery p99"}},
		{"one variant", regressed(t), gateOpts(func(o *Options) { o.Variants = []string{"preserve"} }), nil},
		{"incomplete run", func() *result.Result {
			r := readFixture(t)
			r.Variants[1].Measurements[0].Error = "scrape failed"
			return r
		}(), gateOpts(nil), []string{"preserve/run complete"}},
		{"measurement missing", func() *result.Result {
			r := readFixture(t)
			r.Variants[1].Measurements = r.Variants[1].Measurements[1:] // drop apiserver
			return r
		}(), gateOpts(nil), []string{"preserve/SLO API p99 mutating (storm)", "preserve/SLO API p99 LIST (storm)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := Evaluate(base, compare.Input{Name: "cur.json", Result: tt.current}, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			var failed []string
			for _, g := range rep.FailedGates() {
				failed = append(failed, g.Variant+"/"+g.Name)
			}
			if strings.Join(failed, "; ") != strings.Join(tt.failed, "; ") {
				t.Errorf("failed gates %q, want %q", failed, tt.failed)
			}
			if rep.OK() != (len(tt.failed) == 0) {
				t.Errorf("OK() = %t with %d failures", rep.OK(), rep.Failed)
			}
		})
	}
}

func TestEvaluateGatesBadInput(t *testing.T) {
	cur := compare.Input{Name: "cur.json", Result: readFixture(t)}
	for _, tt := range []struct {
		name string
		base compare.Input
		opts Options
		want string
	}{
		{"unknown metric", compare.Input{Name: "b", Result: readFixture(t)}, Options{MaxRegression: map[string]float64{"apiserver.p99": 0.1}}, `unknown metric "apiserver.p99"`},
		{"no baseline", compare.Input{}, Options{MaxRegression: map[string]float64{AllMetrics: 0.1}}, "need a baseline"},
		{"unknown variant", compare.Input{}, Options{Variants: []string{"nope"}}, `no variant "nope"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Evaluate(tt.base, cur, tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// TestRegressionSignificance: with enough repetitions, a median over the
// threshold that the U test cannot tell from noise passes; a real shift
// fails.
func TestRegressionSignificance(t *testing.T) {
	base := synthetic(t, "b", map[string][]float64{"v": {100, 140, 90, 130, 95, 120}}, "v")
	noisy := synthetic(t, "c", map[string][]float64{"v": {150, 90, 135, 100, 128, 140}}, "v")
	shifted := synthetic(t, "d", map[string][]float64{"v": {200, 210, 190, 205, 195, 220}}, "v")
	opts := Options{MaxRegression: map[string]float64{compare.MetricSliceWrites: 0.05}}
	for _, tt := range []struct {
		cur  *result.Result
		want Status
	}{{noisy, Pass}, {shifted, Fail}} {
		rep, err := Evaluate(compare.Input{Name: "b", Result: base}, compare.Input{Name: tt.cur.Run.ID, Result: tt.cur}, opts)
		if err != nil {
			t.Fatal(err)
		}
		g := rep.Results[len(rep.Results)-1]
		if g.Metric != compare.MetricSliceWrites || g.Status != tt.want {
			t.Errorf("%s: %s %s (%s), want %s", tt.cur.Run.ID, g.Metric, g.Status, g.Detail, tt.want)
		}
	}
}

// TestResolveThresholds: defaults, then an explicitly chosen profile, then
// flags, threshold by threshold, each with its source; bad values refused.
func TestResolveThresholds(t *testing.T) {
	d := func(x time.Duration) *time.Duration { return &x }
	md := func(x time.Duration) *metav1.Duration { return &metav1.Duration{Duration: x} }
	f := func(x float64) *float64 { return &x }
	prof := func(g profiles.Gates) *ThresholdProfile { return &ThresholdProfile{Source: "profile p", Gates: &g} }
	tests := []struct {
		name    string
		profile *ThresholdProfile
		flags   FlagThresholds
		want    map[string]string // threshold -> "value (source)"
		err     string
	}{
		{name: "defaults", want: map[string]string{
			"mutatingP99": "≤ 1s (default)", "listP99": "≤ 30s (default)", "maxOutageSeconds": "≤ 0s (default)", "recoveryP99": "off (default)"}},
		{name: "profile over defaults", profile: prof(profiles.Gates{
			MaxRegression: map[string]string{"*": "10%", "apiserver.requests": "5%"},
			MutatingP99:   md(500 * time.Millisecond), RecoveryP99: md(30 * time.Second), MaxOutageSeconds: f(1.5)}),
			want: map[string]string{"mutatingP99": "≤ 500ms (profile p)", "listP99": "≤ 30s (default)", "maxOutageSeconds": "≤ 1.50s (profile p)",
				"recoveryP99": "≤ 30s (profile p)", "maxRegression[*]": "≤ +10.0% (profile p)", "maxRegression[apiserver.requests]": "≤ +5.0% (profile p)"}},
		{name: "0s in a profile turns a gate off, as the flag's 0 does", profile: prof(profiles.Gates{MutatingP99: md(0), MaxOutageSeconds: f(-1)}),
			want: map[string]string{"mutatingP99": "off (profile p)", "maxOutageSeconds": "off (profile p)"}},
		{name: "flag 0 turns a gate off", flags: FlagThresholds{ListP99: d(0), MaxOutageSeconds: f(-1)},
			want: map[string]string{"listP99": "off (--max-list-p99)", "maxOutageSeconds": "off (--max-outage-seconds)"}},
		{name: "flags over profile", profile: prof(profiles.Gates{MaxRegression: map[string]string{"*": "10%"}, MutatingP99: md(10 * time.Millisecond)}),
			flags: FlagThresholds{MaxRegression: map[string]float64{"*": 0.5, compare.MetricSliceWrites: 0}, MutatingP99: d(2 * time.Second)},
			want: map[string]string{"mutatingP99": "≤ 2s (--max-mutating-p99)", "maxRegression[*]": "≤ +50.0% (--max-regression)",
				"maxRegression[endpointSlices.slice_writes]": "≤ 0.0% (--max-regression)"}},
		{name: "profile metric kept beside a flag's *", profile: prof(profiles.Gates{MaxRegression: map[string]string{"apiserver.requests": "30%"}}),
			flags: FlagThresholds{MaxRegression: map[string]float64{"*": 0.1}},
			want:  map[string]string{"maxRegression[apiserver.requests]": "≤ +30.0% (profile p)", "maxRegression[*]": "≤ +10.0% (--max-regression)"}},
		// A figure's former name (schema 3) names today's metric, from a
		// profile and from the flag.
		{name: "former metric names", profile: prof(profiles.Gates{MaxRegression: map[string]string{"storm.podStatusPatches": "30%"}}),
			flags: FlagThresholds{MaxRegression: map[string]float64{"storm.readyFlipsDown": 0.2}},
			want: map[string]string{"maxRegression[storm.pod_status_patches]": "≤ +30.0% (profile p)",
				"maxRegression[storm.ready_flips_down]": "≤ +20.0% (--max-regression)"}},
		{name: "bare number in a profile", profile: prof(profiles.Gates{MaxRegression: map[string]string{"*": "10"}}), err: "give a percentage with %"},
		{name: "unknown metric in a profile", profile: prof(profiles.Gates{MaxRegression: map[string]string{"apiserver.p99": "10%"}}), err: `gates.maxRegression[apiserver.p99]: unknown metric "apiserver.p99"`},
		{name: "negative SLO in a profile", profile: prof(profiles.Gates{MutatingP99: md(-time.Second)}), err: "gates.mutatingP99: -1s: must not be negative"},
		{name: "negative SLO flag", flags: FlagThresholds{RecoveryP99: d(-time.Second)}, err: "--max-recovery-p99 -1s: must not be negative"},
		{name: "NaN outage flag", flags: FlagThresholds{MaxOutageSeconds: f(math.NaN())}, err: "must be a finite number"},
		{name: "Inf outage in a profile", profile: prof(profiles.Gates{MaxOutageSeconds: f(math.Inf(1))}), err: "gates.maxOutageSeconds: +Inf: must be a finite"},
		{name: "unknown metric flag", flags: FlagThresholds{MaxRegression: map[string]float64{"nope": 0.1}}, err: `--max-regression: unknown metric "nope"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := ResolveThresholds(tt.profile, tt.flags)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, s := range o.Sources {
				got[s.Threshold] = s.Value + " (" + s.Source + ")"
			}
			for k, w := range tt.want {
				if got[k] != w {
					t.Errorf("%s = %q, want %q (all: %v)", k, got[k], w, got)
				}
			}
			// Sources and Options agree.
			if (o.MaxOutageSeconds == nil) != strings.HasPrefix(got["maxOutageSeconds"], "off") || (o.MutatingP99 == 0) != strings.HasPrefix(got["mutatingP99"], "off") {
				t.Errorf("options %+v disagree with sources %v", o, got)
			}
			if n := len(o.Sources) - 4; n != len(o.MaxRegression) {
				t.Errorf("%d regression sources for %d thresholds", n, len(o.MaxRegression))
			}
		})
	}
}

// TestGateMetricIDsInSync: profiles validates gate metric names against its
// own list, which must be compare's key metrics.
func TestGateMetricIDsInSync(t *testing.T) {
	if got, want := strings.Join(profiles.GateMetricIDs, " "), strings.Join(compare.MetricIDs(), " "); got != want {
		t.Errorf("profiles.GateMetricIDs:\n%s\nwant compare.MetricIDs():\n%s", got, want)
	}
}

// TestVariantsAndRepetitions: a variant on one side only fails, either
// side, as do repetitions below what each side's profile asked for.
func TestVariantsAndRepetitions(t *testing.T) {
	opts := Options{MaxRegression: map[string]float64{compare.MetricSliceWrites: 0.5}}
	withReps := func(r *result.Result, n int) *result.Result {
		r.Run.Profile = json.RawMessage(fmt.Sprintf(`{"metadata":{"name":"synthetic"},"storm":{"kind":"kubelet"},"repetitions":%d}`, n))
		return r
	}
	tests := []struct {
		name      string
		base, cur *result.Result
		variants  []string
		failed    []string // "variant/gate: detail substring"
	}{
		{name: "same variants", base: synthetic(t, "b", map[string][]float64{"x": {1}, "y": {2}}, "x", "y"), cur: synthetic(t, "c", map[string][]float64{"x": {1}, "y": {2}}, "x", "y")},
		{name: "current lacks a variant", base: synthetic(t, "b", map[string][]float64{"x": {1}, "y": {2}}, "x", "y"), cur: synthetic(t, "c", map[string][]float64{"x": {1}}, "x"),
			failed: []string{"y/in both, repetitions: in the baseline b.json, missing from the current result c.json"}},
		{name: "baseline lacks a variant", base: synthetic(t, "b", map[string][]float64{"x": {1}}, "x"), cur: synthetic(t, "c", map[string][]float64{"x": {1}, "y": {2}}, "x", "y"),
			failed: []string{"y/in both, repetitions: missing from the baseline b.json (it has: x)"}},
		{name: "single variants of other names do not match", base: synthetic(t, "b", map[string][]float64{"x": {1}}, "x"), cur: synthetic(t, "c", map[string][]float64{"z": {1}}, "z"),
			failed: []string{"z/in both, repetitions: missing from the baseline", "x/in both, repetitions: in the baseline b.json, missing from the current"}},
		{name: "--variant ignores the baseline's others", base: synthetic(t, "b", map[string][]float64{"x": {1}, "y": {2}}, "x", "y"), cur: synthetic(t, "c", map[string][]float64{"x": {1}}, "x"), variants: []string{"x"}},
		{name: "current lost a repetition", base: withReps(synthetic(t, "b", map[string][]float64{"x": {1, 1, 1}}, "x"), 3), cur: withReps(synthetic(t, "c", map[string][]float64{"x": {1, 1}}, "x"), 3),
			failed: []string{"x/run complete: 2 of the 3 repetitions its profile asked for", "x/in both, repetitions: the current result has 2 of the 3 repetitions"}},
		{name: "baseline lost a repetition", base: withReps(synthetic(t, "b", map[string][]float64{"x": {1}}, "x"), 3), cur: withReps(synthetic(t, "c", map[string][]float64{"x": {1, 1, 1}}, "x"), 3),
			failed: []string{"x/in both, repetitions: the baseline has 1 of the 3 repetitions its profile asked for"}},
		{name: "fewer repetitions asked and run", base: withReps(synthetic(t, "b", map[string][]float64{"x": {1, 1, 1}}, "x"), 3), cur: withReps(synthetic(t, "c", map[string][]float64{"x": {1}}, "x"), 1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := opts
			o.Variants = tt.variants
			rep, err := Evaluate(compare.Input{Name: "b.json", Result: tt.base}, compare.Input{Name: "c.json", Result: tt.cur}, o)
			if err != nil {
				t.Fatal(err)
			}
			var failed []string
			for _, g := range rep.FailedGates() {
				failed = append(failed, g.Variant+"/"+g.Name+": "+g.Detail)
			}
			if len(failed) != len(tt.failed) {
				t.Fatalf("failed gates %q, want %q", failed, tt.failed)
			}
			for i, w := range tt.failed {
				if !strings.Contains(failed[i], w) {
					t.Errorf("failed gate %q, want %q", failed[i], w)
				}
			}
			if rep.OK() != (len(tt.failed) == 0) {
				t.Errorf("OK() = %t", rep.OK())
			}
		})
	}
}

func TestGateGolden(t *testing.T) {
	opts, err := ResolveThresholds(&ThresholdProfile{Source: "profile quick", Gates: &profiles.Gates{
		MaxRegression: map[string]string{compare.MetricRequests: "10%", compare.MetricSliceWrites: "10%", compare.MetricReadyFlips: "10%"},
		RecoveryP99:   &metav1.Duration{Duration: 30 * time.Second},
	}}, FlagThresholds{MaxRegression: map[string]float64{compare.MetricPodReadyP99: 0.10}})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Evaluate(compare.Input{Name: "base.json", Result: readFixture(t)}, compare.Input{Name: "cur.json", Result: regressed(t)}, opts)
	if err != nil {
		t.Fatal(err)
	}
	var text, junit bytes.Buffer
	if err := WriteText(&text, rep); err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, "gate.txt.golden", text.Bytes())
	if err := WriteJUnit(&junit, rep); err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, "gate.junit.xml.golden", junit.Bytes())

	// The JUnit document parses, with one test case per gate.
	var doc junitSuites
	if err := xml.Unmarshal(junit.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	cases, failures := 0, 0
	for _, s := range doc.Suites {
		cases += len(s.Cases)
		for _, c := range s.Cases {
			if c.Failure != nil {
				failures++
			}
		}
	}
	if cases != len(rep.Results) || failures != rep.Failed || doc.Failures != rep.Failed {
		t.Errorf("JUnit: %d cases, %d failures; report: %d gates, %d failed", cases, failures, len(rep.Results), rep.Failed)
	}
}

func TestPerfDataGolden(t *testing.T) {
	files, err := BuildPerfData(readFixture(t))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	paths, err := WritePerfData(dir, files)
	if err != nil {
		t.Fatal(err)
	}
	wantNames := []string{
		"StormbenchAPIResponsiveness_quick_2026-11-30T08:53:25Z.json",
		"StormbenchRecoveryLatency_quick_2026-11-30T08:53:25Z.json",
		"StormbenchMetrics_quick_2026-11-30T08:53:25Z.json",
	}
	if len(paths) != len(wantNames) {
		t.Fatalf("wrote %v, want %v", paths, wantNames)
	}
	for i, p := range paths {
		if filepath.Base(p) != wantNames[i] {
			t.Errorf("file %d is %s, want %s", i, filepath.Base(p), wantNames[i])
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var pd PerfData
		if err := json.Unmarshal(b, &pd); err != nil || pd.Version != "v1" || len(pd.DataItems) == 0 {
			t.Errorf("%s: %v, version %q, %d items", p, err, pd.Version, len(pd.DataItems))
		}
		testutil.Golden(t, strings.SplitN(wantNames[i], "_", 2)[0]+".perfdata.golden.json", b)
	}
	if _, err := WritePerfData(dir, []PerfFile{{Name: "../x.json"}}); err == nil {
		t.Error("a file name leaving the directory was accepted")
	}
}

// TestGateIntervalDisplay: a regression gate shows each median with its
// interval and n; from 5 runs the interval is their range, with its
// coverage.
func TestGateIntervalDisplay(t *testing.T) {
	g := Check{Kind: KindRegression, Unit: "", Value: 30, Status: Pass}
	base := 10.0
	g.Baseline = &base
	withIntervals(&g, []float64{9, 10, 11, 12, 8, 10.5}, []float64{50, 10, 30, 40, 20})
	if got, want := gateValue(g), "30 [10…50] (93.8%) n=5"; got != want {
		t.Errorf("value %q, want %q", got, want)
	}
	if got, want := gateBaseline(g), "10 [8…12] n=6"; got != want {
		t.Errorf("baseline %q, want %q", got, want)
	}
}
