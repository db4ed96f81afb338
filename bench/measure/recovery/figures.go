package recovery

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/stormbench/stormbench/bench/measure"
	"github.com/stormbench/stormbench/bench/result"
)

// Name is recovery latency.
const Name = "recovery"

// Figures of Name (histograms unless noted).
const (
	Node           = "node_ready"
	Pod            = "pod_ready"
	PodRunning     = "pod_running"
	Service        = "service_ready"
	FleetRecovered = "fleet_recovered"
	// Unrecovered (value, labelled by kind) counts restarts not
	// recovered at gather time.
	Unrecovered = "unrecovered"
	// FromEvents (value) counts nodes whose NotReady state was never
	// observed, so recovery was taken from the storm's ReportedReady event.
	FromEvents = "node_ready_from_events"
	// Unattributed (value, labelled by kind) counts not-ready
	// observations no restart explains.
	Unattributed = "unattributed"
	// The healthy nodes' lease renewals during the storm (values): nodes
	// watched, renewals, late renewals (more than 1.5 renew intervals, a
	// quarter of the lease duration each, after the previous one; a lease
	// not renewed by the end counts too), nodes with a late renewal,
	// expired leases (a gap longer than the lease duration) and the longest
	// gap. The first step of the cascade; the healthy nodes that then went
	// NotReady and their pods are Unattributed's node and pod counts.
	HealthyLeaseNodes     = "healthy_lease_nodes"
	HealthyLeaseRenewals  = "healthy_lease_renewals"
	HealthyLeaseLate      = "healthy_lease_late"
	HealthyLeaseLateNodes = "healthy_lease_late_nodes"
	HealthyLeaseExpired   = "healthy_lease_expired"
	HealthyLeaseMaxGap    = "healthy_lease_max_gap"

	// SeriesUnrecoveredNodes is the number of restarted nodes not yet
	// Ready, from the first Down.
	SeriesUnrecoveredNodes = "unrecovered_nodes"
)

// Merge is how result.Merge combines the shards' recovery
// measurements. Each shard matches what it observed with its own Down
// events, so node_ready, pod_ready and pod_running samples are disjoint and
// their HdrHistograms merge exactly; unrecovered (node, pod, pod_running)
// and node_ready_from_events add up, and the unrecovered_nodes series are
// summed on a common time axis. service_ready merges too, but a Service
// degraded by restarts of several shards is counted once per shard, each
// from that shard's earliest restart (a warning says so when it can
// happen); unrecovered{kind=service} therefore keeps the maximum.
// fleet_recovered (first Down → last recovery) is recomputed from each
// shard's first Down (the start of its unrecovered_nodes series) and
// recovery time, and is empty if any shard had not recovered. unattributed
// is dropped with a warning: every shard counts the other shards' restarts
// as unattributed. The healthy nodes' lease figures are summed like the
// other counts.
//
// See mergeRecovery for the recomputations.
func Merge() result.MergeRule {
	return result.MergeRule{Scope: result.PerShard, Figures: measure.Figures(map[result.Aggregation][]string{
		result.Sum: {Node, Pod, PodRunning, Service,
			FleetRecovered, // recomputed by mergeRecovery
			Unrecovered,    // kind=service: the maximum, by mergeRecovery
			FromEvents, HealthyLeaseNodes, HealthyLeaseRenewals, HealthyLeaseLate, HealthyLeaseLateNodes,
			HealthyLeaseExpired, HealthyLeaseMaxGap, SeriesUnrecoveredNodes},
		result.LoneShard: {Unattributed},
	}), Finish: mergeRecovery}
}

// mergeRecovery recomputes what the generic merge cannot (see Merge).
func mergeRecovery(s *result.MergeShards, out *result.Measurement) error {
	// unrecovered{kind=service}: a degradation spanning shards is counted
	// by each of them.
	for i := range out.Values {
		v := &out.Values[i]
		if v.Name != Unrecovered || v.Labels[result.LabelKind] != "service" {
			continue
		}
		v.Value = 0
		for _, m := range s.Measurements {
			if x, ok := m.Value(Unrecovered, v.Window, result.LabelKind, "service"); ok {
				v.Value = max(v.Value, x)
			}
		}
	}
	if s.Present() >= 2 && slices.ContainsFunc(s.Measurements, func(m *result.Measurement) bool {
		return m != nil && slices.ContainsFunc(m.Values, func(v result.Value) bool { return v.Name == Unattributed && v.Value > 0 })
	}) {
		s.Note("%s dropped: each shard counts the other shards' restarts as unattributed, since its outcomes hold only its own restarts", Unattributed)
	}
	withSamples := 0
	for _, m := range s.Measurements {
		if h := m.Histogram(Service, result.WindowStorm); h != nil && h.Summary.Count > 0 {
			withSamples++
		}
	}
	if withSamples > 1 {
		s.Note("%s: a Service degraded by restarts of several shards is counted once per shard, from that shard's earliest restart", Service)
	}
	// fleet_recovered: recomputed instead of merged.
	for i := range out.Histograms {
		h := &out.Histograms[i]
		if h.Name != FleetRecovered {
			continue
		}
		fr, err := fleetRecovered(s, h)
		if err != nil {
			return err
		}
		*h = fr
	}
	return nil
}

// fleetRecovered recomputes the storm's recovery time, first Down of any
// shard → last recovery of any shard, from each shard's first Down (the
// start of its unrecovered_nodes series) and its own recovery time. The
// merged histogram (template h) is empty if a shard that restarted nodes had
// not recovered.
func fleetRecovered(s *result.MergeShards, h *result.Histogram) (result.Histogram, error) {
	var firstDown, lastRecovered time.Time
	slowest := time.Duration(0)
	aligned := true
	var tmpl *result.Histogram
	for i, m := range s.Measurements {
		x := m.Histogram(h.Name, h.Window, result.LabelPairs(h.Labels)...)
		if x == nil || x.HDR == "" {
			continue
		}
		if tmpl == nil {
			tmpl = x
		}
		if x.Summary.Count == 0 {
			if s.Variants[i].Restarts > 0 {
				// Not recovered by the gather: so is the fleet.
				return x.Clone(), nil
			}
			continue
		}
		d, err := result.DecodeHDR(x.HDR)
		if err != nil {
			return result.Histogram{}, fmt.Errorf("shard %d: %s: %w", i, x.Name, err)
		}
		took := time.Duration(d.Max()) * time.Microsecond
		slowest = max(slowest, took)
		ser := m.SeriesNamed(SeriesUnrecoveredNodes)
		if ser == nil || ser.Start.IsZero() {
			aligned = false
			continue
		}
		if firstDown.IsZero() || ser.Start.Before(firstDown) {
			firstDown = ser.Start
		}
		if end := ser.Start.Add(took); end.After(lastRecovered) {
			lastRecovered = end
		}
	}
	if tmpl == nil {
		return *h, nil
	}
	d, err := result.DecodeHDR(tmpl.HDR)
	if err != nil {
		return result.Histogram{}, fmt.Errorf("%s: %w", tmpl.Name, err)
	}
	d.Reset()
	took := slowest
	if aligned && !firstDown.IsZero() {
		took = lastRecovered.Sub(firstDown)
	} else {
		s.Note("%s is the slowest shard's: without their %s series the shards' first restarts cannot be aligned", FleetRecovered, SeriesUnrecoveredNodes)
	}
	us := min(max(took.Microseconds(), 0), d.HighestTrackableValue())
	if err := d.RecordValue(us); err != nil {
		return result.Histogram{}, fmt.Errorf("%s: %w", tmpl.Name, err)
	}
	out, err := result.FromHDR(tmpl.Name, tmpl.Window, maps.Clone(tmpl.Labels), d)
	if err != nil {
		return result.Histogram{}, err
	}
	out.Unit = tmpl.Unit
	out.HDRUnit = tmpl.HDRUnit
	return out, nil
}
