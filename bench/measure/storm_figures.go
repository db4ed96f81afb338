package measure

import "github.com/stormbench/stormbench/bench/result"

// MeasurementStorm is the result measurement with the simulator's own
// counters (named by bench/kubelet's Counter constants) and stormbench's
// own cost. The engine (bench) assembles it after the storm; its figures
// are named here so that every reader and the merge share one vocabulary.
const MeasurementStorm = "storm"

// Figures of MeasurementStorm besides the simulator's counters.
const (
	// StormCPUSeconds is stormbench's own CPU time during the storm.
	StormCPUSeconds = "stormbenchCPUSeconds"
	// StormPeakRSS is stormbench's process peak RSS (VmHWM) at gather time.
	StormPeakRSS = "stormbenchPeakRSSBytes"
	// StormRSSStart and StormRSSPeak are stormbench's RSS at the storm's
	// start and its peak during the storm.
	StormRSSStart = "stormbenchRSSStartBytes"
	StormRSSPeak  = "stormbenchRSSPeakBytes"
	// StormRSSGrowthPerRestart is (StormRSSPeak − StormRSSStart) per
	// restarted node.
	StormRSSGrowthPerRestart = "stormbenchRSSGrowthPerRestartBytes"
	// StormPodsLost counts standalone pods evicted while their node was
	// down: nothing replaces them.
	StormPodsLost = "podsLost"
	// StormStaleReadinessFixed counts pods the node-lifecycle controller
	// left not ready on nodes that KWOK (not a simulated kubelet) brought
	// back, set Ready by stormbench acting as their kubelet (kwok#1464).
	StormStaleReadinessFixed = "staleReadinessFixed"
)

// stormMerge is how result.Merge combines the shards' storm measurements.
// Every counter of the simulator is per-shard work and summed (the default),
// and so are stormbench's CPU seconds and RSS figures (start, peak, process
// peak): the shards are separate processes, so the sum is the tool's total
// cost (an upper bound for the peaks, which need not coincide). podsLost is
// a fleet-wide count every shard observed, so the maximum is kept.
// stormbenchRSSGrowthPerRestartBytes is recomputed by mergeRSSGrowth.
func stormMerge() result.MergeRule {
	return result.MergeRule{Scope: result.PerShard, Figures: map[string]result.Aggregation{
		StormCPUSeconds:          result.Sum,
		StormPeakRSS:             result.Sum,
		StormRSSStart:            result.Sum,
		StormRSSPeak:             result.Sum,
		StormRSSGrowthPerRestart: result.Recompute,
		StormPodsLost:            result.Max,
		StormStaleReadinessFixed: result.Sum,
	}, Finish: mergeRSSGrowth}
}

// mergeRSSGrowth sets the storm measurement's RSS growth per restart as
// (Σ peak − Σ start) ÷ merged restarts, if any shard recorded it.
func mergeRSSGrowth(s *result.MergeShards, m *result.Measurement) error {
	peak, okPeak := m.Value(StormRSSPeak, result.WindowStorm)
	start, okStart := m.Value(StormRSSStart, result.WindowStorm)
	had := false
	for _, x := range s.Measurements {
		if _, ok := x.Value(StormRSSGrowthPerRestart, result.WindowStorm); ok {
			had = true
		}
	}
	if !had || !okPeak || !okStart || s.Restarts == 0 {
		return nil
	}
	m.Values = append(m.Values, result.Value{Name: StormRSSGrowthPerRestart, Window: result.WindowStorm, Unit: result.UnitBytes,
		Value: (peak - start) / float64(s.Restarts)})
	return nil
}
