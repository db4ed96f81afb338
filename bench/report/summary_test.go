package report

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stormbench/stormbench/bench/cluster"
	"github.com/stormbench/stormbench/bench/compare"
	"github.com/stormbench/stormbench/bench/measure/apiserver"
	"github.com/stormbench/stormbench/bench/measure/self"
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
	// The split by flow (issue 45), which the schema fixture predates: it
	// adds up to the fixture's 98.25 per restart, and the raw figure has
	// the simulation's 10.5 more.
	for i := range r.Variants {
		m := r.Variants[i].Measurement(apiserver.Name)
		if m == nil {
			continue
		}
		for _, f := range []struct {
			flow string
			v    float64
		}{{"kubelet", 61.5}, {"endpointslice-controller", 30}, {"node-controller", 4.5}, {"kube-controller-manager", 0.25}, {"kube-scheduler", 0.1}, {"other", 1.9}, {"kwok", -2.5}, {"harness", 13}} {
			m.Values = append(m.Values, result.Value{Name: apiserver.ExcessPerRestart, Window: result.WindowStorm, Unit: result.UnitRequests, Value: f.v, Labels: result.Labels(result.LabelFlow, f.flow)})
		}
		m.Values = append(m.Values, result.Value{Name: apiserver.RawExcessPerRestart, Window: result.WindowStorm, Unit: result.UnitRequests, Value: 108.75})
	}
	// stormbench's CPU split (issue 50), which the fixture predates too,
	// in the first variant only: the second reads as a file before it.
	// 10 ms/s at rest for the 1,000 nodes; the storm's 10 s less 0.4 s of
	// it over 100 restarts.
	st := r.Variants[0].Measurement(self.Name)
	st.Values = append(st.Values,
		result.Value{Name: self.CPUSeconds, Window: result.WindowBaseline, Unit: result.UnitSeconds, Value: 0.6},
		result.Value{Name: self.StandingCPU, Window: result.WindowBaseline, Unit: result.UnitCores, Value: 0.01},
		result.Value{Name: self.MarginalCPU, Window: result.WindowStorm, Unit: result.UnitSeconds, Value: 9.6},
		result.Value{Name: self.MarginalCPUPerRestart, Window: result.WindowStorm, Unit: result.UnitSeconds, Value: 0.096})
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
			m := r.Variants[i].Measurement(self.Name)
			if m == nil {
				t.Fatalf("fixture variant %d has no storm measurement", i)
			}
			m.Values = append(m.Values, result.Value{Name: self.ReadyFlipsCoalesced, Window: result.WindowStorm, Unit: result.UnitCount, Value: tc.coalesced})
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
		"- preserve vs legacy: API excess requests per restart -55.5% (95% CI -57.3%…-53.7%, n = 5 + 5, p = 0.008, adjusted 0.009)",
		"| 158 [155…161] ¹ | 70.3 [67.5…73.1] ¹ | **-55.5% [-57.3%…-53.7%] (p=0.008 adj=0.009 n=5)** |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(out)
	}
}

// TestFlowSplit: the summary splits the key excess per restart by flow,
// after its row, in cluster.Flows' order; flows under half a request per
// restart in every column share a row; the simulation's flows (KWOK's,
// the harness's) are shown apart, and the raw figure beside.
func TestFlowSplit(t *testing.T) {
	flow := func(f string, x float64) result.Value {
		return result.Value{Name: apiserver.ExcessPerRestart, Window: result.WindowStorm, Unit: result.UnitRequests, Value: x, Labels: result.Labels(result.LabelFlow, f)}
	}
	api := func(flows ...result.Value) result.Measurement {
		m := result.Measurement{Name: apiserver.Name}
		key := 0.0
		for _, f := range flows {
			if !cluster.IsSimulationFlow(f.Labels[result.LabelFlow]) {
				key += f.Value
			}
		}
		m.Values = append(m.Values,
			result.Value{Name: apiserver.ExcessPerRestart, Window: result.WindowStorm, Unit: result.UnitRequests, Value: key},
			result.Value{Name: apiserver.RawExcessPerRestart, Window: result.WindowStorm, Unit: result.UnitRequests, Value: key + 20})
		m.Values = append(m.Values, flows...)
		return m
	}
	r := &result.Result{Variants: []result.VariantRun{
		{Variant: "a", Restarts: 10, Measurements: []result.Measurement{api(
			flow("endpointslice-controller", 30), flow("kubelet", 100), flow("other", 0.2), flow("node-controller", 0.1),
			flow("kwok", -5), flow("harness", 25))}},
		{Variant: "b", Restarts: 10, Measurements: []result.Measurement{api(
			flow("kubelet", 90), flow("endpointslice-controller", 12), flow("replicaset-controller", 2), flow("node-controller", -0.3))}},
		{Variant: "c", Restarts: 10},
	}}
	var got []string
	for _, row := range summaryTableRows(r) {
		if !strings.HasPrefix(row.label, "API excess") && !strings.HasPrefix(row.label, "  ") {
			continue
		}
		cells := []string{strings.TrimSpace(row.label)}
		for i := range r.Variants {
			cells = append(cells, row.cell(&r.Variants[i]))
		}
		got = append(got, strings.Join(cells, " | "))
	}
	want := []string{
		"API excess requests/restart | 130.3 | 103.7 | -",
		"by flow: |  |  | ",
		"kubelet | 100.0 | 90.0 | -",
		"endpointslice-controller | 30.0 | 12.0 | -",
		"replicaset-controller | 0.0 | 2.0 | -",
		// node-controller and other: 0.1 + 0.2 and −0.3.
		"2 flows under 0.5 each | 0.3 | -0.3 | -",
		"the simulation's own: harness / KWOK | 25.0 / -5.0 | - / - | -",
		"raw: all requests, the simulation's included | 150.3 | 123.7 | -",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The split adds up to the key figure in every column that has it.
	for i := range r.Variants[:2] {
		v := &r.Variants[i]
		key, _ := v.Measurement(apiserver.Name).Value(apiserver.ExcessPerRestart, result.WindowStorm)
		sum := 0.0
		for f, x := range flowExcess(v) {
			if !cluster.IsSimulationFlow(f) {
				sum += x
			}
		}
		if math.Abs(sum-key) > 1e-9 {
			t.Errorf("%s: flows add up to %v, key figure %v", v.Variant, sum, key)
		}
	}
}

// TestToolCPUSplit: the summary's cell of stormbench's standing and
// marginal CPU, with either figure missing (a baseline too short, no
// restart) and with neither (a result before the split).
func TestToolCPUSplit(t *testing.T) {
	standing := result.Value{Name: self.StandingCPU, Window: result.WindowBaseline, Unit: result.UnitCores, Value: 0.0125}
	perRestart := result.Value{Name: self.MarginalCPUPerRestart, Window: result.WindowStorm, Unit: result.UnitSeconds, Value: 0.0204}
	for _, tc := range []struct {
		name   string
		values []result.Value
		want   string
	}{
		{"both", []result.Value{standing, perRestart}, "12.5 ms/s; 20.4 ms"},
		{"standing only", []result.Value{standing}, "12.5 ms/s; -"},
		{"per restart only", []result.Value{perRestart}, "-; 20.4 ms"},
		{"neither", nil, "-"},
	} {
		v := &result.VariantRun{Measurements: []result.Measurement{{Name: self.Name, Values: tc.values}}}
		if got := toolCPUSplit(v); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestSelfCostMetrics: compare and the figure blocks name the two costs
// by ID, and read the figures the summary shows.
func TestSelfCostMetrics(t *testing.T) {
	ms, err := compare.LookupMetrics(result.MetricStandingCPU, result.MetricMarginalCPUPerRestart)
	if err != nil {
		t.Fatal(err)
	}
	r := summaryFixture(t)
	for i, want := range []float64{0.01, 0.096} {
		if got, ok := ms[i].Extract(&r.Variants[0]); !ok || got != want {
			t.Errorf("%s = %v, %t; want %v", ms[i].ID, got, ok, want)
		}
		if got, ok := ms[i].Extract(&r.Variants[1]); ok {
			t.Errorf("%s = %v from a run without it", ms[i].ID, got)
		}
	}
}
