package compare

import (
	"cmp"
	"math"
	"slices"

	"github.com/aclements/go-moremath/stats"
)

// Interval is a sample's median with its distribution-free confidence
// interval: order statistics of the sample, chosen from the binomial
// distribution as benchstat (golang.org/x/perf/benchmath) does.
type Interval struct {
	// N is the sample size.
	N int `json:"n"`
	// Median is the sample median.
	Median float64 `json:"median"`
	// Lo and Hi bound the interval; meaningful only when Bounded.
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
	// Confidence is the interval's actual coverage, at least the level
	// asked for unless Reduced; 0 when there is no interval.
	Confidence float64 `json:"confidence"`
	// Bounded is false with fewer than 2 values.
	Bounded bool `json:"bounded"`
	// Reduced is set when the sample is too small for any pair of order
	// statistics to reach the level asked for (95 % needs 6 runs): the
	// interval is then the sample's range, [min, max], and Confidence its
	// lower coverage (93.8 % for 5 runs, 87.5 % for 4).
	Reduced bool `json:"reduced,omitempty"`
}

// MedianInterval returns the median of values and its confidence interval
// at the given level (0.95). The interval holds the population median with
// at least that probability whatever the distribution: its bounds are
// order statistics, chosen from Binomial(n, 1/2) (moremath's QuantileCI,
// benchmath's AssumeNothing). When n is too small for the level, the range
// of the sample is given instead, marked Reduced, with its own coverage
// 1 - 2·2⁻ⁿ: a figure from 5 runs is better shown with an interval of
// 93.8 % than with none.
func MedianInterval(values []float64, confidence float64) Interval {
	xs := slices.Clone(values)
	slices.Sort(xs)
	iv := Interval{N: len(xs)}
	if iv.N == 0 {
		return iv
	}
	iv.Median = medianSorted(xs)
	if iv.N < 2 {
		return iv
	}
	ci := stats.QuantileCI(iv.N, 0.5, confidence)
	if ci.LoOrder >= 1 && ci.HiOrder <= iv.N {
		iv.Lo, iv.Hi, iv.Confidence, iv.Bounded = xs[ci.LoOrder-1], xs[ci.HiOrder-1], ci.Confidence, true
		return iv
	}
	iv.Lo, iv.Hi, iv.Bounded, iv.Reduced = xs[0], xs[iv.N-1], true, true
	iv.Confidence = 1 - 2*math.Pow(0.5, float64(iv.N))
	return iv
}

// MedianRuns is the fewest runs whose order statistics bound the median at
// the confidence level (6 for 95 %).
func MedianRuns(confidence float64) int {
	return fewest(2, 100, func(n int) bool {
		ci := stats.QuantileCI(n, 0.5, confidence)
		return ci.LoOrder >= 1 && ci.HiOrder <= n
	})
}

// fewest is the smallest n in [lo, hi) for which ok holds; hi for none.
func fewest(lo, hi int, ok func(n int) bool) int {
	for n := lo; n < hi; n++ {
		if ok(n) {
			return n
		}
	}
	return hi
}

// Shift is the relative change from a baseline sample to another: the
// Hodges-Lehmann estimate (the median of every pairwise change) with its
// distribution-free confidence interval, the one that inverts the
// Mann-Whitney U test (Hollander & Wolfe, Nonparametric Statistical
// Methods, §4.3).
type Shift struct {
	// N1 and N2 are the baseline's and the other sample's sizes.
	N1, N2 int
	// Estimate is the relative change: -0.8 is 80 % lower.
	Estimate float64
	// Lo and Hi bound its interval; meaningful only when Bounded.
	Lo, Hi float64
	// Confidence is the interval's actual coverage, at least the level
	// asked for; 0 when there is none.
	Confidence float64
	// Bounded is false when the samples are too small for an interval at
	// the level (95 % needs 4 + 4 runs), or when the baseline is 0.
	Bounded bool
	// Ratio is set when every value is positive and the changes are
	// ratios (cur/base - 1, computed on logarithms); otherwise they are
	// differences divided by the baseline's median.
	Ratio bool
	// Paired is set for PairedShift: the samples are blocks' pairs, N1 = N2
	// blocks, and the interval inverts the signed-rank test.
	Paired bool
	// Reduced is set when the blocks are too few for the level asked for
	// (PairedShift): the interval is then the range of the blocks' changes,
	// and Confidence its lower coverage.
	Reduced bool
}

// RelativeShift estimates the relative change from base to cur with its
// confidence interval at the level (0.95).
//
// With every value positive, the pairwise changes are the n1·n2 log ratios
// log(c/b); their median is the Hodges-Lehmann estimate of the log ratio,
// and the interval is [D(k), D(n1·n2+1-k)] of the sorted log ratios, k the
// largest with P(U ≤ k-1) ≤ (1-level)/2 under the exact null distribution
// of the U statistic (no ties). Both are turned back into relative changes
// (exp(x) - 1). A sample with a zero or negative value uses differences
// c - b instead, divided by the baseline's median; when no value is
// negative, the change and its bounds are then held at -100 % or more.
func RelativeShift(base, cur []float64, confidence float64) Shift {
	s := Shift{N1: len(base), N2: len(cur)}
	if s.N1 == 0 || s.N2 == 0 {
		return s
	}
	s.Ratio = allOf(func(x float64) bool { return x > 0 }, base, cur)
	d := s.changes(base, cur)
	rel := func(x float64) float64 { return math.Exp(x) - 1 }
	if !s.Ratio {
		bm := Median(base)
		switch {
		case bm == 0 && d[0] == 0 && d[len(d)-1] == 0:
			// Zero before and after: no change, exactly.
			s.Bounded, s.Confidence = true, 1
			return s
		case bm == 0:
			s.Estimate = RelChange(0, medianSorted(d))
			return s
		}
		rel = func(x float64) float64 { return x / math.Abs(bm) }
	}
	s.Estimate = rel(medianSorted(d))
	if s.bound(d, confidence, rel) {
		s.clamp(base, cur)
	}
	return s
}

// AbsoluteShift is RelativeShift in the samples' own unit: the
// Hodges-Lehmann estimate of the change from base to cur, the median of
// the n1·n2 differences c - b, with its interval [D(k), D(n1·n2+1-k)] at
// the level, k as in RelativeShift. Nothing is clamped; Ratio is never set.
func AbsoluteShift(base, cur []float64, confidence float64) Shift {
	s := Shift{N1: len(base), N2: len(cur)}
	if s.N1 == 0 || s.N2 == 0 {
		return s
	}
	d := s.changes(base, cur)
	s.Estimate = medianSorted(d)
	s.bound(d, confidence, func(x float64) float64 { return x })
	return s
}

// changes are the n1·n2 pairwise changes from base to cur (diff), sorted.
func (s Shift) changes(base, cur []float64) []float64 {
	d := make([]float64, 0, len(base)*len(cur))
	for _, b := range base {
		for _, c := range cur {
			d = append(d, s.diff(b, c))
		}
	}
	slices.Sort(d)
	return d
}

// bound sets the interval [f(D(k)), f(D(n1·n2+1-k))] of the sorted changes
// d at the level (shiftOrder), and reports whether the samples reach it.
func (s *Shift) bound(d []float64, confidence float64, f func(float64) float64) bool {
	k, conf := shiftOrder(s.N1, s.N2, confidence)
	if k < 1 {
		return false
	}
	s.Lo, s.Hi, s.Confidence, s.Bounded = f(d[k-1]), f(d[len(d)-k]), conf, true
	return true
}

// diff is the change from b to c: their log ratio when the changes are
// ratios, else their difference.
func (s Shift) diff(b, c float64) float64 {
	if s.Ratio {
		return math.Log(c) - math.Log(b)
	}
	return c - b
}

// clamp holds the change and its bounds at -100 % or more when no value
// is negative: a count or a duration falls by at most 100 %; differences
// over the baseline median can say more.
func (s *Shift) clamp(base, cur []float64) {
	if allOf(func(x float64) bool { return x >= 0 }, base, cur) {
		s.Estimate, s.Lo, s.Hi = max(s.Estimate, -1), max(s.Lo, -1), max(s.Hi, -1)
	}
}

// shiftOrder returns k, the order statistic of the n1·n2 pairwise changes
// that bounds the Hodges-Lehmann interval at the level, and the interval's
// actual coverage 1 - 2·P(U ≤ k-1); k is 0 when no k reaches the level.
func shiftOrder(n1, n2 int, confidence float64) (int, float64) {
	u := stats.UDist{N1: n1, N2: n2}
	tail := (1 - confidence) / 2
	k := 0
	for k < n1*n2/2 && u.CDF(float64(k)) <= tail {
		k++
	}
	if k == 0 {
		return 0, 0
	}
	return k, 1 - 2*u.CDF(float64(k-1))
}

// ShiftRuns is the fewest runs per sample, the same in both, for which
// RelativeShift has an interval at the level (4 + 4 for 95 %).
func ShiftRuns(confidence float64) int {
	return fewest(1, 100, func(n int) bool { k, _ := shiftOrder(n, n, confidence); return k > 0 })
}

// Median is the median of values (0 for none); values is not changed.
func Median(values []float64) float64 {
	if len(values) == 0 {
		return 0
	}
	xs := slices.Clone(values)
	slices.Sort(xs)
	return medianSorted(xs)
}

func medianSorted(xs []float64) float64 {
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// allOf reports whether f holds for every value of the samples.
func allOf(f func(float64) bool, samples ...[]float64) bool {
	for _, xs := range samples {
		if slices.ContainsFunc(xs, func(x float64) bool { return !f(x) }) {
			return false
		}
	}
	return true
}

// Holm returns the Holm–Bonferroni adjusted p-values of a family of tests,
// in the order given: the i-th smallest of m p-values becomes
// max over j ≤ i of min(1, (m-j+1)·p(j)). Rejecting where the adjusted p is
// at most α holds the family-wise error rate (the chance of any false
// "significant" in the family) at α whatever the tests' dependence (Holm,
// "A simple sequentially rejective multiple test procedure", 1979). It is
// the correction for a verdict on the whole family, as a gate gives. A NaN
// p-value (no test) stays NaN and is not counted in m.
func Holm(ps []float64) []float64 {
	adj, idx := adjustOrder(ps)
	m := len(idx)
	run := 0.0
	for j, i := range idx {
		run = max(run, min(1, float64(m-j)*ps[i]))
		adj[i] = run
	}
	return adj
}

// BenjaminiHochberg returns the Benjamini–Hochberg adjusted p-values
// (q-values) of a family of tests, in the order given: the i-th smallest of
// m p-values becomes min over j ≥ i of min(1, m/j·p(j)). Rejecting where
// the adjusted p is at most α holds the false discovery rate (the expected
// share of false findings among those reported) at α for independent or
// positively dependent tests (Benjamini & Hochberg, 1995). It is the
// correction for a table that a reader scans row by row. A NaN p-value
// stays NaN and is not counted in m.
func BenjaminiHochberg(ps []float64) []float64 {
	adj, idx := adjustOrder(ps)
	m := len(idx)
	run := 1.0
	for j := m - 1; j >= 0; j-- {
		i := idx[j]
		run = min(run, float64(m)/float64(j+1)*ps[i])
		adj[i] = run
	}
	return adj
}

// adjustOrder returns a result slice with every p-value's slot NaN and the
// indexes of the non-NaN p-values sorted by p, ties in their given order.
func adjustOrder(ps []float64) ([]float64, []int) {
	adj := make([]float64, len(ps))
	idx := make([]int, 0, len(ps))
	for i, p := range ps {
		adj[i] = math.NaN()
		if !math.IsNaN(p) {
			idx = append(idx, i)
		}
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(ps[a], ps[b]) })
	return adj, idx
}
