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

// TestQuantileSpread: a quantile's bootstrap interval holds the quantile,
// lies within the values, narrows as the sample grows, and is the same on
// every call.
func TestQuantileSpread(t *testing.T) {
	if quantileSpread(nil, 0.5) != nil {
		t.Error("an interval of no periods")
	}
	one := quantileSpread([]time.Duration{time.Second}, 0.5)
	if one == nil || one.CI95 != nil || one.N != 1 || one.Of != "periods" {
		t.Errorf("one period: %+v, want n 1 and no interval", one)
	}
	// Periods spread evenly over 0–10 s, as a reboot's U(0, probe period)
	// probe offsets.
	even := func(n int) []time.Duration {
		out := make([]time.Duration, n)
		for i := range out {
			out[i] = time.Duration(float64(i+1) / float64(n) * float64(10*time.Second))
		}
		return out
	}
	width := map[int]float64{}
	for _, n := range []int{10, 25, 100} {
		d := even(n)
		s := quantileSpread(d, 0.5)
		p50 := quantile(d, 0.5)
		if s == nil || s.CI95 == nil || s.N != n {
			t.Fatalf("n %d: %+v", n, s)
		}
		if s.CI95.Lo > p50 || s.CI95.Hi < p50 || s.CI95.Lo < s.Min || s.CI95.Hi > s.Max {
			t.Errorf("n %d: p50 %v, interval %+v, range %v–%v: want the p50 inside the interval inside the range", n, p50, *s.CI95, s.Min, s.Max)
		}
		if again := quantileSpread(d, 0.5); *again.CI95 != *s.CI95 {
			t.Errorf("n %d: %+v then %+v: not reproducible", n, *s.CI95, *again.CI95)
		}
		width[n] = s.CI95.Hi - s.CI95.Lo
	}
	if !(width[10] > width[25] && width[25] > width[100]) {
		t.Errorf("interval widths %v: want narrower with more periods", width)
	}
	// A maximum's interval ends at the maximum; one long period among
	// short ones does not fix its lower end (a resample leaves it out a
	// third of the time).
	d := append(even(21), 4*time.Second)
	for i := range 21 {
		d[i] /= 100
	}
	s := quantileSpread(sortedDurations(d), 1)
	if s.CI95.Hi != 4 || s.CI95.Lo >= 1 {
		t.Errorf("max of 21 short periods and one of 4 s: interval %+v, want [<1, 4]", *s.CI95)
	}
}

func sortedDurations(d []time.Duration) []time.Duration {
	out := append([]time.Duration(nil), d...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}
