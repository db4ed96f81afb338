package apiserver

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/stormbench/stormbench/bench/result"
)

// apiSeries builds the apiserver measurement's time series from one
// sparse point per scrape interval: a point holds only the resources that
// had requests in its interval, and build fills in the zeros of the others.
type apiSeries struct {
	points []point
}

// add records the point of one interval.
func (b *apiSeries) add(p point) { b.points = append(b.points, p) }

// seriesID names one time series: its name, unit and label, if any.
type seriesID struct{ name, unit, labelKey, labelValue string }

// point is the compact per-interval record behind the time series: the
// interval's end and each series' value in it. An interval bore requests
// if it has a value of requestRate.
type point struct {
	to     time.Time
	values map[seriesID]float64
}

var requestRate = seriesID{name: SeriesRequestRate, unit: result.UnitRequestsPerSecond}

// build returns the time series of the points added so far, with time
// measured from start, ordered by name and label. Every per-resource
// series gets a point at every request-bearing interval, zero where the
// point holds none: the result file leaves those zeros out again (result's
// sparsify), and readers see them restored.
func (b *apiSeries) build(start time.Time) []result.Series {
	resources := map[seriesID]bool{}
	for _, p := range b.points {
		for id := range p.values {
			if id.name == SeriesRequestRate && id.labelKey != "" {
				resources[id] = true
			}
		}
	}
	byID := map[seriesID]*result.Series{}
	push := func(id seriesID, t time.Time, v float64) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return
		}
		s, ok := byID[id]
		if !ok {
			s = &result.Series{Name: id.name, Unit: id.unit, Start: start}
			if id.labelKey != "" {
				s.Labels = result.Labels(id.labelKey, id.labelValue)
			}
			byID[id] = s
		}
		s.Points = append(s.Points, result.Point{T: math.Round(t.Sub(start).Seconds()*1000) / 1000, V: v})
	}
	for _, p := range b.points {
		for id, v := range p.values {
			push(id, p.to, v)
		}
		if _, ok := p.values[requestRate]; ok {
			for id := range resources {
				if _, ok := p.values[id]; !ok {
					push(id, p.to, 0)
				}
			}
		}
	}
	out := make([]result.Series, 0, len(byID))
	for _, id := range slices.SortedFunc(maps.Keys(byID), func(a, b seriesID) int {
		return cmp.Or(cmp.Compare(a.name, b.name), cmp.Compare(a.labelKey, b.labelKey), cmp.Compare(a.labelValue, b.labelValue))
	}) {
		out = append(out, *byID[id])
	}
	return out
}

func newPoint(iv *interval, s *sample) point {
	p := point{to: iv.to, values: map[seriesID]float64{}}
	add := func(name, unit, labelKey, labelValue string, v float64) {
		p.values[seriesID{name, unit, labelKey, labelValue}] += v
	}
	dt := iv.to.Sub(iv.from).Seconds()
	if dt <= 0 {
		return p
	}
	// The requests' rates are summed apart: a scrape holds thousands of
	// their series, and a seriesID costs four strings to hash.
	requests, throttled, hasReq := 0.0, 0.0, false
	byResource := map[string]float64{}
	for k, v := range iv.counters {
		switch k.fam {
		case famRequests:
			hasReq = true
			requests += v / dt
			if k.d == "429" {
				throttled += v / dt
			}
			if v > 0 {
				byResource[resourceName(k.b, k.c)] += v / dt
			}
		case famCPU:
			add(SeriesCPUCores, result.UnitCores, result.LabelComponent, iv.component, v/dt)
		}
	}
	if hasReq {
		p.values[requestRate] = requests
		add(SeriesThrottledRate, result.UnitRequestsPerSecond, "", "", throttled)
		for r, v := range byResource {
			add(SeriesRequestRate, result.UnitRequestsPerSecond, result.LabelResource, r, v)
		}
	}
	for k, h := range iv.hists {
		if k.fam == famRequestDuration && h.count > 0 {
			add(SeriesRequestP99, result.UnitSeconds, result.LabelClass, k.a, result.BucketQuantile(0.99, h.bounds, h.cum))
		}
	}
	for k, v := range s.gauges {
		switch k.fam {
		case famInflight:
			add(SeriesInflight, result.UnitCount, result.LabelRequestKind, k.a, v)
		case famFlowInqueue:
			add(SeriesFlowInqueue, result.UnitCount, "", "", v)
		case famRSS:
			add(SeriesRSS, result.UnitBytes, result.LabelComponent, iv.component, v)
		}
	}
	// Registered watchers, or failing them the WATCH requests running.
	for _, fam := range []family{famWatchers, famLongRunning} {
		if v, ok := s.gauges[seriesKey{fam: fam}]; ok {
			add(SeriesWatchers, result.UnitCount, "", "", v)
			break
		}
	}
	return p
}

// resourceName joins resource and subresource as "pods/status".
func resourceName(resource, subresource string) string {
	if subresource == "" {
		return resource
	}
	return resource + "/" + subresource
}
