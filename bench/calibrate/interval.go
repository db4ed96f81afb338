package calibrate

import (
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// The intervals that judge a row (Tolerance.agreeSpread). A side's figure
// is a mean over its restarts (a count per restart, the time to the last
// request) or a quantile of its not-ready periods (p50, max), and a row
// agrees when the two sides' 95 % intervals are compatible at the
// tolerance. With 2 restarts a side, as in CI, an interval of a varying
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
	var sum float64
	for _, v := range values {
		sum += v
	}
	mean := sum / float64(n)
	var ss float64
	for _, v := range values {
		ss += (v - mean) * (v - mean)
	}
	half := tCritical(n-1) * math.Sqrt(ss/float64(n-1)/float64(n))
	return &Interval{Lo: round3(math.Max(0, mean-half)), Hi: round3(mean + half)}
}

// bootstrapResamples is how many resamples a quantile's interval draws.
const bootstrapResamples = 2000

// quantileSpread returns a quantile row's sample: the not-ready periods'
// number and range, and the percentile-bootstrap 95 % interval of their
// q-quantile (nearest rank, as quantile). The periods are resampled one
// by one, not by restart: each period is its own pod's probe offset
// (U(0, probe period) after its containers run), so the periods of one
// restart vary about as much as those of two. The draws are seeded by
// the sample, so a table is reproducible. Nil for no periods; no
// interval for one.
func quantileSpread(sorted []time.Duration, q float64) *Spread {
	n := len(sorted)
	if n == 0 {
		return nil
	}
	secs := make([]float64, n)
	for i, d := range sorted {
		secs[i] = d.Seconds()
	}
	s := rangeOf(secs)
	s.Of = "periods"
	if n < 2 {
		return s
	}
	var seed uint64
	for _, d := range sorted {
		seed = seed*1099511628211 + uint64(d)
	}
	rng := rand.New(rand.NewPCG(seed, uint64(n)))
	rank := max(0, int(math.Ceil(q*float64(n)))-1)
	stats := make([]float64, bootstrapResamples)
	draw := make([]float64, n)
	for b := range stats {
		for i := range draw {
			draw[i] = secs[rng.IntN(n)]
		}
		slices.Sort(draw)
		stats[b] = draw[rank]
	}
	slices.Sort(stats)
	lo := stats[int(0.025*bootstrapResamples)]
	hi := stats[int(math.Ceil(0.975*bootstrapResamples))-1]
	s.CI95 = &Interval{Lo: round3(lo), Hi: round3(hi)}
	return s
}
