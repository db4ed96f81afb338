package report

import (
	"image/color"
	"reflect"
	"strings"
	"testing"

	"gonum.org/v1/plot/plotter"
)

// TestGapSpans: a step more than twice the typical interval is a gap from
// the sample before to the one after; a lone sample between two gaps is
// drawn as a dot, not dropped.
func TestGapSpans(t *testing.T) {
	pts := func(xs ...float64) plotter.XYs {
		out := make(plotter.XYs, len(xs))
		for i, x := range xs {
			out[i] = plotter.XY{X: x, Y: 1}
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		pts   plotter.XYs
		spans [][2]float64
		dots  int
	}{
		{"no gap", pts(0, 1, 2, 3, 4), nil, 0},
		{"one gap", pts(0, 1, 2, 10, 11, 12), [][2]float64{{2, 10}}, 0},
		{"lone sample between gaps", pts(0, 1, 2, 9, 20, 21, 22), [][2]float64{{2, 9}, {9, 20}}, 1},
	} {
		if got := gapSpans(tc.pts); !reflect.DeepEqual(got, tc.spans) {
			t.Errorf("%s: spans %v, want %v", tc.name, got, tc.spans)
		}
		dots := 0
		for _, p := range lines(tc.pts, color.Black, 1) {
			if _, ok := p.(*plotter.Scatter); ok {
				dots++
			}
		}
		if dots != tc.dots {
			t.Errorf("%s: %d dots, want %d", tc.name, dots, tc.dots)
		}
	}
}

func TestPlainTicks(t *testing.T) {
	var labels []string
	for _, tk := range (plainTicks{}).Ticks(0, 800) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if want := []string{"0", "400", "800"}; !reflect.DeepEqual(labels, want) {
		t.Errorf("labels %q, want %q", labels, want)
	}
	for _, tk := range (plainTicks{}).Ticks(0, 1.2) {
		if tk.Label != "" && strings.HasSuffix(tk.Label, "0") && tk.Label != "0" {
			t.Errorf("label %q keeps a trailing zero", tk.Label)
		}
	}
}
