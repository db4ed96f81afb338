package calibrate

import (
	"math"
	"testing"
	"time"
)

// TestJudgeTimings: timing rows judged by their rules at ±10 % with a
// floor of their span's resolution. Every case marked oldAgree was "ok"
// under the rule before issue 46 (a 1 s floor on the gap between the two
// sides' intervals, a maximum judged by the periods' range) and is now
// outside.
func TestJudgeTimings(t *testing.T) {
	tol := DefaultTolerance()
	old := Tolerance{RequestsAbsolute: 0.5, RequestsRelative: 0.1, SecondsAbsolute: 1, SecondsRelative: 0.1}
	mean := func(real, sim []float64) Row {
		return Row{Metric: MetricLastRequest, Unit: "s", Rule: RuleShift, Span: spanLastRequest,
			Real: round3(avg(real)), Simulated: round3(avg(sim)), RealSpread: spreadOf(real), SimulatedSpread: spreadOf(sim)}
	}
	periods := func(secs []float64) []time.Duration {
		out := make([]time.Duration, len(secs))
		for i, s := range secs {
			out[i] = time.Duration(s * float64(time.Second))
		}
		return out
	}
	quantileRow := func(q float64, real, sim []float64) Row {
		rd, sd := periods(real), periods(sim)
		return Row{Metric: MetricNotReadyP90, Unit: "s", Rule: RuleQuantile, Span: spanNotReady,
			Real: quantile(rd, q), Simulated: quantile(sd, q), RealSpread: quantileSpread(rd, q), SimulatedSpread: quantileSpread(sd, q)}
	}
	ks := func(real, sim []float64) Row {
		rd, sd := periods(real), periods(sim)
		return Row{Metric: MetricNotReadyKS, Unit: "s", Rule: RuleKS, Span: spanNotReady,
			Real: round3(meanSeconds(rd)), Simulated: round3(meanSeconds(sd)), RealSpread: periodsSpread(rd), SimulatedSpread: periodsSpread(sd)}
	}
	// maxRow is the old rule's maximum: judged by the periods' range.
	maxRow := func(real, sim []float64) Row {
		rd, sd := periods(real), periods(sim)
		return Row{Unit: "s", Real: quantile(rd, 1), Simulated: quantile(sd, 1), RealSpread: quantileSpread(rd, 1), SimulatedSpread: quantileSpread(sd, 1)}
	}
	// 50 periods over the probe period (a legacy flip's U(0, 10 s)), and
	// the same with a tail: 10 of them 3 to 5 s where the model has none.
	spread, tight, tailed, short := make([]float64, 50), make([]float64, 50), make([]float64, 50), make([]float64, 50)
	for i := range 50 {
		spread[i] = 0.1 + float64(i)*0.2
		tight[i] = 4.9 + float64(i)*0.004
		short[i] = 0.01 + float64(i)*0.004
		tailed[i] = short[i]
		if i >= 40 {
			tailed[i] = 3 + float64(i-40)*0.2
		}
	}
	shifted := make([]float64, 50)
	for i, v := range spread {
		shifted[i] = v + 0.4
	}
	for _, tc := range []struct {
		name     string
		row      Row
		oldRow   Row // the row under the old rule, when it was another
		oldAgree bool
		agree    bool
	}{
		// Issue 46: kubelet/preserve's start → last request, 1.84 s
		// [1.74–1.95] real against 2.77 s [2.36–3.17] simulated, 1.50×.
		{name: "preserve's last request 1.5× the real kubelet's",
			row:      mean([]float64{1.72, 1.78, 1.84, 1.9, 1.96}, []float64{2.4, 2.6, 2.77, 2.95, 3.13}),
			oldAgree: true, agree: false},
		// Intervals 0.15 s apart (within 10 % of 2 s), but the shift's
		// interval is past it: the sides' half-widths add in the gap
		// rule.
		{name: "means 17 % apart, their intervals 0.15 s apart",
			row:      mean([]float64{1.9, 1.95, 2, 2.05, 2.1, 1.9, 1.95, 2, 2.05, 2.1}, []float64{2.25, 2.3, 2.35, 2.4, 2.45, 2.25, 2.3, 2.35, 2.4, 2.45}),
			oldAgree: true, agree: false},
		{name: "means 5 % apart agree",
			row:      mean([]float64{1.9, 1.95, 2, 2.05, 2.1, 1.9, 1.95, 2, 2.05, 2.1}, []float64{2, 2.05, 2.1, 2.15, 2.2, 2, 2.05, 2.1, 2.15, 2.2}),
			oldAgree: true, agree: true},
		// Below 1 s the old floor passed anything under a second off.
		{name: "0.1 s against 0.6 s: inside the old 1 s floor",
			row:      mean([]float64{0.1, 0.1, 0.1, 0.1, 0.1}, []float64{0.6, 0.6, 0.6, 0.6, 0.6}),
			oldAgree: true, agree: false},
		{name: "0.1 s against 0.105 s: within the resolution",
			row:      mean([]float64{0.1, 0.1, 0.1, 0.1, 0.1}, []float64{0.105, 0.105, 0.105, 0.105, 0.105}),
			oldAgree: true, agree: true},
		// kubelet/preserve on the hollow kubelet, 2026-12-05: one real
		// restart raced (its first node status beat its first PLEG
		// relist; its last request 10 s later). The t interval of its
		// mean holds the model; the shift's does not.
		{name: "one racing restart of ten widens the mean's interval, not the shift's",
			row:      mean([]float64{1.888, 1.887, 1.879, 1.954, 1.871, 1.884, 1.908, 1.841, 11.941, 1.877}, []float64{1.15, 1.142, 1.153, 1.145, 1.167, 1.167, 1.147, 1.143, 1.149, 1.148}),
			oldAgree: true, agree: false},
		{name: "a runtime case the kubelets rode out: one real restart sent a write",
			row:      mean([]float64{0, 0, 0, 0, 0, 0, 0, 0, 0, 10}, []float64{0, 0, 0, 0, 0, 0, 0, 0, 0, 0}),
			oldAgree: true, agree: true},
		// The p90 of a tail, where the old rule judged the maximum by the
		// periods' range, which held both (kubelet/legacy+tcp's 4.22 s
		// against 0.035 s).
		{name: "a real tail the model lacks: p90",
			row: quantileRow(0.9, tailed, short), oldRow: maxRow(tailed, short),
			oldAgree: true, agree: false},
		{name: "p90 of the same periods",
			row: quantileRow(0.9, spread, spread), oldRow: maxRow(spread, spread),
			oldAgree: true, agree: true},
		{name: "p90 of too few periods: not judged",
			row: quantileRow(0.9, tailed[25:], short[25:]), oldRow: maxRow(tailed[25:], short[25:]),
			oldAgree: true, agree: true},
		// The same median (5 s), another distribution: the old rule's
		// median and range rows both passed it.
		{name: "the same median, all at it: KS",
			row: ks(spread, tight), oldRow: maxRow(spread, tight),
			oldAgree: true, agree: false},
		// A KS test is least sensitive in the tails: 10 of 50 periods
		// apart (D 0.2) is within its 5 % critical 0.27. The p90 row
		// above is what catches it.
		{name: "a real tail the model lacks: KS misses it, p90 does not",
			row: ks(tailed, short), oldRow: maxRow(tailed, short),
			oldAgree: true, agree: true},
		{name: "periods moved by 0.4 s, within 10 % of their mean: KS",
			row: ks(spread, shifted), oldRow: maxRow(spread, shifted),
			oldAgree: true, agree: true},
		// runtime/refused on containerd, 5 + 5 nodes (make calibrate
		// CAL_ROUNDS=2, its first round): one real pod not ready for
		// 0.133 s in five outages, none in the model's. The flips row
		// (0.2 against 0 per restart) judges that; a median of one
		// period, or of none, is no figure to hold the other side to.
		{name: "one period against none: p50 not judged",
			row:      quantileRow(0.5, []float64{0.133}, nil),
			oldAgree: true, agree: true},
		{name: "one period against 50: p50 not judged",
			row:      quantileRow(0.5, []float64{9}, spread),
			oldAgree: true, agree: true},
		{name: "one side without periods: KS not judged",
			row: ks(spread, nil), oldRow: maxRow(spread, nil),
			oldAgree: true, agree: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.oldRow
			if o.Unit == "" {
				o = tc.row
			}
			if got := old.agreeSpread("s", o.Real, o.Simulated, o.RealSpread, o.SimulatedSpread); got != tc.oldAgree {
				t.Errorf("old rule: agree %t, want %t", got, tc.oldAgree)
			}
			r := tc.row
			tol.judge(&r)
			if r.Agree != tc.agree {
				t.Errorf("%s: agree %t, want %t (real %v %+v, simulated %v %+v, test %v)", r.Rule, r.Agree, tc.agree, r.Real, r.RealSpread, r.Simulated, r.SimulatedSpread, r.Test)
			}
			if r.Rule == RuleKS && len(values(r.RealSpread)) >= 2 && len(values(r.SimulatedSpread)) >= 2 && r.Test == nil {
				t.Error("a KS row judged without its test")
			}
		})
	}
}

func avg(v []float64) float64 { return sum(v) / float64(len(v)) }

// TestFloor: a timing's absolute floor is its span's resolution, capped
// by the tolerance's SecondsAbsolute; a row without a span (a file before
// spans) has the cap.
func TestFloor(t *testing.T) {
	tol := DefaultTolerance()
	for _, tc := range []struct {
		name string
		real float64
		span *Span
		want float64
	}{
		{"the last request's ends: 10 ms and 1 µs", 0, spanLastRequest, 0.010001},
		{"a not-ready period's ends: 50 ms each", 0, spanNotReady, 0.1},
		{"10 % above the floor", 5, spanNotReady, 0.5},
		{"coarse ends: the 0.2 s cap", 0, &Span{FromResolution: 1, ToResolution: 1}, 0.2},
		{"no span: the cap", 0, nil, 0.2},
	} {
		if got := tol.secondsTolerance(tc.real, tc.span); math.Abs(got-tc.want) > 1e-6 {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	if DefaultTolerance().SecondsAbsolute > 0.2 {
		t.Errorf("the timings' floor cap is %v s, more than 0.2 s", DefaultTolerance().SecondsAbsolute)
	}
}

// TestKS: the statistic, its p-value and the best shift.
func TestKS(t *testing.T) {
	a := []float64{1, 2, 3, 4, 5}
	for _, tc := range []struct {
		name  string
		r, s  []float64
		shift float64
		want  float64
	}{
		{"identical", a, a, 0, 0},
		{"apart", a, []float64{10, 11, 12, 13, 14}, 0, 1},
		{"interleaved", a, []float64{1.5, 2.5, 3.5, 4.5, 5.5}, 0, 0.2},
		{"ties counted together", []float64{1, 1, 2}, []float64{1, 2, 2}, 0, 1.0 / 3},
		{"moved back onto each other", a, []float64{1.5, 2.5, 3.5, 4.5, 5.5}, -0.5, 0},
	} {
		if got := ksStatistic(tc.r, tc.s, tc.shift); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: D %v, want %v", tc.name, got, tc.want)
		}
	}
	// Q_KS(1.358) = 0.05 (the 5 % critical value); D = 0 is no evidence.
	ne := 50.0 * 50 / 100
	d := 1.358 / (math.Sqrt(ne) + 0.12 + 0.11/math.Sqrt(ne))
	if p := ksPValue(d, 50, 50); math.Abs(p-0.05) > 0.001 {
		t.Errorf("p of the 5 %% critical D: %v", p)
	}
	if p := ksPValue(0, 10, 10); p != 1 {
		t.Errorf("p of D 0: %v", p)
	}
	ts := ksShifted(a, []float64{1.5, 2.5, 3.5, 4.5, 5.5}, 0.6)
	if ts.D != 0 || ts.Shift >= 0 || ts.Shift < -0.6 {
		t.Errorf("best shift within ±0.6: %+v, want D 0 at a shift in [-0.6, 0)", ts)
	}
	if ts := ksShifted(a, []float64{1.5, 2.5, 3.5, 4.5, 5.5}, 0.2); ts.D != 0.2 {
		t.Errorf("within ±0.2 no shift fits: %+v, want D 0.2", ts)
	}
}

// TestRejudge: a table judged by the old rule, judged again (Pool of one
// round), its figures kept.
func TestRejudge(t *testing.T) {
	row := Row{Metric: MetricLastRequest, Unit: "s", Rule: RuleShift, Span: spanLastRequest, Real: 1, Simulated: 1.5,
		RealSpread: spreadOf([]float64{1, 1, 1, 1}), SimulatedSpread: spreadOf([]float64{1.5, 1.5, 1.5, 1.5}), Agree: true}
	r := &Result{Tolerance: DefaultTolerance(), Cases: []CaseResult{{Rows: []Row{row, {Metric: MetricKubeletCPU, Unit: "s", Real: 1, Simulated: 9, Informational: true, Agree: true}}}}}
	p, err := Pool(r)
	if err != nil {
		t.Fatal(err)
	}
	if d := p.Disagreements(); len(d) != 1 || d[0] != ": "+MetricLastRequest {
		t.Errorf("disagreements %q, want the last request alone", d)
	}
	if got := p.Cases[0].Rows[0]; p.Rounds != nil || got.Real != 1 || got.Simulated != 1.5 || got.Shift == nil {
		t.Errorf("rejudged row %+v (rounds %v), want its figures kept and a shift", got, p.Rounds)
	}
}
