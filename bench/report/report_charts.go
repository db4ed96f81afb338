package report

import (
	"cmp"
	"fmt"
	"image/color"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/stormbench/stormbench/bench/compare"
	"github.com/stormbench/stormbench/bench/measure/apiserver"
	"github.com/stormbench/stormbench/bench/measure/churn"
	"github.com/stormbench/stormbench/bench/measure/recovery"
	"github.com/stormbench/stormbench/bench/result"
)

// stackedResources is how many resources the request-rate chart stacks
// individually; the rest are summed as "other".
const stackedResources = 8

var (
	markerDashes   = []vg.Length{vg.Points(4), vg.Points(3)}
	recoveryDashes = []vg.Length{vg.Points(1), vg.Points(2)}
	waveDashes     = []vg.Length{vg.Points(8), vg.Points(2), vg.Points(1), vg.Points(2)}
)

// buildSections renders every chart. Time axes are seconds since the storm
// started, so variants line up and the baseline window is x < 0. Series
// come from each variant's first repetition: time series do not merge.
func buildSections(groups []compare.Group, waves func(*result.VariantRun) []float64) ([]Section, error) {
	api := Section{Title: "API server", Intro: "Server-side figures scraped from the control plane's /metrics every interval; x < 0 is the baseline window before the storm."}
	endpoints := Section{Title: "EndpointSlice churn", Intro: "Endpoint readiness as watched on EndpointSlices; each ready flip of a pod rewrites the slices of its Services, and every write fans out to every slice watcher (one kube-proxy per node in a real cluster)."}
	rec := Section{Title: "Recovery", Intro: "Time from a restart until the node, its pods and its Services were ready again (HdrHistograms merged across repetitions)."}
	var err error
	if api.Charts, err = apiCharts(groups, waves); err != nil {
		return nil, err
	}
	var endpointCharts, recCharts chartList
	for _, spec := range []struct {
		id, series, title, unit, caption string
	}{
		{"not-ready-endpoints", churn.SeriesNotReady, "Not-ready endpoints", "endpoints",
			"Endpoints marked not ready in EndpointSlices, per variant (first repetition). With ChangeContainerStatusOnKubeletRestart=true every probed pod on a restarted node goes not ready until its first probe passes; with it false readiness is kept across the restart."},
		{"slice-writes", churn.SeriesSliceWrites, "EndpointSlice writes per second", "writes/s",
			"EndpointSlice creates, updates and deletes per second, per variant (first repetition)."},
	} {
		endpointCharts.add(overlayChart(groups, churn.Name, spec.series, spec.id, spec.title, spec.unit, spec.caption))
	}
	for _, kind := range []struct{ name, title string }{
		{recovery.Node, "Node recovery latency"},
		{recovery.Pod, "Pod recovery latency"},
		{recovery.Service, "Service recovery latency"},
	} {
		recCharts.add(percentileChart(groups, kind.name, kind.title))
	}
	if err := cmp.Or(endpointCharts.err, recCharts.err); err != nil {
		return nil, err
	}
	endpoints.Charts, rec.Charts = endpointCharts.charts, recCharts.charts
	var out []Section
	for _, s := range []Section{api, endpoints, rec} {
		if len(s.Charts) > 0 {
			out = append(out, s)
		}
	}
	return out, nil
}

// apiCharts are the API server section's charts: one row per kind
// (request rate, latency, in flight), variants side by side in column
// order, on common axes so that they compare.
func apiCharts(groups []compare.Group, waves func(*result.VariantRun) []float64) ([]Chart, error) {
	resources := topResources(groups)
	panels := apiPanels(groups, waves)
	rateMax, p99Max, inflMax := 0.0, 0.0, 0.0
	for _, pn := range panels {
		m := pn.m
		if s := m.SeriesNamed(apiserver.SeriesRequestRate); s != nil {
			rateMax = max(rateMax, seriesMax(s))
		}
		for _, s := range seriesNamed(m, apiserver.SeriesRequestP99) {
			p99Max = max(p99Max, seriesMax(s)*1e3)
		}
		for _, s := range append(seriesNamed(m, apiserver.SeriesInflight), seriesNamed(m, apiserver.SeriesFlowInqueue)...) {
			inflMax = max(inflMax, seriesMax(s))
		}
	}
	var charts chartList
	for _, build := range []func(panel) (Chart, bool, error){
		func(pn panel) (Chart, bool, error) { return requestRateChart(pn, resources, rateMax) },
		func(pn panel) (Chart, bool, error) { return latencyChart(pn, p99Max) },
		func(pn panel) (Chart, bool, error) { return inflightChart(pn, inflMax) },
	} {
		for _, pn := range panels {
			charts.add(build(pn))
		}
	}
	return charts.charts, charts.err
}

// apiPanels are the variants' API server panels, on a common time axis so
// that the variants' charts line up.
func apiPanels(groups []compare.Group, waves func(*result.VariantRun) []float64) []panel {
	var panels []panel
	for _, g := range groups {
		v := g.VariantRuns()[0]
		if m := v.Measurement(apiserver.Name); m != nil {
			panels = append(panels, panel{variant: g.Name, v: v, m: m, origin: stormOrigin(v), waves: waves(v)})
		}
	}
	xLo, xHi := math.Inf(1), math.Inf(-1)
	for _, pn := range panels {
		for i := range pn.m.Series {
			for _, pt := range xy(&pn.m.Series[i], pn.origin, 1) {
				xLo, xHi = min(xLo, pt.X), max(xHi, pt.X)
			}
		}
	}
	if xLo < xHi {
		for i := range panels {
			panels[i].xLo, panels[i].xHi = xLo, xHi
		}
	}
	return panels
}

// stormOrigin is the time axis origin: the storm's start, or the variant's
// start when no restart began.
func stormOrigin(v *result.VariantRun) time.Time {
	if !v.StormStart.IsZero() {
		return v.StormStart
	}
	return v.Start
}

// seriesNamed returns every series of the name, whatever its labels, in
// document order (sorted by labels).
func seriesNamed(m *result.Measurement, name string) []*result.Series {
	if m == nil {
		return nil
	}
	var out []*result.Series
	for i := range m.Series {
		if m.Series[i].Name == name {
			out = append(out, &m.Series[i])
		}
	}
	return out
}

func seriesMax(s *result.Series) float64 {
	m := 0.0
	for _, p := range s.Points {
		m = max(m, p.V)
	}
	return m
}

// xy places a series on the storm-relative time axis, scaling values.
func xy(s *result.Series, origin time.Time, scale float64) plotter.XYs {
	off := s.Start.Sub(origin).Seconds()
	pts := make(plotter.XYs, len(s.Points))
	for i, p := range s.Points {
		pts[i] = plotter.XY{X: off + p.T, Y: p.V * scale}
	}
	return pts
}

// topResources ranks resources by requests across every variant's first
// repetition, so that a resource keeps its colour in every chart.
func topResources(groups []compare.Group) []string {
	total := map[string]float64{}
	for _, g := range groups {
		for _, s := range seriesNamed(g.VariantRuns()[0].Measurement(apiserver.Name), apiserver.SeriesRequestRate) {
			r, ok := s.Labels[result.LabelResource]
			if !ok || len(s.Labels) != 1 {
				continue
			}
			for _, p := range s.Points {
				total[r] += p.V
			}
		}
	}
	var rs []string
	for r, t := range total {
		if t > 0 {
			rs = append(rs, r)
		}
	}
	slices.SortFunc(rs, func(a, b string) int { return cmp.Or(cmp.Compare(total[b], total[a]), strings.Compare(a, b)) })
	return rs
}

func chartID(parts ...string) string {
	id := strings.ToLower(strings.Join(parts, "-"))
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '-'
	}, id)
}

// markStorm draws the storm start at x=0 and, when known, when the fleet
// had recovered.
func markStorm(p *figure, v *result.VariantRun, waves []float64, top float64) {
	if v.StormStart.IsZero() {
		return
	}
	p.verticalMarker("storm start", 0, top, markerDashes)
	for i, w := range waves {
		name := ""
		if i == 0 {
			name = "next waves"
		}
		p.verticalMarker(name, w, top, waveDashes)
	}
	if h := v.Measurement(recovery.Name).Histogram(recovery.FleetRecovered, result.WindowStorm); h != nil && h.Summary.Count > 0 {
		p.verticalMarker("fleet recovered", h.Summary.Max, top, recoveryDashes)
	}
}

// panel is one variant's first repetition, placed on the storm-relative
// time axis.
type panel struct {
	variant string
	v       *result.VariantRun
	m       *result.Measurement
	origin  time.Time
	// waves are the start offsets of the storm's later waves.
	waves []float64
	// xLo and xHi are the time axis every variant's chart shares (both 0:
	// each chart its own).
	xLo, xHi float64
}

// figure is a new figure of the panel, "<title>: <variant>", on the
// panels' shared time axis: set before any data is added, which widens it
// where a point lies outside.
func (pn panel) figure(title, yLabel string) *figure {
	p := newFigure(title+": "+pn.variant, "seconds since storm start", yLabel)
	if pn.xLo < pn.xHi {
		p.X.Min, p.X.Max = pn.xLo, pn.xHi
	}
	return p
}

// chart renders a panel's figure with the storm's markers.
func (pn panel) chart(p *figure, id, caption string) (Chart, bool, error) {
	markStorm(p, pn.v, pn.waves, p.Y.Max)
	return p.chart(chartID(id, pn.variant), caption)
}

// requestRateChart stacks per-resource request rates. Points are aligned by
// scrape time; a resource without a point at a scrape counts 0 there.
func requestRateChart(pn panel, ranked []string, yMax float64) (Chart, bool, error) {
	m, origin := pn.m, pn.origin
	byRes := map[string]*result.Series{}
	for _, s := range seriesNamed(m, apiserver.SeriesRequestRate) {
		if r, ok := s.Labels[result.LabelResource]; ok && len(s.Labels) == 1 {
			byRes[r] = s
		}
	}
	if len(byRes) == 0 {
		return Chart{}, false, nil
	}
	stacks, stacked := stackRates(byRes, ranked, origin)
	p := pn.figure("API request rate by resource", "requests/s")
	p.Y.Min, p.Y.Max = 0, niceMax(yMax)
	// The spans no scrape covered, shaded under the data.
	if len(stacks) > 0 {
		p.markGaps(gapSpans(stacks[len(stacks)-1]), p.Y.Max)
	}
	if err := drawStacks(p, stacks, stacked, ranked); err != nil {
		return Chart{}, false, err
	}
	for _, n := range stacked {
		p.legendLine(n, resourceColour(ranked, n), vg.Points(6))
	}
	return pn.chart(p, "request-rate",
		fmt.Sprintf("apiserver_request_total rate by resource, stacked; the %d busiest resources, the rest as other. Dashed: storm start; dash-dot: later waves; dotted: fleet recovered; grey bands: no scrape landed. %s", stackedResources, scrapeCaption(pn.v)))
}

// stackRates stacks the request rates by resource: the same busiest
// resources (across variants: ranked) in every variant's chart, so that
// bands and colours compare, and the rest as one "other" layer. It returns
// each layer's cumulative points and its name, bottom first.
func stackRates(byRes map[string]*result.Series, ranked []string, origin time.Time) (stacks []plotter.XYs, stacked []string) {
	var layers []string
	for _, r := range ranked[:min(stackedResources, len(ranked))] {
		if byRes[r] != nil {
			layers = append(layers, r)
		}
	}
	// Sorted, so that float sums and thus the SVG are the same every time.
	names := slices.Sorted(maps.Keys(byRes))
	others := slices.DeleteFunc(slices.Clone(names), func(r string) bool { return slices.Contains(layers, r) })
	// value sums the rates of the series by time, rounded to the
	// millisecond, series by series.
	value := func(rs ...string) map[float64]float64 {
		out := map[float64]float64{}
		for _, r := range rs {
			one := map[float64]float64{}
			for _, p := range xy(byRes[r], origin, 1) {
				one[math.Round(p.X*1000)/1000] += p.Y
			}
			for t, x := range one {
				out[t] += x
			}
		}
		return out
	}
	times := slices.Sorted(maps.Keys(value(names...)))
	cum := make([]float64, len(times))
	addLayer := func(name string, vals map[float64]float64) {
		pts := make(plotter.XYs, len(times))
		for i, t := range times {
			cum[i] += vals[t]
			pts[i] = plotter.XY{X: t, Y: cum[i]}
		}
		stacks = append(stacks, pts)
		stacked = append(stacked, name)
	}
	for _, r := range layers {
		addLayer(r, value(r))
	}
	if slices.ContainsFunc(others, func(r string) bool { return seriesMax(byRes[r]) > 0 }) {
		addLayer("other", value(others...))
	}
	return stacks, stacked
}

// drawStacks draws the tallest cumulative layer first so each lower one
// paints over it: the visible bands are the per-resource rates.
func drawStacks(p *figure, stacks []plotter.XYs, stacked, ranked []string) error {
	for i := len(stacks) - 1; i >= 0; i-- {
		c := resourceColour(ranked, stacked[i])
		for _, seg := range splitGaps(stacks[i]) {
			if len(seg) == 1 {
				p.Add(dot(seg, c, vg.Points(2)))
				continue
			}
			l, err := plotter.NewLine(seg)
			if err != nil {
				return fmt.Errorf("request rate chart: %w", err)
			}
			l.FillColor = c
			l.Color = c
			l.Width = vg.Points(0.5)
			p.Add(l)
		}
	}
	return nil
}

// scrapeCaption says how many of the API server's scheduled scrapes landed:
// where they did not, the rates are averages over the gap.
func scrapeCaption(v *result.VariantRun) string {
	landed, sched, gap, ok := ScrapeCoverage(v)
	if !ok {
		return ""
	}
	return fmt.Sprintf("Scrape coverage: %.0f of %.0f scheduled scrapes landed (%.0f %%), longest gap %.1f s.", landed, sched, 100*min(landed, sched)/sched, gap)
}

// resourceColour keeps a resource's colour across variants; "other" gets
// the palette's grey, which no resource uses.
func resourceColour(ranked []string, name string) color.RGBA {
	i := slices.Index(ranked, name)
	if name == "other" || i < 0 {
		return palette[len(palette)-1]
	}
	return palette[i%(len(palette)-1)]
}

func latencyChart(pn panel, yMax float64) (Chart, bool, error) {
	p := pn.figure("API p99 latency", "p99 latency (ms, log scale)")
	// A log axis: the baseline's milliseconds and an overload's seconds
	// both show. Below 1 ms is drawn at 1 ms.
	p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	p.floor = 1
	n := 0
	xLo, xHi := math.Inf(1), math.Inf(-1)
	for i, class := range []string{apiserver.ClassMutating, apiserver.ClassGet, apiserver.ClassList} {
		s := pn.m.SeriesNamed(apiserver.SeriesRequestP99, result.LabelClass, class)
		if s == nil || len(s.Points) == 0 {
			continue
		}
		pts := xy(s, pn.origin, 1e3)
		for j := range pts {
			pts[j].Y = max(pts[j].Y, p.floor)
			xLo, xHi = min(xLo, pts[j].X), max(xHi, pts[j].X)
		}
		p.line(class, pts, colour(i), vg.Points(1.5))
		n++
	}
	if n == 0 {
		return Chart{}, false, nil
	}
	p.Y.Min, p.Y.Max = p.floor, max(niceMax(yMax), 2000)
	// The API call latency SLO for mutating calls (1 s p99), as the sweep
	// chart draws it.
	if pn.xLo < pn.xHi {
		xLo, xHi = pn.xLo, pn.xHi
	}
	p.line("SLO 1 s (mutating)", plotter.XYs{{X: xLo, Y: 1000}, {X: xHi, Y: 1000}}, sloColour, vg.Points(1))
	return pn.chart(p, "latency",
		"p99 of apiserver_request_duration_seconds per verb class and scrape interval (WATCH and CONNECT excluded, as in the API call latency SLO), on a log axis; baseline before the storm (x < 0) versus storm. Dashed horizontal: the 1 s SLO of mutating calls.")
}

func inflightChart(pn panel, yMax float64) (Chart, bool, error) {
	m, origin := pn.m, pn.origin
	p := pn.figure("In-flight requests and APF queue", "requests")
	n := 0
	for _, s := range seriesNamed(m, apiserver.SeriesInflight) {
		p.line("in-flight "+s.Labels[result.LabelRequestKind], xy(s, origin, 1), colour(n), vg.Points(1.5))
		n++
	}
	for _, s := range seriesNamed(m, apiserver.SeriesFlowInqueue) {
		name := "APF queued"
		if pl := s.Labels[result.LabelPriorityLevel]; pl != "" {
			name += " " + pl
		}
		p.line(name, xy(s, origin, 1), colour(n), vg.Points(1.5), vg.Points(3), vg.Points(2))
		n++
	}
	if n == 0 {
		return Chart{}, false, nil
	}
	p.Y.Min, p.Y.Max = 0, niceMax(yMax)
	return pn.chart(p, "inflight",
		"apiserver_current_inflight_requests by request kind, and apiserver_flowcontrol_current_inqueue_requests (requests waiting in API Priority and Fairness queues).")
}

// overlayChart draws one series per variant on a shared axis.
func overlayChart(groups []compare.Group, measurement, series, id, title, unit, caption string) (Chart, bool, error) {
	p := newFigure(title, "seconds since storm start", unit)
	n := 0
	top := 0.0
	for gi, g := range groups {
		v := g.VariantRuns()[0]
		s := v.Measurement(measurement).SeriesNamed(series)
		if s == nil {
			continue
		}
		p.line(g.Name, xy(s, stormOrigin(v), 1), colour(gi), vg.Points(1.5))
		top = max(top, seriesMax(s))
		n++
	}
	if n == 0 {
		return Chart{}, false, nil
	}
	p.Y.Min, p.Y.Max = 0, niceMax(top)
	p.verticalMarker("storm start", 0, p.Y.Max, markerDashes)
	return p.chart(chartID(id), caption)
}
