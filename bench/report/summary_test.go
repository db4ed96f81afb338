package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stormbench/stormbench/bench/compare"
	"github.com/stormbench/stormbench/bench/kubelet"
	"github.com/stormbench/stormbench/bench/measure"
	"github.com/stormbench/stormbench/bench/result"
	"github.com/stormbench/stormbench/bench/testutil"
)

// summaryFixture is the result package's schema fixture, a fixed
// two-variant result covering every summary row.
func summaryFixture(t *testing.T) *result.Result {
	t.Helper()
	r, err := result.ReadFile("../result/testdata/result.golden.json")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestSummaryGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteSummary(&buf, summaryFixture(t)); err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, "summary.golden", buf.Bytes())
}

func TestSummaryIncompleteAndRepetitions(t *testing.T) {
	r := summaryFixture(t)
	r.Complete = false
	r.Variants[1].Variant = "legacy"
	r.Variants[1].Repetition = 1
	r.Variants[1].Measurements = nil
	r.Errors = []string{"interrupted"}
	var buf bytes.Buffer
	if err := WriteSummary(&buf, r); err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, "summary-incomplete.golden", buf.Bytes())
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
		r := summaryFixture(t)
		s := &r.Run.Cluster.Settings
		s.HeartbeatFactor = tt.factor
		s.NodeLeaseDuration = result.Duration(200 * time.Second)
		s.NodeStatusUpdateFrequency = result.Duration(50 * time.Second)
		s.NodeMonitorGracePeriod = result.Duration(250 * time.Second)
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

func TestFmtSeconds(t *testing.T) {
	tests := map[float64]string{
		0: "0s", 0.0000421: "42µs", 0.00123: "1.23ms", 0.0456: "45.6ms", 0.5: "500ms",
		1.234: "1.23s", 12.34: "12.3s", 62.4: "1m02s", 3600: "60m00s",
	}
	for in, want := range tests {
		if got := fmtSeconds(in); got != want {
			t.Errorf("fmtSeconds(%v) = %q, want %q", in, got, want)
		}
	}
}

// TestSummaryCoalescedFlips: the flips row names the flips a busy status
// manager wrote as one status, and only when there are any.
func TestSummaryCoalescedFlips(t *testing.T) {
	for _, tc := range []struct {
		coalesced float64
		want      string
	}{
		{0, ""},
		{3, " (3 coalesced)"},
	} {
		r := summaryFixture(t)
		for i := range r.Variants {
			m := r.Variants[i].Measurement(measure.MeasurementStorm)
			if m == nil {
				t.Fatalf("fixture variant %d has no storm measurement", i)
			}
			m.Values = append(m.Values, result.Value{Name: kubelet.CounterReadyFlipsCoalesced, Window: result.WindowStorm, Unit: result.UnitCount, Value: tc.coalesced})
		}
		var buf bytes.Buffer
		if err := WriteSummary(&buf, r); err != nil {
			t.Fatal(err)
		}
		var row string
		for _, line := range strings.Split(buf.String(), "\n") {
			if strings.HasPrefix(line, "ready flips to not-ready/ready") {
				row = line
			}
		}
		if row == "" {
			t.Fatalf("no flips row in\n%s", buf.String())
		}
		if got := strings.Contains(row, "coalesced"); got != (tc.want != "") || tc.want != "" && !strings.Contains(row, tc.want) {
			t.Errorf("coalesced %v: flips row %q, want %q in it", tc.coalesced, row, tc.want)
		}
	}
}

// interleaved builds a 5 + 5 run from the quick A/B fixture: its two
// variants in the blocks of seed 42, every figure of repetition k scaled
// by 1 + (k-2)/100 (legacy) or 1 + (2-k)/50 (preserve), the fleet restored
// before each storm.
func interleaved(t *testing.T) *result.Result {
	r := readFixture(t)
	base := map[string]result.VariantRun{}
	for _, v := range r.Variants {
		base[v.Variant] = v
	}
	r.Variants = nil
	r.Run.Isolation = result.IsolationRestored
	r.Run.Order = [][]string{{"legacy", "preserve"}, {"preserve", "legacy"}, {"legacy", "preserve"}, {"preserve", "legacy"}, {"legacy", "preserve"}}
	reps := map[string]int{}
	for _, block := range r.Run.Order {
		for _, name := range block {
			k := reps[name]
			reps[name]++
			f := 1 + float64(k-2)/100
			if name == "preserve" {
				f = 1 + float64(2-k)/50
			}
			enc, err := json.Marshal(base[name])
			if err != nil {
				t.Fatal(err)
			}
			var v result.VariantRun
			if err := json.Unmarshal(enc, &v); err != nil {
				t.Fatal(err)
			}
			v.Repetition, v.ResetSeconds = k, 30+float64(len(r.Variants))
			for mi := range v.Measurements {
				m := &v.Measurements[mi]
				for i := range m.Values {
					m.Values[i].Value *= f
				}
				for i := range m.Histograms {
					s := &m.Histograms[i].Summary
					s.P50, s.P90, s.P99, s.Max = s.P50*f, s.P90*f, s.P99*f, s.Max*f
				}
			}
			r.Variants = append(r.Variants, v)
		}
	}
	return r
}

// TestSummaryInterleaved: 5 + 5 interleaved, restored runs show their
// order, the restores, the medians with intervals and n, and the A/B's
// headline sentences.
func TestSummaryInterleaved(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteSummary(&buf, interleaved(t)); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"legacy (n=5)", "preserve (n=5)", "order: 5 blocks", "isolated: the fleet snapshot was restored before every storm", "95% CI", "n = 5 + 5"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q", want)
		}
	}
	testutil.Golden(t, "summary-interleaved.golden", buf.Bytes())
}

// TestReportInterleaved: the report of an interleaved run names its order
// and restores, leads its highlights with the A/B's sentences and shows
// the medians' intervals.
func TestReportInterleaved(t *testing.T) {
	rep, err := Build(compare.Input{Name: "reps.json", Result: interleaved(t)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, rep); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"| Storms | order: 5 blocks",
		"- preserve vs legacy: API excess requests per restart -55.5% (95% CI -57.3%…-53.7%, n = 5 + 5, p = 0.008)",
		"| 158 [155…161] ¹ | 70.3 [67.5…73.1] ¹ | **-55.5% [-57.3%…-53.7%] (p=0.008 n=5)** |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(out)
	}
}

// TestSimulationSplit: the summary's rows of the simulation's own requests
// take the harness's from clientLatency and KWOK's from the apiserver
// measurement, and the excess less them only when both were measured.
func TestSimulationSplit(t *testing.T) {
	api := func(excess float64, kwok *float64) result.Measurement {
		m := result.Measurement{Name: measure.MeasurementAPIServer, Values: []result.Value{
			{Name: measure.APIExcessPerRestart, Window: result.WindowStorm, Unit: result.UnitRequests, Value: excess},
		}}
		if kwok != nil {
			m.Values = append(m.Values, result.Value{Name: measure.APISimulationExcessPerRestart, Window: result.WindowStorm, Unit: result.UnitRequests,
				Labels: result.Labels(result.LabelSource, measure.SourceKWOK), Value: *kwok})
		}
		return m
	}
	client := result.Measurement{Name: measure.MeasurementClientLatency, Values: []result.Value{
		{Name: measure.ClientRequests, Unit: result.UnitRequests, Value: 30, Labels: result.Labels(result.LabelSource, measure.SourceHarness, result.LabelVerb, "PATCH", result.LabelResource, "nodes")},
		{Name: measure.ClientRequests, Unit: result.UnitRequests, Value: 10, Labels: result.Labels(result.LabelSource, measure.SourceHarness, result.LabelVerb, "GET", result.LabelResource, "nodes")},
		{Name: measure.ClientRequests, Unit: result.UnitRequests, Value: 400, Labels: result.Labels(result.LabelSource, measure.SourceKubelet, result.LabelVerb, "GET", result.LabelResource, "pods")},
		{Name: measure.ClientRequests, Unit: result.UnitRequests, Value: 200, Labels: result.Labels(result.LabelSource, measure.SourceKubelet, result.LabelVerb, "PATCH", result.LabelResource, "pods", result.LabelSubresource, "status")},
	}}
	kwok, negative := 6.5, -3.0
	for _, tc := range []struct {
		name                         string
		restarts                     int
		ms                           []result.Measurement
		own, less, kubeletPerRestart string
	}{
		// 40 harness requests over 10 restarts; 150 - 4 - 6.5.
		{"both measured", 10, []result.Measurement{api(150, &kwok), client}, "4.0 / 6.5", "139.5", "60.0"},
		// KWOK sent fewer than its baseline rate: the simulated kubelets
		// held its heartbeats.
		{"KWOK below its baseline", 10, []result.Measurement{api(150, &negative), client}, "4.0 / -3.0", "149.0", "60.0"},
		{"no KWOK figure (exempt APF, an existing cluster)", 10, []result.Measurement{api(150, nil), client}, "4.0 / -", "-", "60.0"},
		{"no client latency", 10, []result.Measurement{api(150, &kwok)}, "- / 6.5", "-", "-"},
		{"no restarts", 0, []result.Measurement{api(150, &kwok), client}, "-", "-", "-"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := &result.VariantRun{Restarts: tc.restarts, Measurements: tc.ms}
			if got := simulationOwn(v); got != tc.own {
				t.Errorf("simulation's own %q, want %q", got, tc.own)
			}
			if got := excessLessSimulation(v); got != tc.less {
				t.Errorf("excess less the simulation's own %q, want %q", got, tc.less)
			}
			if got := kubeletRequests(v); got != tc.kubeletPerRestart {
				t.Errorf("kubelet requests/restart %q, want %q", got, tc.kubeletPerRestart)
			}
		})
	}
}
