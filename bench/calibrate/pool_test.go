package calibrate

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// poolRound is a round of two nodes a side with one case, started at
// hour: the get-pods count, the not-ready periods (KS row) and their
// median, the PLEG flashes (informational, no values) and the peak RSS.
func poolRound(hour int, getPods []float64, periods []float64, flashes float64, rss float64, extra ...Row) *Result {
	t0 := time.Date(2026, 12, 7, hour, 0, 0, 0, time.UTC)
	rd := durations(periods)
	ks := Row{Metric: MetricNotReadyKS, Unit: "s", Rule: RuleKS, Span: spanNotReady,
		Real: meanSeconds(rd), Simulated: 0.1, RealSpread: periodsSpread(rd), SimulatedSpread: periodsSpread(durations([]float64{0.1, 0.1}))}
	rows := []Row{
		{Metric: "kubelet: get pods", Unit: "/restart", Real: mean(getPods), Simulated: 10, RealSpread: spreadOf(getPods), SimulatedSpread: spreadOf([]float64{10, 10})},
		{Metric: MetricNotReadyP50, Unit: "s", Rule: RuleQuantile, Span: spanNotReady, Real: quantile(rd, 0.5), Simulated: 0.1},
		ks,
		{Metric: MetricKubeletPeakRSS, Unit: "MiB", Real: rss, Agree: true, Informational: true},
	}
	if flashes > 0 {
		rows = append(rows, Row{Metric: MetricStartFlashes, Unit: "/restart", Real: flashes, Agree: true, Informational: true})
	}
	c := CaseResult{Case: Case{Name: "kubelet/legacy", Kind: "kubelet", Downtime: 5 * time.Second, Observe: 25 * time.Second}, Rows: append(rows, extra...)}
	c.Restarts.Real, c.Restarts.Simulated = 2, 2
	return &Result{Kind: ResultKind, Nodes: 2, PodsPerNode: 5, KubeVersion: "v1.36.3", Tolerance: DefaultTolerance(),
		ModelFingerprint: "abc", Command: fmt.Sprintf("stormbench calibrate --seed %d", hour), Start: t0, End: t0.Add(10 * time.Minute), Complete: true,
		RealNodes: []string{"real-0", "real-1"}, SimulatedNodes: []string{"sim-0", "sim-1"}, Cases: []CaseResult{c}}
}

func TestPool(t *testing.T) {
	a := poolRound(3, []float64{10, 12}, []float64{0.1, 0.2, 0.3}, 0.5, 40)
	b := poolRound(4, []float64{14, 8}, []float64{0.4}, 0, 50,
		Row{Metric: "kubelet: delete pods", Unit: "/restart", Real: 1, Simulated: 0, RealSpread: spreadOf([]float64{1, 1}), SimulatedSpread: spreadOf([]float64{0, 0})})
	p, err := Pool(a, b)
	if err != nil {
		t.Fatal(err)
	}
	c := p.Cases[0]
	if c.Restarts.Real != 4 || c.Restarts.Simulated != 4 {
		t.Errorf("restarts %+v, want 4 a side", c.Restarts)
	}
	if len(p.Rounds) != 2 || !p.Start.Equal(a.Start) || !p.End.Equal(b.End) {
		t.Errorf("rounds %d, %s to %s; want 2, from the first's start to the second's end", len(p.Rounds), p.Start, p.End)
	}
	for _, tc := range []struct {
		metric    string
		real, sim float64
		n         int // the real side's pooled values; 0: none kept
	}{
		{"kubelet: get pods", 11, 10, 4},
		{"kubelet: delete pods", 0.5, 0, 4}, // the first round sent none: 0 for each of its restarts
		{MetricNotReadyKS, 0.25, 0.1, 4},
		{MetricNotReadyP50, 0.2, 0.1, 0}, // nearest rank of the pooled periods
		{MetricStartFlashes, 0.25, 0, 0}, // weighted by restarts; absent in the second round
		{MetricKubeletPeakRSS, 50, 0, 0}, // the rounds' maximum
	} {
		row, ok := p.Row("kubelet/legacy", tc.metric)
		if !ok {
			t.Errorf("%s: no row", tc.metric)
			continue
		}
		if row.Real != tc.real || row.Simulated != tc.sim {
			t.Errorf("%s: real %v, simulated %v; want %v, %v", tc.metric, row.Real, row.Simulated, tc.real, tc.sim)
		}
		if got := len(values(row.RealSpread)); got != tc.n {
			t.Errorf("%s: %d pooled real values, want %d", tc.metric, got, tc.n)
		}
	}
	if row, _ := p.Row("kubelet/legacy", MetricNotReadyP50); row.RealSpread == nil || row.RealSpread.N != 4 || row.Note != "4 vs 4 not-ready periods" {
		t.Errorf("p50 row %+v, want the pooled periods' spread and note", row)
	}
	// Judged again: 11 against 10 is within ±max(0.5, 10 %) by its intervals.
	if row, _ := p.Row("kubelet/legacy", "kubelet: get pods"); !row.Agree {
		t.Errorf("get pods %+v: want it judged again, agreeing", row)
	}
	var b2 strings.Builder
	if err := WriteText(&b2, p); err != nil {
		t.Fatal(err)
	}
	if want := "2 simulated nodes in each of 2 rounds"; !strings.Contains(b2.String(), want) {
		t.Errorf("text header lacks %q:\n%s", want, b2.String())
	}
	p.Command = "stormbench calibrate pool a.json b.json"
	var md strings.Builder
	if err := WriteMarkdown(&md, p); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Made with `stormbench calibrate pool a.json b.json` (2026-12-07 03:00 UTC, 20m0s)", "1. `stormbench calibrate --seed 3`", "2. `stormbench calibrate --seed 4`"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q (the rounds' time together, each round's command)", want)
		}
	}
	// A pooled result pools again, its rounds kept.
	if pp, err := Pool(p, poolRound(5, []float64{11, 11}, []float64{0.2}, 0, 30)); err != nil || len(pp.Rounds) != 3 || pp.Cases[0].Restarts.Real != 6 {
		t.Errorf("pooling a pooled result: %v", err)
	}
}

func TestPoolRefuses(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*Result)
		want   string
	}{
		{"model", func(r *Result) { r.ModelFingerprint = "def" }, "model fingerprint differs"},
		{"nodes", func(r *Result) { r.Nodes = 3 }, "nodes differs"},
		{"backend", func(r *Result) { r.Backend = BackendContainerd }, "backend differs"},
		{"case", func(r *Result) { r.Cases[0].Observe = time.Minute }, "case 1 differs"},
		{"cases", func(r *Result) { r.Cases = nil }, "cases differ"},
	} {
		b := poolRound(4, []float64{10, 10}, []float64{0.4}, 0, 40)
		tc.change(b)
		if _, err := Pool(poolRound(3, []float64{10, 10}, []float64{0.1}, 0, 40), b); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}
