package measure

import "github.com/stormbench/stormbench/bench/result"

// MeasurementStorm is the result measurement with what the simulated
// kubelets did (Simulator: their counters, named by bench/kubelet's Counter
// constants, and the restarts) and what stormbench itself cost (SelfCost)
// during the storm. It is not a profile section: the run adds both
// measurements to every storm. Its figures are named here so that every
// reader and the merge share one vocabulary.
const MeasurementStorm = "storm"

// Figures of MeasurementStorm besides the simulator's counters, all in its
// storm window.
const (
	// StormCPUSeconds is stormbench's user + system CPU between the storm's
	// start and its end (full recovery) (SelfCost).
	StormCPUSeconds = "stormbench_cpu_seconds"
	// StormPeakRSS is stormbench's process peak RSS over its life so far
	// (VmHWM) (SelfCost).
	StormPeakRSS = "stormbench_peak_rss_bytes"
	// StormRSSStart and StormRSSPeak are stormbench's RSS at the storm's
	// start, after returning freed memory to the OS, and the peak of its
	// sampled RSS during the storm (SelfCost).
	StormRSSStart = "stormbench_rss_start_bytes"
	StormRSSPeak  = "stormbench_rss_peak_bytes"
	// StormRSSGrowthPerRestart is (StormRSSPeak − StormRSSStart) ÷
	// restarts: the memory one simulated node costs when all restart at
	// once (SelfCost).
	StormRSSGrowthPerRestart = "stormbench_rss_growth_per_restart_bytes"
	// StormRestarts is the number of node restarts: the outcomes that took
	// their node down (storm.Restarts), the count every per-restart figure divides by
	// (Simulator).
	StormRestarts = "restarts"
	// StormPodsLost counts standalone pods of the plan that no longer
	// exist: evicted while their node was down, nothing replaces them
	// (Simulator).
	StormPodsLost = "pods_lost"
	// StormStaleReadinessFixed counts pods the node-lifecycle controller
	// left not ready on nodes that KWOK (not a simulated kubelet) brought
	// back, set Ready by stormbench acting as their kubelet (kwok#1464)
	// (Simulator).
	StormStaleReadinessFixed = "stale_readiness_fixed"
)

// stormMerge is how result.Merge combines the shards' storm measurements.
// Every counter of the simulator is per-shard work and summed (the default),
// and so are the restarts (each shard's own restarts) and stormbench's CPU
// seconds and RSS figures (start, peak, process peak): the shards are
// separate processes, so the sum is the tool's total cost (an upper bound
// for the peaks, which need not coincide). podsLost is a fleet-wide count
// every shard observed, so the maximum is kept.
// stormbenchRSSGrowthPerRestartBytes is recomputed by mergeRSSGrowth.
func stormMerge() result.MergeRule {
	return result.MergeRule{Scope: result.PerShard, Figures: map[string]result.Aggregation{
		StormCPUSeconds:          result.Sum,
		StormPeakRSS:             result.Sum,
		StormRSSStart:            result.Sum,
		StormRSSPeak:             result.Sum,
		StormRSSGrowthPerRestart: result.Recompute,
		StormRestarts:            result.Sum,
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
