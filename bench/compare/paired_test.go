package compare

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stormbench/stormbench/bench/result"
)

// bruteSignedRankP is the signed-rank test by enumeration of the 2ⁿ signs,
// on average ranks, the definition SignedRankP computes by counting.
func bruteSignedRankP(d []float64) float64 {
	var nz []float64
	for _, x := range d {
		if x != 0 {
			nz = append(nz, x)
		}
	}
	n := len(nz)
	if n == 0 {
		return 1
	}
	rank := make([]float64, n)
	for i := range nz {
		less, equal := 0, 0
		for j := range nz {
			switch {
			case math.Abs(nz[j]) < math.Abs(nz[i]):
				less++
			case math.Abs(nz[j]) == math.Abs(nz[i]):
				equal++
			}
		}
		rank[i] = float64(less) + float64(equal+1)/2
	}
	t := 0.0
	for i, x := range nz {
		if x > 0 {
			t += rank[i]
		}
	}
	le, ge := 0, 0
	for mask := 0; mask < 1<<n; mask++ {
		s := 0.0
		for i := range n {
			if mask&(1<<i) != 0 {
				s += rank[i]
			}
		}
		if s <= t+1e-9 {
			le++
		}
		if s >= t-1e-9 {
			ge++
		}
	}
	return math.Min(1, 2*float64(min(le, ge))/float64(int(1)<<n))
}

func TestSignedRankP(t *testing.T) {
	for _, tc := range []struct {
		d    []float64
		want float64
	}{
		{[]float64{1, 2, 3, 4, 5}, 2.0 / 32},          // every block up: the smallest p of 5
		{[]float64{-1, -2, -3, -4, -5, -6}, 2.0 / 64}, // every block down, 6 blocks
		{[]float64{-1, 2, 3, 4, 5}, 4.0 / 32},         // T⁺ = 14: P(T⁺ ≥ 14) = 2/32
		{[]float64{0, 0, 0}, 1},                       // nothing moved
		{[]float64{0, 1, 2, 3, 4, 5}, 2.0 / 32},       // the zero dropped
		{[]float64{1, -1, 2, -2}, 1},                  // symmetric
	} {
		if got := SignedRankP(tc.d); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("SignedRankP(%v) = %v, want %v", tc.d, got, tc.want)
		}
	}
	// Against enumeration, ties included.
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 300 {
		d := make([]float64, 1+rng.IntN(10))
		for j := range d {
			d[j] = float64(rng.IntN(7) - 3) // few values: ties and zeros
		}
		if got, want := SignedRankP(d), bruteSignedRankP(d); math.Abs(got-want) > 1e-12 {
			t.Fatalf("case %d: SignedRankP(%v) = %v, enumeration %v", i, d, got, want)
		}
	}
	for n, want := range map[int]float64{0: 1, 1: 1, 5: 0.0625, 6: 0.03125} {
		if got := MinSignedRankP(n); got != want {
			t.Errorf("MinSignedRankP(%d) = %v, want %v", n, got, want)
		}
	}
	if got := signedRankBlocks(0.05); got != 6 {
		t.Errorf("signedRankBlocks(0.05) = %d, want 6", got)
	}
	if got := pairedBlocks(0.95); got != 6 {
		t.Errorf("pairedBlocks(0.95) = %d, want 6", got)
	}
}

func TestPairedShift(t *testing.T) {
	for _, tc := range []struct {
		name           string
		base, cur      []float64
		est, lo, hi    float64
		conf           float64
		reduced, ratio bool
	}{{
		// Log ratios 0.01 … 0.06; 6 blocks: the interval is [min, max]
		// of the Walsh averages at 1 - 2/64, the estimate their median.
		name: "6 blocks", base: []float64{100, 200, 300, 400, 500, 600}, cur: grown([]float64{100, 200, 300, 400, 500, 600}),
		est: math.Expm1(0.035), lo: math.Expm1(0.01), hi: math.Expm1(0.06), conf: 1 - 2.0/64, ratio: true,
	}, {
		name: "5 blocks, reduced", base: []float64{100, 200, 300, 400, 500}, cur: grown([]float64{100, 200, 300, 400, 500}),
		est: math.Expm1(0.03), lo: math.Expm1(0.01), hi: math.Expm1(0.05), conf: 1 - 2.0/32, reduced: true, ratio: true,
	}, {
		// A zero: differences over the baseline's median (3).
		name: "differences", base: []float64{0, 3, 6, 9, 12, 15}, cur: []float64{3, 6, 9, 12, 15, 18},
		est: 3.0 / 7.5, lo: 3.0 / 7.5, hi: 3.0 / 7.5, conf: 1 - 2.0/64,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			s := PairedShift(tc.base, tc.cur, 0.95)
			near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
			if !s.Paired || !s.Bounded || s.Reduced != tc.reduced || s.Ratio != tc.ratio || s.N1 != len(tc.base) {
				t.Fatalf("%+v: want paired, bounded, reduced %t, ratio %t", s, tc.reduced, tc.ratio)
			}
			if !near(s.Estimate, tc.est) || !near(s.Lo, tc.lo) || !near(s.Hi, tc.hi) || !near(s.Confidence, tc.conf) {
				t.Errorf("estimate %v [%v, %v] at %v, want %v [%v, %v] at %v", s.Estimate, s.Lo, s.Hi, s.Confidence, tc.est, tc.lo, tc.hi, tc.conf)
			}
		})
	}
	// 10 blocks: the interval drops the extreme Walsh averages.
	base := make([]float64, 10)
	cur := make([]float64, 10)
	for i := range base {
		base[i], cur[i] = 100, 100+float64(i)
	}
	s := PairedShift(base, cur, 0.95)
	if s.Reduced || s.Lo <= 0 || s.Hi >= 0.09 || s.Confidence < 0.95 {
		t.Errorf("10 blocks: %+v, want an interval inside the blocks' range at ≥ 95 %%", s)
	}
}

// grown returns xs[i]·e^(0.01·(i+1)): block i's log ratio is 0.01·(i+1).
func grown(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = x * math.Exp(0.01*float64(i+1))
	}
	return out
}

// blocked returns a result of two variants a and b whose blocks each drew
// their own schedule (seeds: vary): the block's schedule moves both of its
// runs by a factor between 0.8 and 1.2, and b differs from a by the factor
// change, with 0.5 % of noise.
func blocked(t *testing.T, blocks int, change float64, vary bool) *result.Result {
	rng := rand.New(rand.NewPCG(7, 7))
	a, b := make([]float64, blocks), make([]float64, blocks)
	for i := range blocks {
		schedule := 0.8 + 0.4*rng.Float64()
		a[i] = 1000 * schedule * (1 + 0.005*rng.NormFloat64())
		b[i] = 1000 * schedule * change * (1 + 0.005*rng.NormFloat64())
	}
	r := synthetic(t, "blocked", map[string][]float64{"a": a, "b": b}, "a", "b")
	r.Run.Seeds = &result.Seeds{Mode: "fixed"}
	if vary {
		r.Run.Seeds = &result.Seeds{Mode: "vary", Blocks: make([]int64, blocks)}
	}
	return r
}

// TestComparePairedByBlock: with each block on its own schedule, the change
// is estimated within blocks, so the schedules' spread (±20 %) does not
// widen its interval; the same values from one schedule (seeds: fixed) are
// compared pooled, as before.
func TestComparePairedByBlock(t *testing.T) {
	metrics := mustLookup(t, result.MetricSliceWrites)
	cmp := func(r *result.Result) *Delta {
		c, err := Compare([]Input{{Name: "r.json", Result: r}}, Options{Metrics: metrics})
		if err != nil {
			t.Fatal(err)
		}
		return c.Rows[0].Cells[1].Delta
	}
	width := func(d *Delta) float64 { return *d.Hi - *d.Lo }

	aa := cmp(blocked(t, 6, 1, true))
	pooled := cmp(blocked(t, 6, 1, false))
	if !aa.paired || pooled.paired {
		t.Fatalf("paired: vary %t, fixed %t; want true, false", aa.paired, pooled.paired)
	}
	if aa.Text != "~" || *aa.Lo > 0 || *aa.Hi < 0 || width(aa) > 0.06 {
		t.Errorf("A/A by block: %q %s, want ~ with an interval around 0 at most 6 points wide", aa.Text, aa.CI)
	}
	if width(pooled) < 2*width(aa) {
		t.Errorf("pooled interval %s not wider than the paired %s: the test has no teeth", pooled.CI, aa.CI)
	}

	ab := cmp(blocked(t, 6, 1.05, true))
	if !ab.Significant || !strings.HasPrefix(ab.Text, "+") || *ab.Lo < 0.02 || *ab.Hi > 0.08 || width(ab) > 0.06 || math.Abs(ab.P-2.0/64) > 1e-12 {
		t.Errorf("+5 %% in every block: %q %s p %v, want a significant rise near 5 %% at p = 2/64", ab.Text, ab.CI, ab.P)
	}

	few := cmp(blocked(t, 5, 1.05, true))
	if !few.TooFew || few.Significant {
		t.Errorf("5 blocks: %+v, want too few for the signed-rank test", few)
	}
}
