package churn

import (
	"maps"
	"slices"
	"sync"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/utils/clock"

	"github.com/stormbench/stormbench/bench/measure/internal/track"
	"github.com/stormbench/stormbench/bench/result"
)

// Window holds the EndpointSlice churn of one window; METRICS.md
// defines each figure.
type Window struct {
	// Start and End bound the window.
	Start, End time.Time
	// Creates, Updates and Deletes count slice writes seen by the watch;
	// Writes is their sum.
	Creates, Updates, Deletes, Writes int
	// BytesWritten sums the protobuf size of every created or updated slice.
	BytesWritten int64
	// FlipsToNotReady and FlipsToReady count endpoint ready flips.
	FlipsToNotReady, FlipsToReady int
	// NotReadyPeak is the highest number of not-ready endpoints at once.
	NotReadyPeak int
	// NotReadySeconds integrates the number of not-ready endpoints over time.
	NotReadySeconds float64
	// Outages maps a Service (namespace/name) that fell from at least one
	// ready endpoint to none, to its seconds without a ready endpoint.
	Outages map[string]float64
	// OngoingOutages counts Services still without a ready endpoint at the
	// end of the window.
	OngoingOutages int
}

// OutageSeconds sums the outage seconds of every Service.
func (w *Window) OutageSeconds() float64 {
	s := 0.0
	for _, v := range w.Outages {
		s += v
	}
	return s
}

// Snapshot is SliceTracker's state at one time.
type Snapshot struct {
	// Baseline is the window before MarkStormStart (the whole observation
	// when the storm start was never marked); Storm runs from the storm
	// start to the snapshot.
	Baseline, Storm Window
	// StormMarked reports whether MarkStormStart was called.
	StormMarked bool
	// Endpoints and Services are the numbers tracked at the snapshot.
	Endpoints, Services int
	// NotReady is the number of not-ready endpoints at the snapshot.
	NotReady int
	// Series are 1 s series of not-ready endpoints and slice writes.
	Series []result.Series
}

type svcState struct {
	ready, notReady int
	hadReady        bool // has had a ready endpoint, so can fall to zero
	deleted         bool
	outage          bool
	outageFrom      time.Time // start of the current outage segment
}

// SliceTracker counts EndpointSlice churn from watch events. It is the pure
// core of the endpointSlices measurement: feed it the add/update/delete
// events of an EndpointSlice watch (and Service events, so that deleting a
// Service is not taken for an outage) and it timestamps each with its clock.
// It is safe for concurrent use.
//
// Its figures are only as exact as the watch: a watch that breaks and
// relists sees the final state of every slice, not the writes in between
// (the informer then turns the difference into updates and deletes).
type SliceTracker struct {
	mu  sync.Mutex
	clk clock.PassiveClock

	idx      *track.EndpointIndex
	services map[string]*svcState

	origin     time.Time
	last       time.Time // last integration time
	notReady   int
	stormStart time.Time
	windows    [2]Window // baseline, storm
	cur        int

	notReadySeries track.SecondSeries
	writesSeries   track.SecondSeries
}

// NewSliceTracker returns an empty tracker; its baseline window starts now.
func NewSliceTracker(clk clock.PassiveClock) *SliceTracker {
	now := clk.Now()
	t := &SliceTracker{
		clk:            clk,
		idx:            track.NewEndpointIndex(),
		services:       map[string]*svcState{},
		origin:         now,
		last:           now,
		notReadySeries: track.SecondSeries{Origin: now},
		writesSeries:   track.SecondSeries{Origin: now, Sum: true},
	}
	t.windows[0] = Window{Start: now, Outages: map[string]float64{}}
	return t
}

// advance integrates the not-ready level up to now. Callers hold t.mu.
func (t *SliceTracker) advance(now time.Time) {
	if now.After(t.last) {
		t.windows[t.cur].NotReadySeconds += float64(t.notReady) * now.Sub(t.last).Seconds()
		t.last = now
	}
}

// MarkStormStart closes the baseline window and opens the storm window.
func (t *SliceTracker) MarkStormStart(at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cur == 1 {
		return
	}
	t.advance(at)
	for name, s := range t.services {
		if s.outage {
			t.windows[0].Outages[name] += at.Sub(s.outageFrom).Seconds()
			s.outageFrom = at
		}
	}
	t.windows[0].End = at
	t.stormStart = at
	t.cur = 1
	t.windows[1] = Window{Start: at, Outages: map[string]float64{}, NotReadyPeak: t.notReady}
}

// OnAdd records a slice added. Slices of the watch's initial list
// (initialList true) set the starting state and are not counted as writes.
func (t *SliceTracker) OnAdd(s *discoveryv1.EndpointSlice, initialList bool) {
	t.record(s, false, !initialList, func(w *Window) *int { return &w.Creates })
}

// OnUpdate records a slice updated. An update with an unchanged, non-empty
// resourceVersion (an informer resync) is not a write.
func (t *SliceTracker) OnUpdate(old, cur *discoveryv1.EndpointSlice) {
	write := old == nil || old.ResourceVersion == "" || old.ResourceVersion != cur.ResourceVersion
	t.record(cur, false, write, func(w *Window) *int { return &w.Updates })
}

// OnDelete records a slice deleted.
func (t *SliceTracker) OnDelete(s *discoveryv1.EndpointSlice) {
	t.record(s, true, true, func(w *Window) *int { return &w.Deletes })
}

// record folds a slice event into the state. A write counts in the current
// window, as the kind count picks, and a created or updated slice's bytes
// with it.
func (t *SliceTracker) record(s *discoveryv1.EndpointSlice, deleted, write bool, count func(*Window) *int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.clk.Now()
	if write {
		w := &t.windows[t.cur]
		*count(w)++
		w.Writes++
		if !deleted {
			w.BytesWritten += int64(s.Size())
		}
		t.writesSeries.Observe(now, 1)
	}
	t.applySlice(now, s, deleted)
}

// OnService records that a Service exists (deleted false) or was deleted.
// A deleted Service's open outage ends at its deletion and it is no longer
// tracked, so deleting a Service is not an outage.
func (t *SliceTracker) OnService(namespace, name string, deleted bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.clk.Now()
	id := namespace + "/" + name
	s := track.Entry(t.services, id, nil)
	if deleted && s.outage {
		t.windows[t.cur].Outages[id] += now.Sub(s.outageFrom).Seconds()
		s.outage = false
	}
	s.deleted = deleted
}

// applySlice folds a slice's endpoints into the state. Callers hold t.mu.
func (t *SliceTracker) applySlice(now time.Time, s *discoveryv1.EndpointSlice, deleted bool) {
	id, eps, ok := track.SliceEndpoints(s)
	if !ok {
		return
	}
	if deleted {
		if !t.idx.Has(id) {
			return
		}
		eps = nil
	}
	t.advance(now)
	w := &t.windows[t.cur]
	for _, c := range t.idx.Apply(id, eps) {
		svcID := c.Key.ServiceID()
		svc := track.Entry(t.services, svcID, nil)
		switch c.From {
		case track.EpReady:
			svc.ready--
		case track.EpNotReady:
			svc.notReady--
			t.notReady--
		}
		switch c.To {
		case track.EpReady:
			svc.ready++
		case track.EpNotReady:
			svc.notReady++
			t.notReady++
		}
		switch {
		case c.From == track.EpReady && c.To == track.EpNotReady:
			w.FlipsToNotReady++
		case c.From == track.EpNotReady && c.To == track.EpReady:
			w.FlipsToReady++
		}
		switch {
		case svc.ready > 0:
			svc.hadReady = true
			if svc.outage {
				w.Outages[svcID] += now.Sub(svc.outageFrom).Seconds()
				svc.outage = false
			}
		case svc.hadReady && !svc.outage && !svc.deleted:
			svc.outage = true
			svc.outageFrom = now
			if _, ok := w.Outages[svcID]; !ok {
				w.Outages[svcID] = 0
			}
		}
	}
	w.NotReadyPeak = max(w.NotReadyPeak, t.notReady)
	t.notReadySeries.Observe(now, float64(t.notReady))
}

// Snapshot returns the figures as of now, crediting open outages and the
// not-ready integral up to now without closing them.
func (t *SliceTracker) Snapshot() Snapshot {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.clk.Now()
	t.advance(now)
	snap := Snapshot{
		Baseline:    copyWindow(t.windows[0]),
		StormMarked: t.cur == 1,
		Endpoints:   len(t.idx.Agg),
		NotReady:    t.notReady,
	}
	open := &snap.Baseline
	if t.cur == 1 {
		snap.Storm = copyWindow(t.windows[1])
		open = &snap.Storm
	}
	open.End = now
	for id, s := range t.services {
		if !s.deleted {
			snap.Services++
		}
		if s.outage {
			open.Outages[id] += now.Sub(s.outageFrom).Seconds()
			open.OngoingOutages++
		}
	}
	snap.Series = []result.Series{
		t.notReadySeries.Series(SeriesNotReady, result.UnitCount, now),
		t.writesSeries.Series(SeriesSliceWrites, result.UnitCount, now),
	}
	return snap
}

func copyWindow(w Window) Window {
	w.Outages = maps.Clone(w.Outages)
	return w
}

// churnResult turns a snapshot into result figures. nodes is the fleet
// size used for the fan-out estimate.
func churnResult(snap Snapshot, nodes int) result.Measurement {
	out := result.Measurement{Name: Name}
	add := func(name, window, unit string, v float64, labels ...string) {
		out.Values = append(out.Values, result.Value{Name: name, Window: window, Unit: unit, Value: v, Labels: result.Labels(labels...)})
	}
	windows := []Window{snap.Baseline, snap.Storm}
	if !snap.StormMarked {
		windows = windows[:1]
		out.Warnings = append(out.Warnings, "the storm start was never marked: every figure is in the baseline window")
	}
	for i, w := range windows {
		name := []string{result.WindowBaseline, result.WindowStorm}[i]
		out.Windows = append(out.Windows, result.Window{Name: name, Start: w.Start, End: w.End})
		add(SliceWrites, name, result.UnitCount, float64(w.Writes))
		add(SliceCreates, name, result.UnitCount, float64(w.Creates))
		add(SliceUpdates, name, result.UnitCount, float64(w.Updates))
		add(SliceDeletes, name, result.UnitCount, float64(w.Deletes))
		add(SliceBytesWritten, name, result.UnitBytes, float64(w.BytesWritten))
		add(SliceFanOutEvents, name, result.UnitEvents, float64(w.Writes)*float64(nodes))
		add(SliceFanOutBytes, name, result.UnitBytes, float64(w.BytesWritten)*float64(nodes))
		add(SliceReadyFlips, name, result.UnitCount, float64(w.FlipsToNotReady), result.LabelDirection, DirectionReadyToNot)
		add(SliceReadyFlips, name, result.UnitCount, float64(w.FlipsToReady), result.LabelDirection, DirectionNotToReady)
		add(SliceNotReadyPeak, name, result.UnitCount, float64(w.NotReadyPeak))
		add(SliceNotReadySeconds, name, result.UnitEndpointSeconds, w.NotReadySeconds)
		add(SliceServicesOutage, name, result.UnitCount, float64(len(w.Outages)))
		add(SliceOutageSeconds, name, result.UnitSeconds, w.OutageSeconds())
		add(SliceOngoingOutages, name, result.UnitCount, float64(w.OngoingOutages))
		for _, svc := range slices.Sorted(maps.Keys(w.Outages)) {
			add(SliceOutageSeconds, name, result.UnitSeconds, w.Outages[svc], result.LabelService, svc)
		}
	}
	add(SliceEndpointsTracked, "", result.UnitCount, float64(snap.Endpoints))
	add(SliceServicesTracked, "", result.UnitCount, float64(snap.Services))
	out.Series = snap.Series
	return out
}
