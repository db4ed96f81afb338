package compare

import (
	"math"
	"strings"
	"testing"

	"github.com/stormbench/stormbench/bench/compare/resulttest"
	"github.com/stormbench/stormbench/bench/result"
)

func TestMinUTestP(t *testing.T) {
	tests := []struct {
		n1, n2 int
		want   float64
	}{
		{5, 1, 2.0 / 6},
		{1, 5, 2.0 / 6},
		{3, 3, 0.1},
		{4, 4, 2.0 / 70},
		{5, 5, 2.0 / 252},
		{1, 1, 1},
		{0, 5, 1},
	}
	for _, tt := range tests {
		if got := MinUTestP(tt.n1, tt.n2); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("MinUTestP(%d, %d) = %v, want %v", tt.n1, tt.n2, got, tt.want)
		}
	}
}

// TestTooFewFromTheSamples: 5 + 1 runs can never be significant, although
// benchmath warns only when both samples are small; the delta says so and
// shows the change of the medians rather than "~".
func TestTooFewFromTheSamples(t *testing.T) {
	for _, tc := range []struct {
		name       string
		a, b       []float64
		tooFew     bool
		untested   bool
		wantPrefix string
	}{
		{"5 + 1", []float64{100, 101, 102, 103, 104}, []float64{500}, true, false, "+390"},
		{"1 + 5", []float64{500}, []float64{100, 101, 102, 103, 104}, true, false, "-79"},
		{"5 + 5", []float64{100, 101, 102, 103, 104}, []float64{500, 501, 502, 503, 504}, false, false, "+392"},
		{"all equal", []float64{7, 7, 7}, []float64{7, 7, 7}, false, true, "~"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := resulttest.Synthetic(t, "r", map[string][]float64{"a": tc.a, "b": tc.b}, "a", "b")
			c, err := Compare([]Input{{Name: "r.json", Result: r}}, Options{Metrics: mustMetrics(t, result.MetricSliceWrites)})
			if err != nil {
				t.Fatal(err)
			}
			d := c.Rows[0].Cells[1].Delta
			if d.TooFew != tc.tooFew || d.Untested != tc.untested || !strings.HasPrefix(d.Text, tc.wantPrefix) {
				t.Errorf("delta too few %t, untested %t, text %q; want %t, %t, %q…", d.TooFew, d.Untested, d.Text, tc.tooFew, tc.untested, tc.wantPrefix)
			}
		})
	}
}

func mustMetrics(t *testing.T, ids ...string) []Metric {
	t.Helper()
	m, err := LookupMetrics(ids...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
