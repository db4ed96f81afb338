package calibrate

import (
	"math"
	"time"
)

// The intervals that judge a row (Tolerance.agreeSpread). A side's figure
// is a mean over its restarts (a count per restart, the time to the last
// request) or a quantile of its not-ready periods (p50, max), and a row
// agrees when the two sides' intervals are compatible at the tolerance:
// 95 % intervals of the mean and the median, the range for the maximum. With 2 restarts a side, as in CI, an interval of a varying
// count is wide; the committed table runs 5.

// tQuantile975 are Student's t 0.975 quantiles for 1 to 30 degrees of
// freedom (any table of the t distribution).
var tQuantile975 = [...]float64{12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
	2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
	2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042}

// tCritical is the two-sided 95 % critical value of t with df degrees of
// freedom: the table to 30, then the normal's 1.96 with the first two
// terms of its expansion (Abramowitz and Stegun 26.7.5), within 0.001 of
// the exact value from 31 on.
func tCritical(df int) float64 {
	if df <= len(tQuantile975) {
		return tQuantile975[df-1]
	}
	const z = 1.959964
	v := float64(df)
	return z + (z*z*z+z)/(4*v) + (5*z*z*z*z*z+16*z*z*z+3*z)/(96*v*v)
}

// meanInterval is Student's t 95 % interval of the mean of values, which
// are counts or durations (≥ 0: the interval is cut at 0). Nil for fewer
// than 2 values; a point when they are all equal.
func meanInterval(values []float64) *Interval {
	n := len(values)
	if n < 2 {
		return nil
	}
	m := mean(values)
	var ss float64
	for _, v := range values {
		ss += (v - m) * (v - m)
	}
	half := tCritical(n-1) * math.Sqrt(ss/float64(n-1)/float64(n))
	return &Interval{Lo: round3(math.Max(0, m-half)), Hi: round3(m + half)}
}

// quantileSpread returns a quantile row's sample: the not-ready periods'
// number and range, and an interval of their q-quantile.
//
// For q < 1 (the median) it is the distribution-free 95 % interval
// between two order statistics: ranks l < u with P(X(l) ≤ ξq < X(u)) ≥
// 95 % under Binomial(n, q), the shortest such pair (Hahn and Meeker,
// Statistical Intervals, 5.2). It assumes nothing of the periods'
// distribution, only that they are independent: each is its own pod's
// probe offset, U(0, probe period) after its containers run. With too few
// periods no pair reaches 95 % (6 for a median): the interval is
// Unbounded, and the row cannot be judged on that side.
//
// A maximum has no confidence interval (it is no parameter of the
// distribution, and the bootstrap fails for it), so for q = 1 the interval
// is the range of the periods: a model whose periods all lie apart from
// the real ones' differs, one whose longest period is merely shorter or
// longer does not. With fewer periods than a median needs, it is
// Unbounded too.
//
// Nil for no periods.
func quantileSpread(sorted []time.Duration, q float64) *Spread {
	n := len(sorted)
	if n == 0 {
		return nil
	}
	secs := mapped(sorted, time.Duration.Seconds)
	s := rangeOf(secs)
	s.Of = "periods"
	s.CI95 = &Interval{Lo: s.Min, Hi: s.Max, Unbounded: true}
	switch {
	case n < 2:
		// One period bounds no quantile, as two to five bound no median.
	case q >= 1:
		// Below the median's minimum the range says as little.
		s.CI95.Unbounded = n < minMedianPeriods
	default:
		if l, u, ok := orderStatisticRanks(n, q, 0.95); ok {
			s.CI95 = &Interval{Lo: round3(secs[l-1]), Hi: round3(secs[u-1])}
		}
	}
	return s
}

// minMedianPeriods is the fewest periods with a 95 % interval of their
// median: [X(1), X(6)] covers 1 − 2 × 0.5⁶ = 96.9 %, [X(1), X(5)] 93.75 %.
const minMedianPeriods = 6

// orderStatisticRanks returns the 1-based ranks l < u of the shortest
// distribution-free interval [X(l), X(u)] of the q-quantile of n values
// with coverage at least level: Σ_{i=l}^{u-1} C(n,i) q^i (1−q)^(n−i).
// Of equally short pairs it takes the one with the most coverage. ok is
// false when even [X(1), X(n)] covers less.
func orderStatisticRanks(n int, q, level float64) (l, u int, ok bool) {
	// cdf[k] = P(Binomial(n, q) < k), k = 0..n+1.
	pmf := make([]float64, n+1)
	lg, _ := math.Lgamma(float64(n + 1))
	for i := 0; i <= n; i++ {
		li, _ := math.Lgamma(float64(i + 1))
		lni, _ := math.Lgamma(float64(n - i + 1))
		pmf[i] = math.Exp(lg - li - lni + float64(i)*math.Log(q) + float64(n-i)*math.Log1p(-q))
	}
	cdf := make([]float64, n+2)
	for k := 1; k <= n+1; k++ {
		cdf[k] = cdf[k-1] + pmf[k-1]
	}
	best := -1.0
	for width := 1; width < n; width++ {
		for lo := 1; lo+width <= n; lo++ {
			if c := cdf[lo+width] - cdf[lo]; c >= level-1e-12 && c > best {
				l, u, best = lo, lo+width, c
			}
		}
		if best >= 0 {
			return l, u, true
		}
	}
	return 0, 0, false
}
