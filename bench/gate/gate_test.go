package gate

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stormbench/stormbench/bench/compare"
	"github.com/stormbench/stormbench/bench/measure/apiserver"
	"github.com/stormbench/stormbench/bench/measure/churn"
	"github.com/stormbench/stormbench/bench/result"
	"github.com/stormbench/stormbench/profiles"

	"github.com/stormbench/stormbench/bench/testutil"
)

// regressed returns the fixture with the legacy variant made worse: 30 %
// more API requests and slice writes, 2.5 s of service outage.
func regressed(t *testing.T) *result.Result {
	r := readFixture(t)
	setValue(t, r, "legacy", apiserver.Name, apiserver.Requests, func(x float64) float64 { return x * 1.3 })
	setValue(t, r, "legacy", churn.Name, churn.SliceWrites, func(x float64) float64 { return x * 1.3 })
	setValue(t, r, "legacy", churn.Name, churn.SliceOutageSeconds, func(float64) float64 { return 2.5 })
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
			o.MaxRegression = map[string]float64{AllMetrics: 0.10, result.MetricRequests: 0.50}
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
	opts := Options{MaxRegression: map[string]float64{result.MetricSliceWrites: 0.05}}
	for _, tt := range []struct {
		cur  *result.Result
		want Status
	}{{noisy, Pass}, {shifted, Fail}} {
		rep, err := Evaluate(compare.Input{Name: "b", Result: base}, compare.Input{Name: tt.cur.Run.ID, Result: tt.cur}, opts)
		if err != nil {
			t.Fatal(err)
		}
		g := rep.Results[len(rep.Results)-1]
		if g.Metric != result.MetricSliceWrites || g.Status != tt.want {
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
			flags: FlagThresholds{MaxRegression: map[string]float64{"*": 0.5, result.MetricSliceWrites: 0}, MutatingP99: d(2 * time.Second)},
			want: map[string]string{"mutatingP99": "≤ 2s (--max-mutating-p99)", "maxRegression[*]": "≤ +50.0% (--max-regression)",
				"maxRegression[endpointSlices.slice_writes]": "≤ 0.0% (--max-regression)"}},
		// Flags come last, threshold by threshold: the flag's * is every
		// metric's, the profile's own metrics included.
		{name: "a flag's * overrides the profile's metrics", profile: prof(profiles.Gates{MaxRegression: map[string]string{"apiserver.requests": "30%", "*": "50%"}}),
			flags: FlagThresholds{MaxRegression: map[string]float64{"*": 0.1}},
			want:  map[string]string{"maxRegression[apiserver.requests]": "", "maxRegression[*]": "≤ +10.0% (--max-regression)"}},
		{name: "a flag's metric wins over the flag's *", profile: prof(profiles.Gates{MaxRegression: map[string]string{"apiserver.requests": "30%"}}),
			flags: FlagThresholds{MaxRegression: map[string]float64{"*": 0.1, "apiserver.requests": 0.2}},
			want:  map[string]string{"maxRegression[apiserver.requests]": "≤ +20.0% (--max-regression)", "maxRegression[*]": "≤ +10.0% (--max-regression)"}},
		{name: "a flag's metric over the profile's *", profile: prof(profiles.Gates{MaxRegression: map[string]string{"*": "30%"}}),
			flags: FlagThresholds{MaxRegression: map[string]float64{"apiserver.requests": 0.2}},
			want:  map[string]string{"maxRegression[apiserver.requests]": "≤ +20.0% (--max-regression)", "maxRegression[*]": "≤ +30.0% (profile p)"}},
		// A figure's former name (schema 3) is an unknown metric, from a
		// profile and from the flag.
		{name: "former metric name in a profile", profile: prof(profiles.Gates{MaxRegression: map[string]string{"storm.podStatusPatches": "30%"}}),
			err: `profile p: gates.maxRegression[storm.podStatusPatches]: unknown metric "storm.podStatusPatches"`},
		{name: "former metric name flag", flags: FlagThresholds{MaxRegression: map[string]float64{"storm.readyFlipsDown": 0.2}},
			err: `--max-regression: unknown metric "storm.readyFlipsDown"`},
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

// TestVariantsAndRepetitions: a variant on one side only fails, either
// side, as do repetitions below what each side's profile asked for.
func TestVariantsAndRepetitions(t *testing.T) {
	opts := Options{MaxRegression: map[string]float64{result.MetricSliceWrites: 0.5}}
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
			failed: []string{"x/in both, repetitions: the baseline has 1 of the 3 repetitions the gate requires"}},
		// The repetitions required come from the baseline, never from the
		// result judged: a current profile asking for fewer does not pass.
		{name: "fewer repetitions asked and run", base: withReps(synthetic(t, "b", map[string][]float64{"x": {1, 1, 1}}, "x"), 3), cur: withReps(synthetic(t, "c", map[string][]float64{"x": {1}}, "x"), 1),
			failed: []string{"x/in both, repetitions: the current result has 1 of the 3 repetitions the gate requires"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := opts
			o.Variants = tt.variants
			rep, err := Evaluate(compare.Input{Name: "b.json", Result: tt.base}, compare.Input{Name: "c.json", Result: tt.cur}, o)
			if err != nil {
				t.Fatal(err)
			}
			checkFailed(t, rep, tt.failed)
			if rep.OK() != (len(tt.failed) == 0) {
				t.Errorf("OK() = %t", rep.OK())
			}
		})
	}
}

func TestGateGolden(t *testing.T) {
	opts, err := ResolveThresholds(&ThresholdProfile{Source: "profile quick", Gates: &profiles.Gates{
		MaxRegression: map[string]string{result.MetricRequests: "10%", result.MetricSliceWrites: "10%", result.MetricReadyFlips: "10%"},
		RecoveryP99:   &metav1.Duration{Duration: 30 * time.Second},
	}}, FlagThresholds{MaxRegression: map[string]float64{result.MetricPodReadyP99: 0.10}})
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
	g.Samples = &Samples{Current: compare.MedianInterval([]float64{50, 10, 30, 40, 20}, 0.95), Baseline: compare.MedianInterval([]float64{9, 10, 11, 12, 8, 10.5}, 0.95)}
	if got, want := gateValue(g), "30 [10…50] (93.8%) n=5"; got != want {
		t.Errorf("value %q, want %q", got, want)
	}
	if got, want := gateBaseline(g), "10 [8…12] n=6"; got != want {
		t.Errorf("baseline %q, want %q", got, want)
	}
}

// TestGateValueNoValue: a gate without a current figure (a variant missing
// from the current result, a figure not measured) shows "-"; the renderer
// goes by NoValue, not by what Detail says.
func TestGateValueNoValue(t *testing.T) {
	for _, g := range []Check{
		variantGate("x", -1, 1, 1, "missing"),
		notMeasured(Check{Kind: KindSLO, Unit: result.UnitSeconds}, &result.VariantRun{Repetition: 2}),
	} {
		if got := gateValue(g); !g.NoValue || got != "-" {
			t.Errorf("%s %q: NoValue %t, value %q, want \"-\"", g.Kind, g.Detail, g.NoValue, got)
		}
	}
	g := Check{Kind: KindVariant, Status: Fail, Detail: "in the baseline b.json, not measured"}
	if got := gateValue(g); got != "0" {
		t.Errorf("a gate with a figure of 0 shows %q, want \"0\"", got)
	}
}

// TestRegressionVerdicts: a change beyond its threshold fails unless a
// test with the runs to tell, corrected by Holm over the variant's family,
// finds it not significant; with too few runs the medians decide.
func TestRegressionVerdicts(t *testing.T) {
	one := map[string]float64{result.MetricSliceWrites: 0.3}
	// all gates three measured metrics of the synthetic result: API
	// requests, slice writes and outage seconds.
	all := map[string]float64{AllMetrics: 0.1}
	base5 := []float64{100, 101, 102, 103, 104}
	tests := []struct {
		name      string
		base, cur []float64
		maxReg    map[string]float64
		status    Status
		tooFew    bool
		detail    string
	}{
		{"1 run with 5× the baseline's 5 fails on the medians", base5, []float64{510}, one, Fail, true, "judged on the medians: n=5+1 is too few for the U test: its smallest p, 0.333, times 1 gates (Holm) is above α 0.05"},
		{"5+5 within the threshold", base5, []float64{110, 111, 112, 113, 114}, one, Pass, false, "+9.8% from 102"},
		{"5+5 beyond the threshold and significant", base5, []float64{140, 141, 142, 143, 144}, one, Fail, false, "p=0.008, Holm-adjusted over 1 gates 0.008, n=5+5"},
		{"5+5 beyond the threshold, not significant", []float64{100, 140, 90, 130, 95}, []float64{135, 92, 138, 99, 131}, one, Pass, false, "not significant"},
		{"4+4 not significant with a family of one", []float64{100, 101, 102, 103}, []float64{99, 150, 150, 100}, map[string]float64{result.MetricSliceWrites: 0.1}, Pass, false, "not significant"},
		{"4+4 too few once a family of three is corrected", []float64{100, 101, 102, 103}, []float64{99, 150, 150, 100}, all, Fail, true, "its smallest p, 0.029, times 3 gates (Holm) is above α 0.05"},
		{"+29% under a 10% threshold, significant", base5, []float64{129, 130, 131, 132, 133}, all, Fail, false, "Holm-adjusted over 3 gates 0.024"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := synthetic(t, "b", map[string][]float64{"x": tt.base}, "x")
			c := synthetic(t, "c", map[string][]float64{"x": tt.cur}, "x")
			rep, err := Evaluate(compare.Input{Name: "b.json", Result: b}, compare.Input{Name: "c.json", Result: c},
				Options{MaxRegression: tt.maxReg, Alpha: 0.05})
			if err != nil {
				t.Fatal(err)
			}
			i := slices.IndexFunc(rep.Results, func(g Check) bool { return g.Metric == result.MetricSliceWrites && g.Kind == KindRegression })
			if i < 0 {
				t.Fatalf("no slice-writes regression gate in %+v", rep.Results)
			}
			g := rep.Results[i]
			if g.Status != tt.status || g.TooFew != tt.tooFew || !strings.Contains(g.Detail, tt.detail) {
				t.Errorf("gate %s (too few %t): %s; want %s (too few %t) with %q", g.Status, g.TooFew, g.Detail, tt.status, tt.tooFew, tt.detail)
			}
		})
	}
}

// TestProfileVariantMissing: a result lacking a variant its own profile
// lists fails, with or without a baseline; a sweep's runs count as their
// variant's.
func TestProfileVariantMissing(t *testing.T) {
	withVariants := func(r *result.Result, names ...string) *result.Result {
		var vs []string
		for _, n := range names {
			vs = append(vs, fmt.Sprintf(`{"name":%q}`, n))
		}
		r.Run.Profile = json.RawMessage(`{"metadata":{"name":"synthetic"},"storm":{"kind":"kubelet"},"variants":[` + strings.Join(vs, ",") + `]}`)
		return r
	}
	tests := []struct {
		name   string
		cur    *result.Result
		base   *result.Result
		failed []string
	}{
		{"all ran", withVariants(synthetic(t, "c", map[string][]float64{"x": {1}, "y": {1}}, "x", "y"), "x", "y"), nil, nil},
		{"one lost, no baseline", withVariants(synthetic(t, "c", map[string][]float64{"x": {1}}, "x"), "x", "y"), nil,
			[]string{"y/in its profile, ran: listed by the profile recorded in c.json, missing from its runs (it has: x)"}},
		{"one lost, with a baseline of the same", withVariants(synthetic(t, "c", map[string][]float64{"x": {1}}, "x"), "x", "y"),
			synthetic(t, "b", map[string][]float64{"x": {1}}, "x"), []string{"y/in its profile, ran"}},
		{"sweep runs count as their variant", withVariants(synthetic(t, "c", map[string][]float64{"x/wave=5": {1}, "y/wave=5": {1}}, "x/wave=5", "y/wave=5"), "x", "y"), nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var base compare.Input
			opts := Options{} // the synthetic runs have no latency histograms
			if tt.base != nil {
				base = compare.Input{Name: "b.json", Result: tt.base}
				opts.MaxRegression = map[string]float64{result.MetricSliceWrites: 0.1}
			}
			rep, err := Evaluate(base, compare.Input{Name: "c.json", Result: tt.cur}, opts)
			if err != nil {
				t.Fatal(err)
			}
			checkFailed(t, rep, tt.failed)
		})
	}
}

// TestEvaluateUndecodableProfile: a recorded profile that does not decode
// is an error naming its result, not a profile without repetitions or
// variants.
func TestEvaluateUndecodableProfile(t *testing.T) {
	bad := func(r *result.Result) *result.Result {
		r.Run.Profile = json.RawMessage(`{"metadata":{"name":"synthetic"},"variants":[{"nmae":"x"}]}`)
		return r
	}
	good := func() *result.Result { return synthetic(t, "r", map[string][]float64{"x": {1}}, "x") }
	for _, tt := range []struct {
		name       string
		base, cur  *result.Result
		wantErrFor string
	}{
		{"current", nil, bad(good()), "c.json"},
		{"baseline", bad(good()), good(), "b.json"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var base compare.Input
			if tt.base != nil {
				base = compare.Input{Name: "b.json", Result: tt.base}
			}
			_, err := Evaluate(base, compare.Input{Name: "c.json", Result: tt.cur}, Options{})
			if want := "invalid profile recorded in " + tt.wantErrFor; err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "variants[0].nmae") {
				t.Errorf("Evaluate = %v, want an error with %q and the field", err, want)
			}
		})
	}
}
