package calibrate

import (
	"math"
	"testing"
	"time"
)

// TestMeanInterval: Student's t interval of a mean, against values worked
// by hand.
func TestMeanInterval(t *testing.T) {
	for _, tc := range []struct {
		name   string
		values []float64
		want   *Interval
	}{
		{"none", nil, nil},
		{"one value: no interval", []float64{3}, nil},
		{"all equal: a point", []float64{4, 4, 4, 4, 4}, &Interval{Lo: 4, Hi: 4}},
		// mean 3.2, s = 0.4472, t(4) = 2.776: ± 0.5552.
		{"one of five differs", []float64{3, 3, 3, 3, 4}, &Interval{Lo: 2.645, Hi: 3.755}},
		// mean 9, s = 1.4142, t(1) = 12.706: ± 12.706.
		{"two values", []float64{8, 10}, &Interval{Lo: 0, Hi: 21.706}},
		// mean 2, s = 1, t(2) = 4.303: ± 2.484, cut at 0.
		{"cut at zero", []float64{1, 2, 3}, &Interval{Lo: 0, Hi: 4.484}},
	} {
		got := meanInterval(tc.values)
		if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
			t.Errorf("%s: meanInterval(%v) = %+v, want %+v", tc.name, tc.values, got, tc.want)
		}
	}
}

func TestTCritical(t *testing.T) {
	for _, tc := range []struct {
		df   int
		want float64
	}{{1, 12.706}, {4, 2.776}, {30, 2.042}, {31, 2.0395}, {60, 2.0003}, {120, 1.9799}, {1000, 1.9623}} {
		if got := tCritical(tc.df); math.Abs(got-tc.want) > 0.001 {
			t.Errorf("tCritical(%d) = %.4f, want %.3f", tc.df, got, tc.want)
		}
	}
}

// TestOrderStatisticRanks: the distribution-free interval of a median
// against the textbook values (Hahn and Meeker, table for the median).
func TestOrderStatisticRanks(t *testing.T) {
	for _, tc := range []struct {
		n      int
		q      float64
		l, u   int
		bounds bool
	}{
		{2, 0.5, 0, 0, false}, // [X(1), X(2)] covers 50 %
		{5, 0.5, 0, 0, false}, // 93.75 %
		{6, 0.5, 1, 6, true},  // 96.9 %
		{10, 0.5, 2, 9, true}, // 97.9 %; [X(2), X(8)] 93.5 %
		{25, 0.5, 8, 18, true},
		{20, 0.9, 0, 0, false},  // X(20) exceeds the 0.9-quantile only 88 % of the time
		{60, 0.9, 50, 59, true}, // 95.2 %
	} {
		l, u, ok := orderStatisticRanks(tc.n, tc.q, 0.95)
		if ok != tc.bounds || l != tc.l || u != tc.u {
			t.Errorf("orderStatisticRanks(%d, %v) = %d, %d, %v; want %d, %d, %v", tc.n, tc.q, l, u, ok, tc.l, tc.u, tc.bounds)
		}
	}
}

// TestQuantileSpread: a median's interval lies between two of the periods
// and holds the median, is unbounded with fewer than 6 periods, narrows
// (in ranks) as the sample grows; a maximum's interval is the range.
func TestQuantileSpread(t *testing.T) {
	if quantileSpread(nil, 0.5) != nil {
		t.Error("an interval of no periods")
	}
	one := quantileSpread([]time.Duration{time.Second}, 0.5)
	if one == nil || one.CI95 == nil || !one.CI95.Unbounded || one.N != 1 || one.Of != "periods" {
		t.Errorf("one period: %+v, want n 1 and an unbounded interval", one)
	}
	// Periods of 1 to n seconds.
	secs := func(n int) []time.Duration {
		out := make([]time.Duration, n)
		for i := range out {
			out[i] = time.Duration(i+1) * time.Second
		}
		return out
	}
	if s := quantileSpread(secs(5), 0.5); s.CI95 == nil || !s.CI95.Unbounded || s.CI95.Lo != 1 || s.CI95.Hi != 5 {
		t.Errorf("median of 5: %+v, want unbounded (range 1–5 for the reader)", s.CI95)
	}
	if s := quantileSpread(secs(10), 0.5); s.CI95 == nil || s.CI95.Unbounded || s.CI95.Lo != 2 || s.CI95.Hi != 9 {
		t.Errorf("median of 10: %+v, want [2, 9]", s.CI95)
	}
	if s := quantileSpread(secs(25), 0.5); s.CI95.Lo != 8 || s.CI95.Hi != 18 || quantile(secs(25), 0.5) != 13 {
		t.Errorf("median of 25: %+v, want [8, 18] around 13", s.CI95)
	}
	if s := quantileSpread(secs(6), 1); s.CI95 == nil || s.CI95.Unbounded || s.CI95.Lo != 1 || s.CI95.Hi != 6 {
		t.Errorf("max of 6: %+v, want the range [1, 6]", s.CI95)
	}
	if s := quantileSpread(secs(5), 1); s.CI95 == nil || !s.CI95.Unbounded {
		t.Errorf("max of 5: %+v, want unbounded", s.CI95)
	}
	// An unbounded side agrees with anything; a bounded one does not.
	tol := DefaultTolerance()
	few, many := quantileSpread(secs(5), 0.5), quantileSpread([]time.Duration{20 * time.Second, 21 * time.Second, 22 * time.Second, 23 * time.Second, 24 * time.Second, 25 * time.Second}, 0.5)
	if !tol.agreeSpread("s", 3, 22, few, many) {
		t.Error("an unbounded median disagreed")
	}
	if tol.agreeSpread("s", 5.5, 22, quantileSpread(secs(10), 0.5), many) {
		t.Error("medians of 1–10 s and 20–25 s agreed")
	}
}
