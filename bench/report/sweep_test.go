package report

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stormbench/stormbench/bench/compare"
	"github.com/stormbench/stormbench/bench/measure/apiserver"
	"github.com/stormbench/stormbench/bench/measure/churn"
	"github.com/stormbench/stormbench/bench/result"

	"github.com/stormbench/stormbench/bench/testutil"
)

// nan marks a figure a sweep run did not measure.
var nan = math.NaN()

// sweepRun is one run of a capacity sweep variant ("default/wave=100");
// a NaN figure is left out of the run.
func sweepRun(variant string, rep int, p99, throttled, outage, peak float64) result.VariantRun {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	api := result.Measurement{Name: apiserver.Name}
	if !math.IsNaN(p99) {
		api.Histograms = append(api.Histograms, result.Histogram{
			Name: apiserver.RequestDuration, Window: result.WindowStorm, Unit: result.UnitSeconds,
			Labels: result.Labels(result.LabelClass, apiserver.ClassMutating), Summary: result.Summary{Count: 100, P99: p99},
		})
	}
	if !math.IsNaN(throttled) {
		api.Values = append(api.Values, result.Value{Name: apiserver.Throttled, Window: result.WindowStorm, Unit: result.UnitRequests, Value: throttled})
	}
	if !math.IsNaN(peak) {
		api.Values = append(api.Values, result.Value{Name: apiserver.RequestRatePeak, Window: result.WindowStorm, Unit: result.UnitRequestsPerSecond, Value: peak})
	}
	v := result.VariantRun{
		Variant: variant, Repetition: rep, Complete: true, Restarts: 10,
		Start: start, StormStart: start.Add(time.Minute), End: start.Add(2 * time.Minute),
		Measurements: []result.Measurement{api},
	}
	if !math.IsNaN(outage) {
		v.Measurements = append(v.Measurements, result.Measurement{Name: churn.Name, Values: []result.Value{
			{Name: churn.SliceOutageSeconds, Window: result.WindowStorm, Unit: result.UnitSeconds, Value: outage},
		}})
	}
	return v
}

// safeRun is a run at the wave size that meets every criterion.
func safeRun(size int) result.VariantRun {
	return sweepRun(fmt.Sprintf("default/wave=%d", size), 0, 0.2, 0, 0, 10*float64(size))
}

func TestSweep(t *testing.T) {
	at := func(size int, p99, throttled, outage float64) result.VariantRun {
		return sweepRun(fmt.Sprintf("default/wave=%d", size), 0, p99, throttled, outage, 100)
	}
	incomplete := safeRun(100)
	incomplete.Complete = false
	repeated := sweepRun("default/wave=100", 1, 1.5, 0, 0, 100)
	tests := []struct {
		name     string
		variants []result.VariantRun
		// want is, per base variant, "max safe wave: size:safe ...".
		want   []string
		unsafe string // a reason every unsafe row of the first series gives
	}{
		{"all safe", []result.VariantRun{safeRun(50), safeRun(100), safeRun(200)},
			[]string{"default 200: 50:true 100:true 200:true"}, ""},
		{"p99 over the SLO at 200", []result.VariantRun{at(50, 0.1, 0, 0), at(100, 1, 0, 0), at(200, 1.5, 0, 0)},
			[]string{"default 100: 50:true 100:true 200:false"}, "mutating p99 1.50s > 1s"},
		{"429s at 100", []result.VariantRun{at(50, 0.1, 0, 0), at(100, 0.2, 3, 0)},
			[]string{"default 50: 50:true 100:false"}, "3 429 responses"},
		{"outage at the smallest", []result.VariantRun{at(50, 0.1, 0, 2)},
			[]string{"default 0: 50:false"}, "2.00s service outage"},
		// Capacity must hold for every smaller wave: a safe size above an
		// unsafe one does not count.
		{"not monotone", []result.VariantRun{at(50, 0.1, 0, 0), at(100, 2, 0, 0), at(200, 0.1, 0, 0)},
			[]string{"default 50: 50:true 100:false 200:true"}, "mutating p99 2.00s > 1s"},
		{"p99 not measured", []result.VariantRun{at(50, 0.1, 0, 0), at(100, nan, 0, 0)},
			[]string{"default 50: 50:true 100:false"}, "mutating p99 not measured"},
		{"429s not measured", []result.VariantRun{at(50, 0.1, nan, 0)},
			[]string{"default 0: 50:false"}, "429s not measured"},
		{"outage not measured", []result.VariantRun{at(50, 0.1, 0, nan)},
			[]string{"default 0: 50:false"}, "service outage not measured"},
		{"incomplete run", []result.VariantRun{safeRun(50), incomplete},
			[]string{"default 50: 50:true 100:false"}, "incomplete"},
		{"worst repetition", []result.VariantRun{safeRun(50), safeRun(100), repeated},
			[]string{"default 50: 50:true 100:false"}, "mutating p99 1.50s > 1s"},
		{"sizes out of order", []result.VariantRun{safeRun(200), safeRun(50), at(100, 3, 0, 0)},
			[]string{"default 50: 50:true 100:false 200:true"}, "mutating p99 3.00s > 1s"},
		{"two base variants", []result.VariantRun{
			safeRun(50), sweepRun("tuned/wave=50", 0, 0.1, 0, 0, 100),
			at(100, 2, 0, 0), sweepRun("tuned/wave=100", 0, 0.3, 0, 0, 100),
		}, []string{"default 50: 50:true 100:false", "tuned 100: 50:true 100:true"}, "mutating p99 2.00s > 1s"},
		{"not a sweep", []result.VariantRun{sweepRun("legacy", 0, 0.1, 0, 0, 100), sweepRun("x/wave=many", 0, 0.1, 0, 0, 100)}, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			series := Sweep(&result.Result{Variants: tt.variants})
			var got []string
			for _, s := range series {
				g := fmt.Sprintf("%s %d:", s.Variant, s.MaxSafeWave)
				for _, r := range s.Rows {
					g += fmt.Sprintf(" %d:%t", r.WaveSize, r.Safe)
				}
				got = append(got, g)
			}
			if strings.Join(got, "; ") != strings.Join(tt.want, "; ") {
				t.Fatalf("Sweep = %q, want %q", got, tt.want)
			}
			if len(series) == 0 {
				return
			}
			for _, row := range series[0].Rows {
				if row.Safe != (len(row.Unsafe) == 0) {
					t.Errorf("wave %d: safe %t but reasons %q", row.WaveSize, row.Safe, row.Unsafe)
				}
				if !row.Safe && !strings.Contains(strings.Join(row.Unsafe, ", "), tt.unsafe) {
					t.Errorf("wave %d: reasons %q lack %q", row.WaveSize, row.Unsafe, tt.unsafe)
				}
			}
		})
	}
}

func TestSweepFigures(t *testing.T) {
	series := Sweep(&result.Result{Variants: []result.VariantRun{
		sweepRun("default/wave=100", 0, 0.4, 2, 0, 900),
		sweepRun("default/wave=100", 1, 0.7, 1, 0, 1200),
		sweepRun("default/wave=200", 0, nan, 0, 0, nan),
	}})
	if len(series) != 1 || len(series[0].Rows) != 2 {
		t.Fatalf("Sweep = %+v, want one series of two rows", series)
	}
	r := series[0].Rows[0]
	if r.Repetitions != 2 || r.MutatingP99 != 0.7 || r.Throttled != 2 || r.OutageSeconds != 0 || r.PeakRate != 1200 {
		t.Errorf("wave 100 = %+v, want the worst of both repetitions", r)
	}
	if r := series[0].Rows[1]; !math.IsNaN(r.MutatingP99) || !math.IsNaN(r.PeakRate) {
		t.Errorf("wave 200 = %+v, want NaN for the figures not measured", r)
	}
}

func TestSweepVerdict(t *testing.T) {
	for _, tt := range []struct {
		s    SweepSeries
		want string
	}{
		{SweepSeries{Variant: "default", MaxSafeWave: 100}, "default: max safe restart wave: 100 nodes (mutating p99 ≤ 1s, no 429s, no service outage)"},
		{SweepSeries{Variant: "default"}, "default: no wave size tried was safe (mutating p99 ≤ 1s, no 429s, no service outage)"},
	} {
		if got := tt.s.Verdict(); got != tt.want {
			t.Errorf("Verdict() = %q, want %q", got, tt.want)
		}
	}
}

// sweepResult is a capacity sweep of two base variants: default is safe up
// to 100 nodes, tuned at every size.
func sweepResult(t *testing.T) *result.Result {
	t.Helper()
	r := synthetic(t, "sweep", nil)
	r.Run.Fleet = result.Fleet{Nodes: 400, Pods: 4000, Services: 40}
	r.Variants = []result.VariantRun{
		sweepRun("default/wave=50", 0, 0.31, 0, 0, 811),
		sweepRun("default/wave=100", 0, 0.34, 0, 0, 1439),
		sweepRun("default/wave=200", 0, 0.96, 1, 0, 1726),
		sweepRun("default/wave=400", 0, 4.09, 637, 0, 1215),
		sweepRun("tuned/wave=50", 0, 0.12, 0, 0, 700),
		sweepRun("tuned/wave=100", 0, 0.2, 0, 0, 1100),
		sweepRun("tuned/wave=200", 0, 0.45, 0, 0, 1500),
		sweepRun("tuned/wave=400", 0, nan, 0, 0, 1900),
	}
	var buf bytes.Buffer
	if err := result.Encode(&buf, r); err != nil {
		t.Fatalf("sweep result is invalid: %v", err)
	}
	return r
}

func TestReportSweepHTML(t *testing.T) {
	rep, err := Build(compare.Input{Name: "sweep.json", Result: sweepResult(t)}, Options{Charts: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Sweep == nil {
		t.Fatal("no capacity sweep in the report of a sweep")
	}
	var ids []string
	for _, c := range rep.Sweep.Charts {
		ids = append(ids, c.ID)
	}
	if strings.Join(ids, " ") != "sweep-p99 sweep-request-rate" {
		t.Errorf("sweep charts %v, want p99 and request rate", ids)
	}
	var buf bytes.Buffer
	if err := WriteHTML(&buf, rep); err != nil {
		t.Fatal(err)
	}
	doc := parseHTML(t, buf.Bytes())
	assertSelfContained(t, doc)

	// The section comes first: its heading, then its two charts, before
	// the variants table and the per-variant charts.
	page := buf.String()
	section := strings.Index(page, `<h2 id="capacity-sweep">`)
	variants := strings.Index(page, `<h2 id="variants">`)
	if section < 0 || variants < section {
		t.Fatalf("capacity sweep section at %d, variants at %d: want the sweep first", section, variants)
	}
	inSection := page[section:variants]
	if n := strings.Count(inSection, "<svg"); n != 2 || strings.Count(inSection, "<figure") != 2 {
		t.Errorf("capacity sweep section holds %d <svg>, want 2 charts", n)
	}
	for _, want := range []string{
		"default: max safe restart wave: 100 nodes",
		"tuned: max safe restart wave: 200 nodes",
		"no: 1 429 response",
		"no: mutating p99 not measured",
		"SLO 1s",
	} {
		if !strings.Contains(inSection, want) {
			t.Errorf("capacity sweep section lacks %q", want)
		}
	}
	if !strings.Contains(page, `<a href="#capacity-sweep">`) {
		t.Error("no link to the capacity sweep section")
	}
}

func TestReportSweepMarkdownGolden(t *testing.T) {
	rep, err := Build(compare.Input{Name: "sweep.json", Result: sweepResult(t)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Sweep == nil || len(rep.Sweep.Charts) != 0 {
		t.Fatalf("sweep %+v: want the table without charts", rep.Sweep)
	}
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, rep); err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, "report-sweep.md.golden", buf.Bytes())
}

func TestReportNoSweep(t *testing.T) {
	rep, err := Build(compare.Input{Name: "quick-ab.json", Result: readFixture(t)}, Options{Charts: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Sweep != nil {
		t.Errorf("a result without sweep variants has a capacity sweep: %+v", rep.Sweep)
	}
}
