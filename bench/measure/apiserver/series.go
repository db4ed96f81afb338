package apiserver

import (
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

// build returns the time series of the points added so far, with time
// measured from start. Every per-resource series gets a point at every
// request-bearing interval, zero where the point holds none: the result
// file leaves those zeros out again (result's sparsify), and readers see
// them restored.
func (b *apiSeries) build(start time.Time) []result.Series {
	type key struct{ name, k, v string }
	order := []key{}
	byKey := map[key]*result.Series{}
	push := func(name, unit, labelKey, labelValue string, t time.Time, v float64) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return
		}
		k := key{name, labelKey, labelValue}
		s, ok := byKey[k]
		if !ok {
			s = &result.Series{Name: name, Unit: unit, Start: start}
			if labelKey != "" {
				s.Labels = result.Labels(labelKey, labelValue)
			}
			byKey[k] = s
			order = append(order, k)
		}
		s.Points = append(s.Points, result.Point{T: math.Round(t.Sub(start).Seconds()*1000) / 1000, V: v})
	}
	resources := map[string]bool{}
	for _, p := range b.points {
		for r := range p.byResource {
			resources[r] = true
		}
	}
	for _, p := range b.points {
		if p.hasReq {
			push(SeriesRequestRate, result.UnitRequestsPerSecond, "", "", p.to, p.requests)
			push(SeriesThrottledRate, result.UnitRequestsPerSecond, "", "", p.to, p.throttled)
			for _, r := range slices.Sorted(maps.Keys(resources)) {
				push(SeriesRequestRate, result.UnitRequestsPerSecond, result.LabelResource, r, p.to, p.byResource[r])
			}
		}
		for _, class := range slices.Sorted(maps.Keys(p.p99)) {
			push(SeriesRequestP99, result.UnitSeconds, result.LabelClass, class, p.to, p.p99[class])
		}
		for _, kind := range slices.Sorted(maps.Keys(p.inflight)) {
			push(SeriesInflight, result.UnitCount, result.LabelRequestKind, kind, p.to, p.inflight[kind])
		}
		if p.hasWatch {
			push(SeriesWatchers, result.UnitCount, "", "", p.to, p.watchers)
		}
		if p.hasInqueue {
			push(SeriesFlowInqueue, result.UnitCount, "", "", p.to, p.inqueue)
		}
		if p.hasCPU {
			push(SeriesCPUCores, result.UnitCores, result.LabelComponent, p.component, p.to, p.cpu)
		}
		if p.hasRSS {
			push(SeriesRSS, result.UnitBytes, result.LabelComponent, p.component, p.to, p.rss)
		}
	}
	out := make([]result.Series, 0, len(order))
	for _, k := range order {
		out = append(out, *byKey[k])
	}
	return out
}

// point is the compact per-interval record behind the time series.
type point struct {
	component  string
	to         time.Time
	hasReq     bool
	requests   float64 // per second
	throttled  float64 // per second
	byResource map[string]float64
	p99        map[string]float64 // by verb class, for classes with samples
	inflight   map[string]float64
	watchers   float64
	hasWatch   bool
	inqueue    float64
	hasInqueue bool
	cpu        float64 // cores
	hasCPU     bool
	rss        float64
	hasRSS     bool
}

func newPoint(iv *interval, s *sample) point {
	p := point{component: iv.component, to: iv.to}
	dt := iv.to.Sub(iv.from).Seconds()
	if dt <= 0 {
		return p
	}
	for k, v := range iv.counters {
		switch k.fam {
		case famRequests:
			p.hasReq = true
			p.requests += v / dt
			if k.d == "429" {
				p.throttled += v / dt
			}
			if v > 0 {
				if p.byResource == nil {
					p.byResource = map[string]float64{}
				}
				p.byResource[resourceName(k.b, k.c)] += v / dt
			}
		case famCPU:
			p.cpu, p.hasCPU = v/dt, true
		}
	}
	for k, h := range iv.hists {
		if k.fam == famRequestDuration && h.count > 0 {
			if p.p99 == nil {
				p.p99 = map[string]float64{}
			}
			p.p99[k.a] = result.BucketQuantile(0.99, h.bounds, h.cum)
		}
	}
	watchers, longRunning, hasWatchers, hasLR := 0.0, 0.0, false, false
	for k, v := range s.gauges {
		switch k.fam {
		case famInflight:
			if p.inflight == nil {
				p.inflight = map[string]float64{}
			}
			p.inflight[k.a] = v
		case famWatchers:
			watchers, hasWatchers = v, true
		case famLongRunning:
			longRunning, hasLR = v, true
		case famFlowInqueue:
			p.inqueue += v
			p.hasInqueue = true
		case famRSS:
			p.rss, p.hasRSS = v, true
		}
	}
	switch {
	case hasWatchers:
		p.watchers, p.hasWatch = watchers, true
	case hasLR:
		p.watchers, p.hasWatch = longRunning, true
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
