package calibrate

import (
	"fmt"
	"math"
	"slices"

	"github.com/stormbench/stormbench/bench/compare"
)

// How a checked row is judged. A count row, and every row of a file
// written before rules, is judged by the gap between the two sides' 95 %
// intervals (Tolerance.agreeSpread). A timing row says its rule (Row.Rule)
// and what it measures (Row.Span), and is judged at ±max(floor, 10 %) of
// the real figure, where the floor is the resolution of its two ends,
// capped by Tolerance.SecondsAbsolute (0.2 s): a timing that differs by
// more than its ends can be read to is a difference.

// The rules of Row.Rule.
const (
	// RuleShift judges a time per restart (kubelet start → last request)
	// by the Hodges–Lehmann shift of the model's values from the real
	// ones: the median of the n·m differences simulated − real, and its
	// distribution-free 95 % interval [D(k), D(nm+1−k)], k from the exact
	// Mann–Whitney U distribution (bench/compare's AbsoluteShift). The row agrees when that interval reaches into
	// ±tolerance of the real median. One restart that raced (a real
	// kubelet whose first node status beat its first PLEG relist sends its
	// last request 10 s later) moves it by a few differences in n·m, where
	// it widened a t interval of the mean by seconds and made a 40 % gap
	// read "ok".
	RuleShift = "shift"
	// RuleQuantile judges a quantile of the not-ready periods by the gap
	// between the two sides' distribution-free intervals of it
	// (quantileSpread).
	RuleQuantile = "quantile"
	// RuleKS judges the not-ready periods as a distribution: a two-sample
	// Kolmogorov–Smirnov test at 5 % of the real periods against the
	// model's, moved by the shift within ±tolerance that fits them best
	// (ksShifted). A model whose periods have the real median but another
	// spread, or a tail the real ones lack, differs.
	RuleKS = "ks"
)

// ksLevel is the KS test's level: the periods differ when p < ksLevel.
const ksLevel = 0.05

// Span is what a timing row measures, from one instant to another, and
// how finely each is read: the row's absolute floor is the sum of the two
// resolutions (capped by Tolerance.SecondsAbsolute).
type Span struct {
	// From and To name the two instants and the clock that reads them.
	From string `json:"from"`
	To   string `json:"to"`
	// FromResolution and ToResolution are how finely each is read, in
	// seconds.
	FromResolution float64 `json:"fromResolution"`
	ToResolution   float64 `json:"toResolution"`
}

// Resolution is the span's: the sum of its ends'.
func (s Span) Resolution() float64 { return s.FromResolution + s.ToResolution }

// TwoSample is a two-sample test's outcome, for a row judged by one
// (RuleKS).
type TwoSample struct {
	// D is the KS statistic (the largest gap between the two empirical
	// distribution functions) after Shift, and P its p-value.
	D float64 `json:"d"`
	P float64 `json:"p"`
	// Shift is the seconds added to the model's periods, within
	// ±Tolerance, that fitted them best.
	Shift float64 `json:"shift"`
	// Tolerance is the largest shift allowed, in seconds.
	Tolerance float64 `json:"tolerance"`
}

// String is the test in a reader's words: "KS D 0.12, p 0.81, shift +0.2 s".
func (ts *TwoSample) String() string {
	return fmt.Sprintf("KS D %.2f, p %.2g, shift %+.2g s of ±%.2g", ts.D, ts.P, ts.Shift, ts.Tolerance)
}

// secondsTolerance is a timing row's tolerance: ±max(floor, relative ×
// |real|), the floor its span's resolution capped by SecondsAbsolute
// (SecondsAbsolute alone for a row without a span: a file written before
// spans).
func (t Tolerance) secondsTolerance(real float64, span *Span) float64 {
	floor := t.SecondsAbsolute
	if span != nil {
		floor = math.Min(floor, span.Resolution())
	}
	return math.Max(floor, t.SecondsRelative*math.Abs(real)) + 1e-9
}

// judge sets r.Agree (and r.Test for RuleKS) by r's rule. Informational
// rows always agree.
func (t Tolerance) judge(r *Row) {
	if r.Informational {
		r.Agree = true
		return
	}
	if r.Unit != "s" || r.Rule == "" {
		r.Agree = t.agreeSpread(r.Unit, r.Real, r.Simulated, r.RealSpread, r.SimulatedSpread)
		return
	}
	tol := t.secondsTolerance(r.Real, r.Span)
	rv, sv := values(r.RealSpread), values(r.SimulatedSpread)
	switch r.Rule {
	case RuleShift:
		tol = t.secondsTolerance(compare.Median(rv), r.Span)
		sh := compare.AbsoluteShift(rv, sv, 0.95)
		if !sh.Bounded {
			r.Shift = nil
			r.Agree = t.agreeSpread(r.Unit, r.Real, r.Simulated, r.RealSpread, r.SimulatedSpread)
			return
		}
		r.Shift = &ShiftInterval{Estimate: round3(sh.Estimate), Lo: round3(sh.Lo), Hi: round3(sh.Hi), Tolerance: round3(tol)}
		r.Agree = r.Shift.Lo <= tol && r.Shift.Hi >= -tol
	case RuleKS:
		if len(rv) < 2 || len(sv) < 2 {
			// Too few periods to test: judged by the flips and the
			// quantile rows.
			r.Test, r.Agree = nil, true
			return
		}
		ts := ksShifted(rv, sv, tol)
		r.Test, r.Agree = &ts, ts.P >= ksLevel
	default:
		// RuleQuantile, and a rule no longer made ("mean-difference":
		// Welch's interval of the difference of the means, by which
		// issue 46's first tables judged the time to the last request),
		// judged by the gap between the intervals.
		if r.Rule == RuleQuantile && (r.RealSpread == nil || r.SimulatedSpread == nil) {
			// A side without periods has no quantile to compare, as the
			// KS row has no test below 2 periods a side: whether pods
			// flip at all is the flips row's to judge.
			r.Agree = true
			return
		}
		above, below, bounded := gaps(r.Real, r.Simulated, r.RealSpread, r.SimulatedSpread)
		r.Agree = !bounded || max(above, below) <= tol
	}
}

// ShiftInterval is the Hodges–Lehmann shift of a RuleShift row: how much
// later the model's values are than the real ones, with its 95 % interval.
type ShiftInterval struct {
	Estimate float64 `json:"estimate"`
	Lo       float64 `json:"lo"`
	Hi       float64 `json:"hi"`
	// Tolerance is the row's, in seconds.
	Tolerance float64 `json:"tolerance"`
}

// String is the shift in a reader's words: "shift +0.72 s [0.69–0.75] of ±0.19".
func (sh *ShiftInterval) String() string {
	return fmt.Sprintf("shift %+.3g s [%.3g, %.3g] of ±%.2g", sh.Estimate, sh.Lo, sh.Hi, sh.Tolerance)
}

// values is a spread's values, nil without them.
func values(s *Spread) []float64 {
	if s == nil {
		return nil
	}
	return s.Values
}

// ksShifted is the two-sample KS test of real against sim moved by the
// shift in [−tol, tol] that gives the smallest statistic: D changes only
// where a moved model period crosses a real one (shift = r − s), so it is
// evaluated at each such shift within the range, between neighbouring
// ones, and at the range's ends and 0.
func ksShifted(real, sim []float64, tol float64) TwoSample {
	r, s := slices.Clone(real), slices.Clone(sim)
	slices.Sort(r)
	slices.Sort(s)
	cands := []float64{-tol, 0, tol}
	for _, x := range r {
		for _, y := range s {
			if d := x - y; d > -tol && d < tol {
				cands = append(cands, d)
			}
		}
	}
	slices.Sort(cands)
	cands = slices.Compact(cands)
	best := TwoSample{D: math.Inf(1), Tolerance: round3(tol)}
	try := func(shift float64) {
		d := ksStatistic(r, s, shift)
		if d < best.D-1e-12 || (math.Abs(d-best.D) <= 1e-12 && math.Abs(shift) < math.Abs(best.Shift)) {
			best.D, best.Shift = d, shift
		}
	}
	for i, c := range cands {
		try(c)
		if i+1 < len(cands) {
			try((c + cands[i+1]) / 2)
		}
	}
	best.P = ksPValue(best.D, len(r), len(s))
	best.D, best.P, best.Shift = round3(best.D), round3(best.P), round3(best.Shift)
	return best
}

// ksStatistic is sup |F_real − F_sim+shift| over the sorted samples, ties
// taken together.
func ksStatistic(r, s []float64, shift float64) float64 {
	var i, j int
	var d float64
	n, m := float64(len(r)), float64(len(s))
	for i < len(r) || j < len(s) {
		var v float64
		switch {
		case j >= len(s):
			v = r[i]
		case i >= len(r):
			v = s[j] + shift
		default:
			v = math.Min(r[i], s[j]+shift)
		}
		for i < len(r) && r[i] <= v {
			i++
		}
		for j < len(s) && s[j]+shift <= v {
			j++
		}
		d = math.Max(d, math.Abs(float64(i)/n-float64(j)/m))
	}
	return d
}

// ksPValue is the asymptotic p-value of a two-sample KS statistic d of n
// and m values: Q_KS((√nₑ + 0.12 + 0.11/√nₑ) d), nₑ = nm/(n+m), Q_KS(λ) =
// 2 Σ (−1)^(k−1) exp(−2k²λ²) (Stephens 1970; Numerical Recipes 14.3.3),
// good from nₑ ≈ 4.
func ksPValue(d float64, n, m int) float64 {
	ne := float64(n) * float64(m) / float64(n+m)
	lambda := (math.Sqrt(ne) + 0.12 + 0.11/math.Sqrt(ne)) * d
	a2 := -2 * lambda * lambda
	fac, sum, prev := 2.0, 0.0, 0.0
	for k := 1; k <= 100; k++ {
		term := fac * math.Exp(a2*float64(k*k))
		sum += term
		if math.Abs(term) <= 0.001*prev || math.Abs(term) <= 1e-8*sum {
			return math.Min(1, math.Max(0, sum))
		}
		fac, prev = -fac, math.Abs(term)
	}
	return 1 // λ → 0: no evidence of a difference.
}
