package calibrate

import (
	"bytes"
	"testing"
	"time"

	"github.com/stormbench/stormbench/bench/result"
	"github.com/stormbench/stormbench/bench/testutil"
)

func sampleResult() *Result {
	start := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	tol := DefaultTolerance()
	row := func(metric, unit string, real, sim float64) Row {
		return Row{Metric: metric, Unit: unit, Real: real, Simulated: sim, Agree: tol.agree(unit, real, sim)}
	}
	c := CaseResult{Case: Cases()[0], Rows: []Row{
		row("kubelet: get pods", "/restart", 15, 10),
		row("kubelet: patch pods/status", "/restart", 10, 10),
		row("kubelet: create csinodes", "/restart", 0, 1),
		row(MetricNotReadyP50, "s", 0.013, 8.88),
		row(MetricReadyFlips, "/restart", 0, 0),
		// A real count that varied by restart: the model's 2 lies in its
		// interval.
		{Metric: "kubelet: get csinodes", Unit: "/restart", Real: 3, Simulated: 2, Agree: true,
			RealSpread:      &Spread{N: 2, Min: 2, Max: 4, CI95: &Interval{Lo: 0, Hi: 15.706}},
			SimulatedSpread: &Spread{N: 2, Min: 2, Max: 2, CI95: &Interval{Lo: 2, Hi: 2}}},
		// The longest not-ready period, judged by the periods' range, and
		// a median of too few periods for an interval.
		ksRow(tol),
		{Metric: MetricNotReadyMax, Unit: "s", Real: 3.98, Simulated: 0.19, Agree: true, Informational: true,
			RealSpread:      &Spread{N: 22, Min: 0.01, Max: 3.98, CI95: &Interval{Lo: 0.01, Hi: 3.98}, Of: "periods"},
			SimulatedSpread: &Spread{N: 25, Min: 0.01, Max: 0.19, CI95: &Interval{Lo: 0.01, Hi: 0.19}, Of: "periods"}},
		{Metric: MetricNotReadyP50 + " (exited)", Unit: "s", Real: 7.68, Simulated: 1.23, Agree: true,
			RealSpread:      &Spread{N: 5, Min: 3.16, Max: 9.61, CI95: &Interval{Lo: 3.16, Hi: 9.61, Unbounded: true}, Of: "periods"},
			SimulatedSpread: &Spread{N: 5, Min: 0.397, Max: 6.45, CI95: &Interval{Lo: 0.397, Hi: 6.45, Unbounded: true}, Of: "periods"}},
		{Metric: MetricKubeletCPU, Unit: "s", Real: 0.24, Simulated: 0.042, Agree: true, Informational: true},
	}}
	c.Restarts.Real, c.Restarts.Simulated = 2, 2
	failed := CaseResult{Case: Cases()[4], Errors: []string{"real node cal-real-1: kubelet exited (exit status 1) (kubelet log: /x/kubelet.log)"},
		Rows: []Row{
			// A host-bound case: the real kubelet's periods stretched on a
			// saturated host; the model's, below them, agree one-sided.
			{Metric: MetricNotReadyP50, Unit: "s", Real: 10.9, Simulated: 4.52, Agree: true, HostBound: true},
		},
		Host: &CaseHost{WindowSeconds: 120, SaturatedSeconds: 96, BusyMean: 0.97, Bound: true}}
	failed.Restarts.Real, failed.Restarts.Simulated = 1, 2
	return &Result{APIVersion: "stormbench.io/v1alpha1", Kind: ResultKind, SchemaVersion: SchemaVersion,
		Command: "stormbench calibrate --cases kubelet/legacy,reboot", Start: start, End: start.Add(3 * time.Minute), Complete: true,
		Machine: &result.Machine{CPUModel: "AMD EPYC 7B13", CPUs: 2, MemoryBytes: 24 << 30, Kernel: "6.1.0", CgroupVersion: 1, GoVersion: "go1.26.0", OS: "linux", Arch: "amd64"},
		Tool:    "0123abc", ModelFingerprint: "811c30492429aaaa",
		KubeVersion: "v1.36.3", Nodes: 2, PodsPerNode: 5, ProbePeriod: "10s", InitDuration: "0s", Tolerance: tol,
		Cases: []CaseResult{c, failed}}
}

// ksRow is a not-ready distribution judged by the KS test: the real
// periods spread over the probe period, the model's all at its middle, the
// same median.
func ksRow(tol Tolerance) Row {
	var rd, sd []time.Duration
	for i := 0; i < 20; i++ {
		rd = append(rd, time.Duration(i)*500*time.Millisecond)
		sd = append(sd, 4750*time.Millisecond+time.Duration(i)*25*time.Millisecond)
	}
	r := Row{Metric: MetricNotReadyKS, Unit: "s", Rule: RuleKS, Span: spanNotReady, Real: round3(meanSeconds(rd)), Simulated: round3(meanSeconds(sd)),
		RealSpread: periodsSpread(rd), SimulatedSpread: periodsSpread(sd)}
	tol.judge(&r)
	return r
}

// TestRenderGolden: the terminal, markdown and HTML tables of a fixed
// result; rows outside tolerance are marked DIFFERS, cost rows info.
func TestRenderGolden(t *testing.T) {
	r := sampleResult()
	for name, render := range map[string]func(*bytes.Buffer) error{
		"table.txt.golden":  func(b *bytes.Buffer) error { return WriteText(b, r) },
		"table.md.golden":   func(b *bytes.Buffer) error { return WriteMarkdown(b, r) },
		"table.html.golden": func(b *bytes.Buffer) error { return WriteHTML(b, r) },
	} {
		var b bytes.Buffer
		if err := render(&b); err != nil {
			t.Fatal(err)
		}
		testutil.Golden(t, name, b.Bytes())
	}
	if d := r.Disagreements(); len(d) != 5 || d[3] != "kubelet/legacy: "+MetricNotReadyKS || d[4] != "reboot: failed restarts" {
		t.Errorf("disagreements %v, want get pods, create csinodes, the not-ready p50, the not-ready KS and reboot's failed restarts", d)
	}
}

func TestResultValidate(t *testing.T) {
	r := sampleResult()
	if err := r.Validate(); err != nil {
		t.Fatalf("valid result refused: %v", err)
	}
	for name, mutate := range map[string]func(*Result){
		"kind":     func(r *Result) { r.Kind = "Result" },
		"schema":   func(r *Result) { r.SchemaVersion = SchemaVersion + 1 },
		"negative": func(r *Result) { r.Cases[0].Rows[0].Real = -1 },
	} {
		r := sampleResult()
		mutate(r)
		if err := r.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
