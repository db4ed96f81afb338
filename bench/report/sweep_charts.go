package report

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/stormbench/stormbench/bench/compare"
	"github.com/stormbench/stormbench/bench/measure/recovery"
	"github.com/stormbench/stormbench/bench/result"
)

// The sweep's charts: recovery and load against the wave size.

// percentileTicks label the percentile axis, which is -log10(1-q) so that
// the tail gets as much room as the body, as in HdrHistogram's percentile
// distribution plots.
var percentileTicks = []struct {
	q     float64
	label string
}{{0, "0%"}, {0.5, "50%"}, {0.9, "90%"}, {0.99, "99%"}, {0.999, "99.9%"}}

func percentileX(q float64) float64 { return -math.Log10(1 - q) }

// percentileChart plots a recovery histogram's percentiles per variant,
// merged across repetitions.
func percentileChart(groups []compare.Group, name, title string) (Chart, bool, error) {
	p := newFigure(title+" percentiles", "percentile", "seconds")
	var ticks plot.ConstantTicks
	for _, t := range percentileTicks {
		ticks = append(ticks, plot.Tick{Value: percentileX(t.q), Label: t.label})
	}
	p.X.Tick.Marker = ticks
	p.X.Min, p.X.Max = 0, 3
	n := 0
	var empty []string
	for gi, g := range groups {
		var hs []*result.Histogram
		for _, v := range g.VariantRuns() {
			if h := v.Measurement(recovery.Name).Histogram(name, result.WindowStorm); h != nil {
				hs = append(hs, h)
			}
		}
		if len(hs) == 0 {
			continue
		}
		merged, err := result.MergeHistograms(hs...)
		if err != nil {
			return Chart{}, false, fmt.Errorf("%s of %s: %w", name, g.Name, err)
		}
		if merged.Summary.Count == 0 || merged.HDR == "" {
			empty = append(empty, g.Name)
			p.legend.Add(g.Name + ": no samples")
			continue
		}
		h, err := result.DecodeHDR(merged.HDR)
		if err != nil {
			return Chart{}, false, fmt.Errorf("%s of %s: %w", name, g.Name, err)
		}
		scale := 1e-6 // HDR values are microseconds
		var pts plotter.XYs
		for x := 0.0; x <= 3.0001; x += 0.05 {
			q := 1 - math.Pow(10, -x)
			// HdrHistogram's 0th percentile is its lowest bucket (0), not
			// the smallest sample.
			pts = append(pts, plotter.XY{X: x, Y: float64(max(h.ValueAtQuantile(q*100), h.Min())) * scale})
		}
		p.line(fmt.Sprintf("%s (n=%d)", g.Name, merged.Summary.Count), pts, colour(gi), vg.Points(1.5))
		n++
	}
	if n == 0 {
		return Chart{}, false, nil
	}
	p.Y.Min = 0
	caption := "Recovery latency by percentile, from the HdrHistograms of every repetition merged; beyond 1/n the line is the maximum."
	if len(empty) > 0 {
		caption += " No samples (nothing went not-ready) for: " + strings.Join(empty, ", ") + "."
	}
	return p.chart(chartID("recovery", name), caption)
}

// sweepGlyph marks a wave size on the sweep charts: a dot when it was
// safe, a cross when it was not, so the charts show where capacity ends.
func sweepGlyph(safe bool, c color.Color) draw.GlyphStyle {
	if safe {
		return draw.GlyphStyle{Color: c, Radius: vg.Points(3), Shape: draw.CircleGlyph{}}
	}
	return draw.GlyphStyle{Color: c, Radius: vg.Points(5), Shape: draw.CrossGlyph{}}
}

// waveTicks marks the wave sizes tried on the x axis, leaving out the
// label of a size too close to the previous labelled one to be read.
func waveTicks(sizes []float64, xMax float64) plot.ConstantTicks {
	ticks := plot.ConstantTicks{{Value: 0, Label: "0"}}
	last := 0.0
	for _, x := range sizes {
		t := plot.Tick{Value: x}
		if x-last >= xMax/25 {
			t.Label, last = strconv.FormatFloat(x, 'f', -1, 64), x
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// sweepCharts plots a capacity sweep against wave size: mutating p99 with
// the SLO, and the peak request rate.
func sweepCharts(series []SweepSeries) ([]Chart, error) {
	const marks = "Dots: safe wave sizes; crosses: not safe (mutating p99 over the SLO, 429s, service outage, or an incomplete run)."
	specs := []struct {
		id, title, yLabel, caption string
		y                          func(SweepRow) float64
		slo                        time.Duration
	}{
		{"sweep-p99", "Mutating API p99 against wave size", "mutating p99 (s)",
			fmt.Sprintf("Storm-window p99 of apiserver_request_duration_seconds for mutating calls at each wave size (worst repetition), one line per variant; dashed: the %s API call latency SLO. %s", sweepMaxMutatingP99, marks),
			func(r SweepRow) float64 { return r.MutatingP99 }, sweepMaxMutatingP99},
		{"sweep-request-rate", "Peak API request rate against wave size", "requests/s",
			"Highest per-interval apiserver_request_total rate in the storm window at each wave size (worst repetition), one line per variant. " + marks,
			func(r SweepRow) float64 { return r.PeakRate }, 0},
	}
	var out chartList
	for _, sp := range specs {
		out.add(sweepChart(series, sp.id, sp.title, sp.yLabel, sp.caption, sp.y, sp.slo))
	}
	return out.charts, out.err
}

// sweepChart draws a figure against wave size, one line per base variant,
// and a dashed horizontal line at slo when it is positive. Sizes where the
// figure was not measured have no point; false when no size has one.
func sweepChart(series []SweepSeries, id, title, yLabel, caption string, y func(SweepRow) float64, slo time.Duration) (Chart, bool, error) {
	f := newFigure(title, "wave size (nodes restarted at once)", yLabel)
	top, n := slo.Seconds(), 0
	var sizes []float64
	for i, s := range series {
		var pts plotter.XYs
		var safe []bool
		for _, r := range s.Rows {
			sizes = append(sizes, float64(r.WaveSize))
			if v := y(r); !math.IsNaN(v) {
				pts = append(pts, plotter.XY{X: float64(r.WaveSize), Y: v})
				safe = append(safe, r.Safe)
				top = max(top, v)
			}
		}
		if len(pts) == 0 {
			continue
		}
		// Not lines(): wave sizes are often doubled, and a wider step is
		// not a gap.
		l, sc, err := plotter.NewLinePoints(pts)
		if err != nil {
			return Chart{}, false, fmt.Errorf("%s chart: %w", title, err)
		}
		c := colour(i)
		l.Color, l.Width = c, vg.Points(1.5)
		sc.GlyphStyle = sweepGlyph(true, c)
		sc.GlyphStyleFunc = func(j int) draw.GlyphStyle { return sweepGlyph(safe[j], c) }
		f.Add(l, sc)
		f.legend.Add(s.Variant, l, sc)
		n++
	}
	if n == 0 {
		return Chart{}, false, nil
	}
	slices.Sort(sizes)
	sizes = slices.Compact(sizes)
	f.X.Min, f.X.Max = 0, niceMax(sizes[len(sizes)-1])
	f.X.Tick.Marker = waveTicks(sizes, f.X.Max)
	if slo > 0 {
		f.line("SLO "+slo.String(), plotter.XYs{{X: 0, Y: slo.Seconds()}, {X: f.X.Max, Y: slo.Seconds()}}, markerColour, vg.Points(1), markerDashes...)
	}
	f.legend.Add("safe", &plotter.Scatter{GlyphStyle: sweepGlyph(true, markerColour)})
	f.legend.Add("not safe", &plotter.Scatter{GlyphStyle: sweepGlyph(false, markerColour)})
	f.Y.Min, f.Y.Max = 0, niceMax(top)
	return f.chart(chartID(id), caption)
}
