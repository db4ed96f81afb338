package result

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"
)

// Merging one measurement's figures across shards: values, histograms and series, each by its rule.

// mergeMeasurement merges one measurement of every shard by its rule.
func mergeMeasurement(name string, rules MergeRules, s *MergeShards) (Measurement, error) {
	rule, known := rules[name]
	if !known {
		rule = MergeRule{Scope: ClusterWide}
	}
	out := Measurement{Name: name}
	if rule.Scope == ClusterWide {
		ref := s.Reference
		if ref >= 0 {
			m := s.Measurements[ref]
			out.Error = m.Error
			out.Windows = slices.Clone(m.Windows)
			out.Warnings = slices.Clone(m.Warnings)
		}
		if s.Present() > 1 {
			s.Note("cluster-wide figures taken from shard %d, whose window ends last, not summed: every shard observed the same control plane", ref)
			if s.stormSpread > stormStartTolerance {
				s.Note("the shards' storms started up to %s apart (no shared --start-at?): shard %d's window may miss part of another shard's storm", s.stormSpread.Round(time.Millisecond), ref)
			}
		}
	} else {
		var errs []string
		for i, m := range s.Measurements {
			if m != nil && m.Error != "" {
				errs = append(errs, fmt.Sprintf("shard %d: %s", i, m.Error))
			}
		}
		out.Error = strings.Join(errs, "; ")
		out.Windows = unionWindows(s.Measurements)
		out.Warnings = shardWarnings(s.Measurements)
	}
	if !known {
		s.Note("measurement %s is unknown to merge: treated as cluster-wide and taken from one shard", name)
	}

	var err error
	if out.Values, err = mergeFigures(rule, s, func(m *Measurement) []Value { return m.Values }, (*Value).key,
		func(v Value) Value { v.Labels = maps.Clone(v.Labels); return v },
		func(name string, a Aggregation, acc Value, copies []*Value) (Value, error) {
			acc.Value = copies[0].Value
			for _, x := range copies[1:] {
				switch a {
				case Max:
					acc.Value = max(acc.Value, x.Value)
				case Sum:
					acc.Value += x.Value
				default:
					return Value{}, fmt.Errorf("value %s: unknown aggregation %d", name, a)
				}
			}
			return acc, nil
		}); err != nil {
		return Measurement{}, err
	}
	if out.Histograms, err = mergeFigures(rule, s, func(m *Measurement) []Histogram { return m.Histograms }, (*Histogram).key, Histogram.Clone,
		func(name string, a Aggregation, h Histogram, copies []*Histogram) (Histogram, error) {
			if a != Sum {
				return Histogram{}, fmt.Errorf("histogram %s: aggregation %d applies to values only", name, a)
			}
			if len(copies) == 1 {
				return h, nil
			}
			h, err := MergeHistograms(copies...)
			h.Labels = maps.Clone(h.Labels)
			return h, err
		}); err != nil {
		return Measurement{}, err
	}
	if out.Series, err = mergeFigures(rule, s, func(m *Measurement) []Series { return m.Series }, (*Series).key,
		func(x Series) Series { x.Labels, x.Points = maps.Clone(x.Labels), slices.Clone(x.Points); return x },
		func(name string, a Aggregation, _ Series, copies []*Series) (Series, error) {
			if a != Sum {
				return Series{}, fmt.Errorf("series %s: aggregation %d applies to values only", name, a)
			}
			return sumSeries(copies...), nil
		}); err != nil {
		return Measurement{}, err
	}
	if rule.Finish != nil {
		if err := rule.Finish(s, &out); err != nil {
			return Measurement{}, err
		}
	}
	for i, x := range s.Measurements {
		if x == nil {
			s.Note("shard %d has no %s measurement", i, name)
		}
	}
	out.Warnings = append(out.Warnings, s.notes...)
	out.Sort()
	return out, nil
}

// mergeFigures merges one kind of figure (figures reads them, key keys
// them) of every shard by its aggregation. The merge holds the figures of
// a per-shard measurement's every shard, or of a cluster-wide one's
// reference shard; each is dropped (Recompute, LoneShard of several
// shards), a copy kept as it is (clone; LoneShard, Reference), or the
// copies of every shard combined (Sum, Max), given a clone of the first
// copy of the merge's own shards as a template.
func mergeFigures[T any](rule MergeRule, s *MergeShards, figures func(*Measurement) []T, key func(*T) figureKey,
	clone func(T) T, combine func(name string, a Aggregation, template T, copies []*T) (T, error)) ([]T, error) {
	var order []figureKey
	own, ref, copies := map[figureKey]*T{}, map[figureKey]*T{}, map[figureKey][]*T{}
	for i, m := range s.Measurements {
		if m == nil {
			continue
		}
		fs := figures(m)
		for j := range fs {
			k, x := key(&fs[j]), &fs[j]
			copies[k] = append(copies[k], x)
			if i == s.Reference && ref[k] == nil {
				ref[k] = x
			}
			if (rule.Scope != ClusterWide || i == s.Reference) && own[k] == nil {
				own[k] = x
				order = append(order, k)
			}
		}
	}
	var out []T
	for _, k := range order {
		switch a := rule.aggregation(k.name); {
		case a == Recompute, a == LoneShard && s.Present() > 1, a == Reference && ref[k] == nil:
		case a == LoneShard, a == Reference:
			out = append(out, clone(*ref[k]))
		default:
			x, err := combine(k.name, a, clone(*own[k]), copies[k])
			if err != nil {
				return nil, err
			}
			out = append(out, x)
		}
	}
	return out, nil
}

// reference picks the shard whose measurement the cluster-wide figures come
// from: one without a measurement error if possible, then the one whose
// storm window (else any window, else the variant run) ends last, then the
// first.
func (c *MergeShards) reference() int {
	best := -1
	for i, m := range c.Measurements {
		if m == nil {
			continue
		}
		if best < 0 {
			best = i
			continue
		}
		b := c.Measurements[best]
		if m.Error == "" && b.Error != "" ||
			(m.Error == "") == (b.Error == "") && coverEnd(m, c.Variants[i]).After(coverEnd(b, c.Variants[best])) {
			best = i
		}
	}
	return best
}

func coverEnd(m *Measurement, v *VariantRun) time.Time {
	if w, ok := m.Window(WindowStorm); ok {
		return w.End
	}
	end := v.End
	for _, w := range m.Windows {
		end = later(end, w.End)
	}
	return end
}

// unionWindows returns, per window name in order of appearance, the
// earliest start and the latest end over the shards.
func unionWindows(ms []*Measurement) []Window {
	var out []Window
	for _, m := range ms {
		if m == nil {
			continue
		}
		for _, w := range m.Windows {
			i := slices.IndexFunc(out, func(x Window) bool { return x.Name == w.Name })
			if i < 0 {
				out = append(out, w)
				continue
			}
			out[i].Start, out[i].End = earlier(out[i].Start, w.Start), later(out[i].End, w.End)
		}
	}
	return out
}

// shardWarnings returns the shards' warnings, each once, prefixed with the
// shards that gave it.
func shardWarnings(ms []*Measurement) []string {
	var order []string
	by := map[string][]int{}
	for i, m := range ms {
		if m == nil {
			continue
		}
		for _, w := range m.Warnings {
			if _, ok := by[w]; !ok {
				order = append(order, w)
			}
			if !slices.Contains(by[w], i) {
				by[w] = append(by[w], i)
			}
		}
	}
	var out []string
	for _, w := range order {
		out = append(out, plural(len(by[w]), "shard ", "shards ")+joinInts(by[w])+": "+w)
	}
	return out
}

// sumSeries adds level series of several shards on a common time axis. The
// result starts at the earliest start and has one point every step (the
// smallest spacing between consecutive points of any input, 1 s if none
// has two) until a point at or after the latest point of any input. Each input contributes, at
// each merged point, its latest point at or before that time: nothing
// before its first point, and its last value after its last point (a level
// holds until it changes; a series that has ended reports its final level).
// Name, labels and unit come from the first series.
func sumSeries(ss ...*Series) Series {
	if len(ss) == 0 {
		return Series{}
	}
	first := ss[0]
	out := Series{Name: first.Name, Labels: maps.Clone(first.Labels), Unit: first.Unit, Start: first.Start}
	step := math.Inf(1)
	var end time.Time
	for _, s := range ss {
		out.Start = earlier(out.Start, s.Start)
		for j := 1; j < len(s.Points); j++ {
			if d := s.Points[j].T - s.Points[j-1].T; d > 0 {
				step = min(step, d)
			}
		}
		if n := len(s.Points); n > 0 {
			end = later(end, s.Start.Add(seconds(s.Points[n-1].T)))
		}
	}
	if end.IsZero() {
		return out
	}
	if math.IsInf(step, 1) {
		step = 1
	}
	// The axis: the earliest first point, then every step.
	origin := math.Inf(1)
	for _, s := range ss {
		if len(s.Points) > 0 {
			origin = min(origin, s.Start.Sub(out.Start).Seconds()+s.Points[0].T)
		}
	}
	origin = roundMillis(origin)
	last := roundMillis(end.Sub(out.Start).Seconds())
	cursor := make([]int, len(ss))
	// Points until one covers the latest input point.
	for k := 0; k == 0 || out.Points[k-1].T < last-1e-9; k++ {
		t := roundMillis(origin + float64(k)*step)
		at := out.Start.Add(seconds(t))
		sum := 0.0
		for i, s := range ss {
			for cursor[i] < len(s.Points) && !s.Start.Add(seconds(s.Points[cursor[i]].T)).After(at) {
				cursor[i]++
			}
			if cursor[i] > 0 {
				sum += s.Points[cursor[i]-1].V
			}
		}
		out.Points = append(out.Points, Point{T: t, V: sum})
	}
	return out
}

// earlier and later are the earlier and the later of two times.
func earlier(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func seconds(f float64) time.Duration { return time.Duration(math.Round(f * float64(time.Second))) }

func roundMillis(f float64) float64 { return math.Round(f*1000) / 1000 }
