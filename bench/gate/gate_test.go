package gate

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
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
	other := synthetic(t, "o", map[string][]float64{"x": {1}, "y": {2}}, "x", "y")
	for _, tt := range []struct {
		name string
		base compare.Input
		opts Options
		want string
	}{
		{"unknown metric", compare.Input{Name: "b", Result: readFixture(t)}, Options{MaxRegression: map[string]float64{"apiserver.p99": 0.1}}, `unknown metric "apiserver.p99"`},
		{"no baseline", compare.Input{}, Options{MaxRegression: map[string]float64{AllMetrics: 0.1}}, "need a baseline"},
		{"variant missing from baseline", compare.Input{Name: "o.json", Result: other}, Options{MaxRegression: map[string]float64{AllMetrics: 0.1}}, `no variant "legacy"`},
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

func TestApplyProfile(t *testing.T) {
	o := DefaultOptions()
	zero := 1.5
	err := o.ApplyProfile(&profiles.Gates{
		MaxRegression:    map[string]string{"*": "10%", "apiserver.requests": "5%"},
		MutatingP99:      metav1.Duration{Duration: 500 * time.Millisecond},
		RecoveryP99:      metav1.Duration{Duration: 30 * time.Second},
		MaxOutageSeconds: &zero,
	})
	if err != nil {
		t.Fatal(err)
	}
	if o.MaxRegression[AllMetrics] != 0.10 || o.MaxRegression[compare.MetricRequests] != 0.05 || o.MutatingP99 != 500*time.Millisecond ||
		o.ListP99 != 30*time.Second || o.RecoveryP99 != 30*time.Second || *o.MaxOutageSeconds != 1.5 {
		t.Errorf("options after profile: %+v", o)
	}
	err = o.ApplyProfile(&profiles.Gates{MaxRegression: map[string]string{"apiserver.p99": "10%", "apiserver.requests": "ten"}})
	if err == nil || !strings.Contains(err.Error(), "gates.maxRegression[apiserver.p99]") || !strings.Contains(err.Error(), "gates.maxRegression[apiserver.requests]") {
		t.Errorf("bad profile gates: %v, want both reported with their field path", err)
	}
}

func TestGateGolden(t *testing.T) {
	opts := gateOpts(func(o *Options) {
		o.MaxRegression = map[string]float64{compare.MetricRequests: 0.10, compare.MetricSliceWrites: 0.10, compare.MetricReadyFlips: 0.10, compare.MetricPodReadyP99: 0.10}
		o.RecoveryP99 = 30 * time.Second
	})
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
