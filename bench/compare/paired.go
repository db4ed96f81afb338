package compare

import (
	"cmp"
	"math"
	"slices"
)

// Paired comparisons: the runs of one result whose blocks each drew their
// own schedule (repetitions.seeds: vary). Both variants of a block played
// the same schedule — the same nodes restarted at the same offsets for the
// same downtimes — so the schedule is a block effect that each block's pair
// of runs shares. Pooling the runs, as the U test does, counts the
// schedule's effect as noise: in the A/A of results/aa (5 + 5, each block
// its own schedule) the blocks' excess requests per restart ran 136–164
// while the two runs of a block differed by -0.1 % to +2.4 %. The analysis
// of a randomised block design compares within blocks: the change is
// estimated from the blocks' own ratios, and since the blocks' schedules
// are drawn at random, the estimate is of the change over schedules.

// PairedShift estimates the relative change from base to cur, paired by
// index (base[i] and cur[i] are one block's runs), with its confidence
// interval at the level (0.95): the Hodges–Lehmann estimate of the
// one-sample problem of the blocks' log ratios log(cur[i]/base[i]) — the
// median of their n(n+1)/2 Walsh averages (dᵢ + dⱼ)/2, i ≤ j — and the
// interval between the Walsh averages of orders k and n(n+1)/2 + 1 - k that
// inverts Wilcoxon's signed-rank test (Hollander & Wolfe, Nonparametric
// Statistical Methods, §3.2). With a zero or negative value the ratios are
// differences over the baseline's median, as in RelativeShift.
//
// Below 6 blocks no pair of Walsh averages reaches 95 %: the interval is
// then their range, [min dᵢ, max dᵢ], marked Reduced, with its coverage
// 1 - 2·2⁻ⁿ (93.8 % for 5 blocks), as MedianInterval does for a median.
func PairedShift(base, cur []float64, confidence float64) Shift {
	n := min(len(base), len(cur))
	s := Shift{N1: n, N2: n, Paired: true}
	if n == 0 {
		return s
	}
	base, cur = base[:n], cur[:n]
	s.Ratio = allOf(func(x float64) bool { return x > 0 }, base, cur)
	rel := func(x float64) float64 { return math.Exp(x) - 1 }
	d := make([]float64, n)
	for i := range n {
		d[i] = s.diff(base[i], cur[i])
	}
	if !s.Ratio {
		bm := MedianInterval(base, confidence).Median
		if bm == 0 {
			if allOf(func(x float64) bool { return x == 0 }, d) {
				s.Bounded, s.Confidence = true, 1
			}
			return s
		}
		rel = func(x float64) float64 { return x / math.Abs(bm) }
	}
	w := walshAverages(d)
	s.Estimate = rel(medianSorted(w))
	if n < 2 {
		return s
	}
	k, conf := signedRankOrder(n, confidence)
	if k == 0 {
		k, conf, s.Reduced = 1, 1-2*math.Pow(0.5, float64(n)), true
	}
	s.Lo, s.Hi, s.Confidence, s.Bounded = rel(w[k-1]), rel(w[len(w)-k]), conf, true
	s.clamp(base, cur)
	return s
}

// walshAverages returns the n(n+1)/2 averages (d[i] + d[j])/2, i ≤ j,
// sorted.
func walshAverages(d []float64) []float64 {
	w := make([]float64, 0, len(d)*(len(d)+1)/2)
	for i := range d {
		for j := i; j < len(d); j++ {
			w = append(w, (d[i]+d[j])/2)
		}
	}
	slices.Sort(w)
	return w
}

// signedRankOrder returns k, the order of the Walsh averages that bounds
// the interval at the level, and its coverage 1 - 2·P(T⁺ ≤ k-1) under the
// exact null distribution of the signed-rank statistic of n blocks; k is 0
// when no k reaches the level (below 6 blocks at 95 %).
func signedRankOrder(n int, confidence float64) (int, float64) {
	cdf := signedRankCDF(n)
	tail := (1 - confidence) / 2
	k := 0
	for k < len(cdf)/2 && cdf[k] <= tail {
		k++
	}
	if k == 0 {
		return 0, 0
	}
	return k, 1 - 2*cdf[k-1]
}

// signedRankCDF returns P(T⁺ ≤ t) for t = 0 … n(n+1)/2, T⁺ the sum of the
// ranks 1…n given a plus sign, each sign a fair coin.
func signedRankCDF(n int) []float64 {
	return cumulative(signedRankCounts(intRange(1, n)), n)
}

// SignedRankP is the two-sided p-value of Wilcoxon's signed-rank test of
// the blocks' differences d (cur - base, or their logarithms) against no
// change: exact, over the 2ⁿ equally likely signs of the ranks of |d|, with
// ties given their average rank and zeros dropped (Wilcoxon's convention).
// It is 1 when every difference is 0.
func SignedRankP(d []float64) float64 {
	nz := slices.DeleteFunc(slices.Clone(d), func(x float64) bool { return x == 0 })
	n := len(nz)
	if n == 0 {
		return 1
	}
	// Doubled average ranks of |d| are integers, so the distribution of
	// their signed sum is counted exactly.
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(math.Abs(nz[a]), math.Abs(nz[b])) })
	ranks2 := make([]int, n)
	for i := 0; i < n; {
		j := i
		for j+1 < n && math.Abs(nz[idx[j+1]]) == math.Abs(nz[idx[i]]) {
			j++
		}
		for k := i; k <= j; k++ {
			ranks2[idx[k]] = i + j + 2 // 2 × the average of ranks i+1 … j+1
		}
		i = j + 1
	}
	t := 0
	for i, x := range nz {
		if x > 0 {
			t += ranks2[i]
		}
	}
	counts := signedRankCounts(ranks2)
	total := math.Pow(2, float64(n))
	var le, ge float64
	for s, c := range counts {
		if s <= t {
			le += c
		}
		if s >= t {
			ge += c
		}
	}
	return min(1, 2*min(le, ge)/total)
}

// MinSignedRankP is the smallest two-sided p-value the signed-rank test can
// give n blocks whatever their values: 2 / 2ⁿ, when every block moves the
// same way. 5 blocks give 0.0625, so no change of 5 blocks is significant
// at 0.05; 6 give 0.031.
func MinSignedRankP(n int) float64 {
	if n <= 0 {
		return 1
	}
	return min(1, 2*math.Pow(0.5, float64(n)))
}

// signedRankCounts returns, for each sum s, the number of the 2ⁿ sign
// assignments whose plus-signed ranks sum to s.
func signedRankCounts(ranks []int) []float64 {
	total := 0
	for _, r := range ranks {
		total += r
	}
	c := make([]float64, total+1)
	c[0] = 1
	sum := 0
	for _, r := range ranks {
		sum += r
		for s := sum; s >= r; s-- {
			c[s] += c[s-r]
		}
	}
	return c
}

// cumulative turns the counts of the 2ⁿ assignments into P(T ≤ s).
func cumulative(counts []float64, n int) []float64 {
	total := math.Pow(2, float64(n))
	out := make([]float64, len(counts))
	acc := 0.0
	for s, c := range counts {
		acc += c
		out[s] = acc / total
	}
	return out
}

func intRange(lo, hi int) []int {
	out := make([]int, 0, hi-lo+1)
	for i := lo; i <= hi; i++ {
		out = append(out, i)
	}
	return out
}
