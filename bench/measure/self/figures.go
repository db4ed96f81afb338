package self

import (
	"slices"

	"github.com/stormbench/stormbench/bench/measure"
	"github.com/stormbench/stormbench/bench/result"
)

// Name is the result measurement with what the simulated
// kubelets did (Simulator: their counters and the restarts) and what
// stormbench itself cost (SelfCost) during the storm. It is not a profile
// section: the run adds both measurements to every storm. Its figures are
// named here, the simulator's counters too, so that the simulator writing
// them and every reader and the merge share one vocabulary.
const Name = "storm"

// The simulated kubelets' counters, figures of Name in its
// storm window: each is the field of kubelet.Counters that it snapshots,
// in snake_case, and that field's comment says what it counts. The
// restarts are not a counter: the restarts' outcomes count them
// (Restarts).
const (
	PodStatusPatches       = "pod_status_patches"
	ReadyFlipsDown         = "ready_flips_down"
	ReadyFlipsUp           = "ready_flips_up"
	ReadyFlipsCoalesced    = "ready_flips_coalesced"
	StatusUpdatesCoalesced = "status_updates_coalesced"
	TokenRequests          = "token_requests"
	ObjectWatches          = "object_watches"
	ContainerRestarts      = "container_restarts"
	MemoryEmptyDirsLost    = "memory_empty_dirs_lost"
	PodsRejected           = "pods_rejected"
	PodsDeleted            = "pods_deleted"
	PodsDrained            = "pods_drained"
	Errors                 = "errors"
	Retries                = "retries"
	EventsDropped          = "events_dropped"
	StatusSyncsDropped     = "status_syncs_dropped"
)

// Figures of Name besides the simulator's counters, in its
// storm window unless said.
const (
	// CPUSeconds is stormbench's user + system CPU between the storm's
	// start and its end (full recovery); in the baseline window, from the
	// moment every measurement observed to the storm's start (SelfCost).
	CPUSeconds = "stormbench_cpu_seconds"
	// StandingCPU is stormbench's standing cost: its CPU per second of
	// the baseline window, a steady fleet watched with no restart, per
	// 1,000 nodes of the fleet (cores per 1,000 nodes), in the baseline
	// window (SelfCost, selfCostSplit).
	StandingCPU = "stormbench_standing_cpu_per_1k_nodes"
	// MarginalCPU is the CPU the storm added to the standing cost:
	// CPUSeconds − the baseline's CPU per second × the storm window's
	// length (SelfCost, selfCostSplit). It can be negative.
	MarginalCPU = "stormbench_marginal_cpu_seconds"
	// MarginalCPUPerRestart is MarginalCPU ÷ restarts: stormbench's
	// marginal cost of one restart (SelfCost).
	MarginalCPUPerRestart = "stormbench_marginal_cpu_seconds_per_restart"
	// PeakRSS is stormbench's process peak RSS over its life so far
	// (VmHWM) (SelfCost).
	PeakRSS = "stormbench_peak_rss_bytes"
	// RSSStart and RSSPeak are stormbench's RSS at the storm's
	// start, after returning freed memory to the OS, and the peak of its
	// sampled RSS during the storm (SelfCost).
	RSSStart = "stormbench_rss_start_bytes"
	RSSPeak  = "stormbench_rss_peak_bytes"
	// RSSGrowthPerRestart is (RSSPeak − RSSStart) ÷
	// restarts: the memory one simulated node costs when all restart at
	// once (SelfCost).
	RSSGrowthPerRestart = "stormbench_rss_growth_per_restart_bytes"
	// Restarts is the number of node restarts: the outcomes that took
	// their node down (storm.Restarts), the count every per-restart figure divides by
	// (Simulator).
	Restarts = "restarts"
	// PodsLost counts standalone pods of the plan that no longer
	// exist: evicted while their node was down, nothing replaces them
	// (Simulator).
	PodsLost = "pods_lost"
	// StaleReadinessFixed counts pods the node-lifecycle controller
	// left not ready on nodes that KWOK (not a simulated kubelet) brought
	// back, set Ready by stormbench acting as their kubelet (kwok#1464)
	// (Simulator).
	StaleReadinessFixed = "stale_readiness_fixed"
)

// Merge is how result.Merge combines the shards' storm measurements.
// Every counter of the simulator is per-shard work and summed (the default),
// and so are the restarts (each shard's own restarts) and stormbench's CPU
// seconds and RSS figures (start, peak, process peak): the shards are
// separate processes, so the sum is the tool's total cost (an upper bound
// for the peaks, which need not coincide). The standing cost sums too:
// each shard's rate is over the whole fleet's nodes, and the rates of
// separate processes add; so does the marginal CPU. podsLost is a
// fleet-wide count every shard observed, so the maximum is kept. The
// figures per restart are recomputed by mergePerRestart.
func Merge() result.MergeRule {
	return result.MergeRule{Scope: result.PerShard, Figures: measure.Figures(map[result.Aggregation][]string{
		result.Sum:       {CPUSeconds, StandingCPU, MarginalCPU, PeakRSS, RSSStart, RSSPeak, Restarts, StaleReadinessFixed},
		result.Recompute: {MarginalCPUPerRestart, RSSGrowthPerRestart},
		result.Max:       {PodsLost},
	}), Finish: mergePerRestart}
}

// mergePerRestart recomputes the storm measurement's figures per restart
// over the merged restarts (mergeRSSGrowth, mergeMarginalCPU).
func mergePerRestart(s *result.MergeShards, m *result.Measurement) error {
	mergeRSSGrowth(s, m)
	mergeMarginalCPU(s, m)
	return nil
}

// mergeMarginalCPU sets the marginal CPU per restart as Σ marginal CPU ÷
// merged restarts. The split holds only when every shard made it: with a
// shard that had no baseline to take its standing cost from, the sums would
// leave that process out, so the split figures are dropped, with a note.
func mergeMarginalCPU(s *result.MergeShards, m *result.Measurement) {
	present, split := 0, 0
	for _, x := range s.Measurements {
		if x == nil {
			continue
		}
		present++
		if _, ok := x.Value(MarginalCPU, result.WindowStorm); ok {
			split++
		}
	}
	switch {
	case split == 0:
		return
	case split < present:
		m.Values = slices.DeleteFunc(m.Values, func(v result.Value) bool {
			return v.Name == StandingCPU || v.Name == MarginalCPU || v.Window == result.WindowBaseline && v.Name == CPUSeconds
		})
		s.Note("stormbench's CPU is not split into its standing and marginal costs: %d of %d shards had no baseline window to split it by", present-split, present)
		return
	case s.Restarts == 0:
		return
	}
	marginal, _ := m.Value(MarginalCPU, result.WindowStorm)
	m.Values = append(m.Values, result.Value{Name: MarginalCPUPerRestart, Window: result.WindowStorm, Unit: result.UnitSeconds,
		Value: marginal / float64(s.Restarts)})
}

// mergeRSSGrowth sets the storm measurement's RSS growth per restart as
// (Σ peak − Σ start) ÷ merged restarts, if any shard recorded it.
func mergeRSSGrowth(s *result.MergeShards, m *result.Measurement) {
	peak, okPeak := m.Value(RSSPeak, result.WindowStorm)
	start, okStart := m.Value(RSSStart, result.WindowStorm)
	had := false
	for _, x := range s.Measurements {
		if _, ok := x.Value(RSSGrowthPerRestart, result.WindowStorm); ok {
			had = true
		}
	}
	if !had || !okPeak || !okStart || s.Restarts == 0 {
		return
	}
	m.Values = append(m.Values, result.Value{Name: RSSGrowthPerRestart, Window: result.WindowStorm, Unit: result.UnitBytes,
		Value: (peak - start) / float64(s.Restarts)})
}
