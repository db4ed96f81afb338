package report

import (
	"bytes"
	"cmp"
	"fmt"
	"html/template"
	"image/color"
	"math"
	"regexp"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Chart is one rendered chart: an inline SVG with its title and caption.
type Chart struct {
	// ID is the chart's HTML id.
	ID string
	// Title is the chart's title.
	Title string
	// Caption explains what the chart shows.
	Caption string
	// SVG is the rendered chart, ready to inline.
	SVG template.HTML
}

// palette is Tableau 10: distinguishable, and readable by most people with
// colour-vision deficiency.
var palette = [...]color.RGBA{
	{0x4e, 0x79, 0xa7, 0xff}, {0xf2, 0x8e, 0x2b, 0xff}, {0xe1, 0x57, 0x59, 0xff}, {0x76, 0xb7, 0xb2, 0xff},
	{0x59, 0xa1, 0x4f, 0xff}, {0xed, 0xc9, 0x48, 0xff}, {0xb0, 0x7a, 0xa1, 0xff}, {0xff, 0x9d, 0xa7, 0xff},
	{0x9c, 0x75, 0x5f, 0xff}, {0xba, 0xb0, 0xac, 0xff},
}

func colour(i int) color.RGBA { return palette[i%len(palette)] }

// markerColour draws event markers (storm start, fleet recovered).
var markerColour = color.RGBA{0x33, 0x33, 0x33, 0xff}

// sloColour draws an SLO threshold: solid, where the event markers are
// dashed, and in no data colour.
var sloColour = color.RGBA{0x00, 0x00, 0x00, 0xff}

const (
	chartWidth  = 8 * vg.Inch
	chartHeight = 3.4 * vg.Inch
	// legendWidth is the column right of the plot that holds the legend,
	// so that it never hides data.
	legendWidth = 1.8 * vg.Inch
)

var sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

// figure is a plot with its legend, drawn side by side.
type figure struct {
	*plot.Plot
	legend plot.Legend
	// floor is where vertical markers and bands start: 0, or the lowest
	// value of a log axis.
	floor float64
}

// newFigure returns a plot with sans-serif text and a grid. The fonts are
// set per plot rather than through plot.DefaultFont, which is package state.
func newFigure(title, xLabel, yLabel string) *figure {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font = font.From(sans, 12)
	p.X.Label.Text, p.Y.Label.Text = xLabel, yLabel
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(sans, 10)
		a.Tick.Label.Font = font.From(sans, 9)
	}
	p.Add(plotter.NewGrid())
	p.X.Tick.Marker, p.Y.Tick.Marker = plainTicks{}, plainTicks{}
	l := plot.NewLegend()
	l.TextStyle.Font = font.From(sans, 9)
	l.Top, l.Left = true, true
	l.ThumbnailWidth = vg.Points(18)
	// Space between entries: without it the 9 pt labels of a long legend
	// touch, descenders on the next line's capitals.
	l.Padding = vg.Points(2.5)
	return &figure{Plot: p, legend: l}
}

// plainTicks are gonum's default tick positions with labels written as
// short as the number allows: "250", not "250.00"; "0.5", not "0.50".
type plainTicks struct{}

func (plainTicks) Ticks(min, max float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(min, max)
	for i := range ticks {
		if l := ticks[i].Label; strings.Contains(l, ".") && !strings.ContainsAny(l, "eE") {
			ticks[i].Label = strings.TrimSuffix(strings.TrimRight(l, "0"), ".")
		}
	}
	return ticks
}

// lines builds a line from points, split at gaps (a missing scrape is a
// gap, not a zero): a step more than twice the typical interval starts a
// new segment.
func lines(pts plotter.XYs, c color.Color, width vg.Length, dashes ...vg.Length) []plot.Plotter {
	var out []plot.Plotter
	for _, seg := range splitGaps(pts) {
		// A sample alone between two gaps is drawn as a dot: a line of
		// one point would draw nothing, and hide the very samples an
		// overloaded API server let through.
		if len(seg) == 1 {
			out = append(out, dot(seg, c, width))
			continue
		}
		l, err := plotter.NewLine(seg)
		if err != nil {
			continue
		}
		l.Color = c
		l.Width = width
		l.Dashes = dashes
		out = append(out, l)
	}
	return out
}

// dot draws one sample as a filled circle a little wider than a line.
func dot(pt plotter.XYs, c color.Color, width vg.Length) plot.Plotter {
	sc, err := plotter.NewScatter(pt)
	if err != nil {
		return plotter.NewGrid()
	}
	sc.GlyphStyle = draw.GlyphStyle{Color: c, Radius: max(width, vg.Points(1.5)), Shape: draw.CircleGlyph{}}
	return sc
}

// gapSpans are the spans of pts with no sample: each step that splitGaps
// splits at, from the last sample before it to the first after.
func gapSpans(pts plotter.XYs) [][2]float64 {
	segs := splitGaps(pts)
	var out [][2]float64
	for i := 1; i < len(segs); i++ {
		prev, next := segs[i-1], segs[i]
		if len(prev) > 0 && len(next) > 0 {
			out = append(out, [2]float64{prev[len(prev)-1].X, next[0].X})
		}
	}
	return out
}

// gapColour shades the spans where no scrape landed.
var gapColour = color.RGBA{0xe4, 0xe4, 0xe4, 0xff}

// markGaps shades spans across [0, top], under whatever is added after
// it, with one legend entry "no scrape".
func (f *figure) markGaps(spans [][2]float64, top float64) {
	for _, sp := range spans {
		poly, err := plotter.NewPolygon(plotter.XYs{{X: sp[0], Y: f.floor}, {X: sp[1], Y: f.floor}, {X: sp[1], Y: top}, {X: sp[0], Y: top}})
		if err != nil {
			continue
		}
		poly.Color = gapColour
		poly.LineStyle.Width = 0
		f.Add(poly)
	}
	if len(spans) > 0 {
		f.legend.Add("no scrape", &plotter.Polygon{Color: gapColour})
	}
}

func splitGaps(pts plotter.XYs) []plotter.XYs {
	if len(pts) < 2 {
		return []plotter.XYs{pts}
	}
	steps := make([]float64, 0, len(pts)-1)
	for i := 1; i < len(pts); i++ {
		steps = append(steps, pts[i].X-pts[i-1].X)
	}
	slices.Sort(steps)
	typical := steps[len(steps)/2]
	var out []plotter.XYs
	start := 0
	for i := 1; i < len(pts); i++ {
		if typical > 0 && pts[i].X-pts[i-1].X > 2*typical+0.5 {
			out = append(out, pts[start:i])
			start = i
		}
	}
	return append(out, pts[start:])
}

// legendLine adds a legend entry drawn as a line of the given style.
func (f *figure) legendLine(name string, c color.Color, width vg.Length, dashes ...vg.Length) {
	l := &plotter.Line{LineStyle: draw.LineStyle{Color: c, Width: width, Dashes: dashes}}
	f.legend.Add(name, l)
}

// line draws pts as lines (split at gaps), with a legend entry unless
// name is empty.
func (f *figure) line(name string, pts plotter.XYs, c color.Color, width vg.Length, dashes ...vg.Length) {
	f.Add(lines(pts, c, width, dashes...)...)
	if name != "" {
		f.legendLine(name, c, width, dashes...)
	}
}

// verticalMarker draws a vertical line at x across [0, top]; an empty name
// adds no legend entry.
func (f *figure) verticalMarker(name string, x, top float64, dashes []vg.Length) {
	f.line(name, plotter.XYs{{X: x, Y: f.floor}, {X: x, Y: top}}, markerColour, vg.Points(1), dashes...)
}

var (
	xmlDecl     = regexp.MustCompile(`(?s)^<\?xml[^>]*\?>\s*(<!--.*?-->\s*)?`)
	svgFamilies = regexp.MustCompile(`font-family:([^;"]+);`)
)

// render draws the figure and returns the SVG element ready to inline in
// HTML: without the XML declaration, and with font fallbacks so that text
// shows in the reader's sans-serif font when Liberation is not installed
// (fonts are never embedded or fetched).
func (f *figure) render() (template.HTML, error) {
	c := vgsvg.New(chartWidth, chartHeight)
	dc := draw.New(c)
	f.Draw(draw.Crop(dc, 0, -legendWidth, 0, 0))
	f.legend.Draw(draw.Crop(dc, chartWidth-legendWidth+vg.Points(8), 0, 0, -vg.Points(20)))
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return "", fmt.Errorf("rendering chart %q: %w", f.Title.Text, err)
	}
	s := xmlDecl.ReplaceAllString(buf.String(), "")
	s = svgFamilies.ReplaceAllStringFunc(s, func(m string) string {
		fam := strings.TrimSuffix(strings.TrimPrefix(m, "font-family:"), ";")
		return fmt.Sprintf("font-family:'%s',Arial,Helvetica,sans-serif;", fam)
	})
	// Safe to inline: generated here from numbers, and vgsvg escapes text.
	return template.HTML(strings.TrimSpace(s)), nil
}

// chart renders the figure as the chart of the given id, titled as the
// figure is.
func (f *figure) chart(id, caption string) (Chart, bool, error) {
	svg, err := f.render()
	if err != nil {
		return Chart{}, false, err
	}
	return Chart{ID: id, Title: f.Title.Text, Caption: caption, SVG: svg}, true, nil
}

// chartList collects the charts drawn and the first error drawing one.
type chartList struct {
	charts []Chart
	err    error
}

// add keeps c when it was drawn (ok), and err when it is the first.
func (l *chartList) add(c Chart, ok bool, err error) {
	if ok {
		l.charts = append(l.charts, c)
	}
	l.err = cmp.Or(l.err, err)
}

// niceMax pads a data maximum so lines do not touch the frame; 1 for an
// all-zero chart.
func niceMax(m float64) float64 {
	if m <= 0 || math.IsNaN(m) || math.IsInf(m, 0) {
		return 1
	}
	return m * 1.08
}
