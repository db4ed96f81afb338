package compare

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"golang.org/x/perf/benchmath"
)

// TestMedianIntervalMatchesBenchmath checks the order-statistics interval
// against benchstat's own package wherever benchmath has one (n ≥ 6 at
// 95 %), and the range fallback below that.
func TestMedianIntervalMatchesBenchmath(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 1; n <= 40; n++ {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = math.Round(rng.NormFloat64()*100+1000) + float64(i)/1000
		}
		got := MedianInterval(xs, 0.95)
		want := benchmath.AssumeNothing.Summary(benchmath.NewSample(xs, &benchmath.DefaultThresholds), 0.95)
		if got.N != n || got.Median != want.Center {
			t.Fatalf("n=%d: median %v (n %d), benchmath %v", n, got.Median, got.N, want.Center)
		}
		switch {
		case n == 1:
			if got.Bounded {
				t.Errorf("n=1: an interval from one run: %+v", got)
			}
		case n < 6:
			mn, mx := xs[0], xs[0]
			for _, x := range xs {
				mn, mx = min(mn, x), max(mx, x)
			}
			if !math.IsInf(want.Lo, -1) {
				t.Errorf("n=%d: benchmath has a finite interval %v; the fallback should not apply", n, want.Lo)
			}
			wantConf := 1 - 2*math.Pow(0.5, float64(n))
			if !got.Reduced || got.Lo != mn || got.Hi != mx || math.Abs(got.Confidence-wantConf) > 1e-12 {
				t.Errorf("n=%d: got %+v, want the range [%v, %v] at %.4f, reduced", n, got, mn, mx, wantConf)
			}
		default:
			if got.Reduced || got.Lo != want.Lo || got.Hi != want.Hi || got.Confidence != want.Confidence {
				t.Errorf("n=%d: got [%v, %v] at %v (reduced %t), benchmath [%v, %v] at %v", n, got.Lo, got.Hi, got.Confidence, got.Reduced, want.Lo, want.Hi, want.Confidence)
			}
		}
	}
}

func TestMedianIntervalByHand(t *testing.T) {
	// n = 6: P(B ≤ 0) = 1/64; the interval [x(1), x(6)] covers
	// 1 - 2/64 = 96.9 %, [x(2), x(5)] only 1 - 14/64 = 78 %.
	got := MedianInterval([]float64{6, 1, 5, 2, 4, 3}, 0.95)
	if got.Median != 3.5 || got.Lo != 1 || got.Hi != 6 || math.Abs(got.Confidence-62.0/64) > 1e-12 || got.Reduced {
		t.Errorf("got %+v, want median 3.5 in [1, 6] at 62/64", got)
	}
	// n = 5 at 95 %: none; the range covers 1 - 2/32 = 93.75 %.
	got = MedianInterval([]float64{30, 10, 50, 20, 40}, 0.95)
	if got.Median != 30 || got.Lo != 10 || got.Hi != 50 || got.Confidence != 0.9375 || !got.Reduced {
		t.Errorf("got %+v, want median 30 in [10, 50] at 0.9375, reduced", got)
	}
	if n := MedianRuns(0.95); n != 6 {
		t.Errorf("MedianRuns(0.95) = %d, want 6", n)
	}
}

// TestRelativeShiftByHand checks the Hodges-Lehmann interval on samples
// whose 25 pairwise changes are easy to list: 6..14 with multiplicities
// 1,2,3,4,5,4,3,2,1. For 5 + 5 runs, P(U ≤ 2) = 4/252 ≤ 0.025 <
// P(U ≤ 3) = 7/252, so k = 3: the interval is [D(3), D(23)] = [7, 13],
// with coverage 1 - 8/252.
func TestRelativeShiftByHand(t *testing.T) {
	const conf = 1 - 8.0/252
	tests := []struct {
		name            string
		base, cur       []float64
		est, lo, hi     float64
		ratio, bounded  bool
		wantConfidence  float64
		tolerance       float64
		wantN1, wantN2  int
		skipCheckBounds bool
	}{{
		// A zero in the baseline: differences, divided by the
		// baseline median 2.
		name: "differences", base: []float64{0, 1, 2, 3, 4}, cur: []float64{10, 11, 12, 13, 14},
		est: 10.0 / 2, lo: 7.0 / 2, hi: 13.0 / 2, bounded: true, wantConfidence: conf, wantN1: 5, wantN2: 5,
	}, {
		// Powers of two: log2 ratios are the same 6..14.
		name: "ratios", base: []float64{1, 2, 4, 8, 16}, cur: []float64{1024, 2048, 4096, 8192, 16384},
		est: 1024 - 1, lo: 128 - 1, hi: 8192 - 1, ratio: true, bounded: true, wantConfidence: conf, wantN1: 5, wantN2: 5,
	}, {
		// A halving: the estimate is -50 %.
		name: "halving", base: []float64{100, 102, 98, 101, 99}, cur: []float64{50, 51, 49, 50.5, 49.5},
		est: -0.5, ratio: true, bounded: true, wantConfidence: conf, wantN1: 5, wantN2: 5, skipCheckBounds: true,
	}, {
		// 3 + 3: P(U = 0) = 1/20 > 0.025: no interval.
		name: "too few", base: []float64{1, 2, 3}, cur: []float64{4, 5, 6},
		// Ratios 4/3, 5/3, 2, 2, 5/2, 3, 4, 5, 6: the median is 5/2.
		est: 1.5, ratio: true, wantN1: 3, wantN2: 3,
	}, {
		name: "zero to zero", base: []float64{0, 0, 0, 0}, cur: []float64{0, 0, 0, 0},
		bounded: true, wantConfidence: 1, wantN1: 4, wantN2: 4,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := RelativeShift(tc.base, tc.cur, 0.95)
			near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(b)) }
			if got.N1 != tc.wantN1 || got.N2 != tc.wantN2 || got.Ratio != tc.ratio || got.Bounded != tc.bounded || !near(got.Estimate, tc.est) || !near(got.Confidence, tc.wantConfidence) {
				t.Fatalf("got %+v, want estimate %v, bounded %t at %v, ratio %t", got, tc.est, tc.bounded, tc.wantConfidence, tc.ratio)
			}
			if tc.bounded && !tc.skipCheckBounds && (!near(got.Lo, tc.lo) || !near(got.Hi, tc.hi)) {
				t.Errorf("interval [%v, %v], want [%v, %v]", got.Lo, got.Hi, tc.lo, tc.hi)
			}
			if tc.bounded && (got.Lo > got.Estimate || got.Estimate > got.Hi) {
				t.Errorf("estimate %v outside its interval [%v, %v]", got.Estimate, got.Lo, got.Hi)
			}
		})
	}
	if n := ShiftRuns(0.95); n != 4 {
		t.Errorf("ShiftRuns(0.95) = %d, want 4", n)
	}
}

// TestAbsoluteShiftByHand: the shift, its interval's order statistics
// from the exact U distribution, and too small samples.
func TestAbsoluteShiftByHand(t *testing.T) {
	// 10 + 10: k = 24 (P(U ≤ 23) = 0.0245 ≤ 2.5 % < P(U ≤ 24)), so the
	// interval is [D(24), D(77)] of the 100 differences.
	base := []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	cur := make([]float64, 10)
	for i, v := range base {
		cur[i] = v + 0.5
	}
	var d []float64
	for _, x := range base {
		for _, y := range cur {
			d = append(d, y-x)
		}
	}
	slices.Sort(d)
	if sh := AbsoluteShift(base, cur, 0.95); !sh.Bounded || sh.Estimate != 0.5 || sh.Lo != d[23] || sh.Hi != d[76] {
		t.Errorf("shift %+v, want 0.5 [%v, %v]", sh, d[23], d[76])
	}
	if sh := AbsoluteShift([]float64{1, 2, 3}, []float64{1, 2, 3}, 0.95); sh.Bounded {
		t.Error("an interval from 3 + 3 values (95 % needs 4 + 4)")
	}
	if sh := AbsoluteShift([]float64{1, 1, 1, 1}, []float64{2, 2, 2, 2}, 0.95); !sh.Bounded || sh.Lo != 1 || sh.Hi != 1 {
		t.Errorf("points 1 apart: %+v", sh)
	}
}

// TestShiftOrderAgreesWithUTest checks the interval's order against the
// U test: at 5 + 5, the most separated samples give benchmath's p = 2/252,
// the smallest two-sided p, and the interval then excludes no change.
func TestShiftOrderAgreesWithUTest(t *testing.T) {
	base, cur := []float64{10, 11, 12, 13, 14}, []float64{1, 2, 3, 4, 5}
	cmp := benchmath.AssumeNothing.Compare(benchmath.NewSample(base, &benchmath.DefaultThresholds), benchmath.NewSample(cur, &benchmath.DefaultThresholds))
	if math.Abs(cmp.P-2.0/252) > 1e-9 {
		t.Fatalf("benchmath p = %v, want 2/252", cmp.P)
	}
	s := RelativeShift(base, cur, 0.95)
	if !s.Bounded || s.Hi >= 0 {
		t.Errorf("got %+v, want an interval below 0", s)
	}
}

// TestMultiplicityByHand checks Holm and Benjamini–Hochberg on families
// adjusted by hand.
func TestMultiplicityByHand(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name     string
		ps       []float64
		holm, bh []float64
	}{{
		// Sorted 0.01, 0.02, 0.03, 0.04 (m = 4).
		// Holm: 4·0.01 = 0.04; 3·0.02 = 0.06; 2·0.03 = 0.06; 1·0.04 = 0.04 → max so far 0.06.
		// BH: 4/1·0.01 = 0.04; 4/2·0.02 = 0.04; 4/3·0.03 = 0.04; 4/4·0.04 = 0.04.
		name: "four, shuffled", ps: []float64{0.03, 0.01, 0.04, 0.02},
		holm: []float64{0.06, 0.04, 0.06, 0.06},
		bh:   []float64{0.04, 0.04, 0.04, 0.04},
	}, {
		// The A/A of issue 45 in small: two of five near 0.02.
		// Sorted 0.016, 0.032, 0.4, 0.6, 0.9.
		// Holm: 0.08, 4·0.032 = 0.128, 3·0.4 = 1 (capped), 1, 1.
		// BH: from the top, 0.9; 5/4·0.6 = 0.75; 5/3·0.4 = 0.6667;
		// 5/2·0.032 = 0.08; 5·0.016 = 0.08.
		name: "aa", ps: []float64{0.4, 0.016, 0.9, 0.032, 0.6},
		holm: []float64{1, 0.08, 1, 0.128, 1},
		bh:   []float64{2.0 / 3, 0.08, 0.9, 0.08, 0.75},
	}, {
		// A NaN is no test: m = 2. Holm 2·0.01, max(0.02, 0.5);
		// BH 2·0.01 = 0.02, min(1, 0.5).
		name: "nan skipped", ps: []float64{nan, 0.5, 0.01},
		holm: []float64{nan, 0.5, 0.02},
		bh:   []float64{nan, 0.5, 0.02},
	}, {
		// Ties share one adjusted value. Holm: 3·0.01 = 0.03, then 2·0.01
		// keeps 0.03, 1·0.2. BH: 3/3·0.2 = 0.2; 3/2·0.01 = 0.015 twice.
		name: "ties", ps: []float64{0.01, 0.01, 0.2},
		holm: []float64{0.03, 0.03, 0.2},
		bh:   []float64{0.015, 0.015, 0.2},
	}, {
		name: "single", ps: []float64{0.03}, holm: []float64{0.03}, bh: []float64{0.03},
	}, {
		name: "empty", ps: nil, holm: []float64{}, bh: []float64{},
	}}
	same := func(a, b float64) bool {
		if math.IsNaN(a) || math.IsNaN(b) {
			return math.IsNaN(a) && math.IsNaN(b)
		}
		return math.Abs(a-b) <= 1e-12
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, c := range []struct {
				name      string
				got, want []float64
			}{{"Holm", Holm(tc.ps), tc.holm}, {"BenjaminiHochberg", BenjaminiHochberg(tc.ps), tc.bh}} {
				if len(c.got) != len(c.want) {
					t.Fatalf("%s(%v) = %v, want %v", c.name, tc.ps, c.got, c.want)
				}
				for i := range c.got {
					if !same(c.got[i], c.want[i]) {
						t.Errorf("%s(%v) = %v, want %v", c.name, tc.ps, c.got, c.want)
						break
					}
				}
			}
		})
	}
}
