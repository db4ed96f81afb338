package host

import (
	"fmt"

	"github.com/stormbench/stormbench/bench/measure"
	"github.com/stormbench/stormbench/bench/result"
)

// Name is the machine stormbench runs on: its CPU from /proc/stat, in the
// baseline and storm windows (Host). It is always on. Against an existing
// cluster, whose control plane runs elsewhere, it is stormbench's own
// machine.
const Name = "host"

// Figures of Name, per window (baseline and storm) unless said.
const (
	// CPUs is the number of online CPUs, without a window.
	CPUs = "cpus"
	// BusyP50 is the median, over the window's time, of the host's busy
	// fraction per sampling interval (one second): the fraction of CPU time
	// neither idle nor iowait, steal included (HostUsage.Busy).
	BusyP50 = "busy_p50"
	// BusyMax is the largest busy fraction of an interval.
	BusyMax = "busy_max"
	// BusyMean is the busy fraction of the whole window.
	BusyMean = "busy_mean"
	// IOWaitMean and StealMean are the iowait and steal fractions
	// of the whole window.
	IOWaitMean = "iowait_mean"
	StealMean  = "steal_mean"
	// SaturatedSeconds is the time of the intervals in which the host
	// was at least SaturatedBusy busy.
	SaturatedSeconds = "saturated_seconds"
	// SaturatedFraction is SaturatedSeconds over the window's
	// sampled time.
	SaturatedFraction = "saturated_fraction"
	// CoreSeconds is the host's capacity in the window: sampled time ×
	// CPUs.
	CoreSeconds = "core_seconds"
	// BusyCoreSeconds is the CPU time the host spent busy.
	BusyCoreSeconds = "busy_core_seconds"
	// Samples counts the sampling intervals of the window.
	Samples = "samples"
	// SeriesBusy is the busy fraction per sampling interval, from the
	// measurement's start (a series, without a window).
	SeriesBusy = "busy"
)

const (
	// SaturatedBusy is the busy fraction at or above which an interval
	// counts as saturated.
	SaturatedBusy = 0.9
	// BoundFraction is how much of a storm window may be saturated
	// before the variant run is host-bound (IsBound).
	BoundFraction = 0.10
)

// Bound reports whether the variant run's storm window was host-bound
// (IsBound), from its host figures; false without them.
func Bound(v *result.VariantRun) bool {
	sat, window, ok := hostStormSaturation(v)
	return ok && IsBound(sat, window)
}

// BoundReason says why a host-bound variant run is one, in a reader's
// words with the figures; "" when it is not host-bound. A run flagged
// hostBound in the result without host figures says only that.
func BoundReason(v *result.VariantRun) string {
	sat, window, ok := hostStormSaturation(v)
	switch {
	case ok && IsBound(sat, window):
		return fmt.Sprintf("the host was at least %.0f %% busy for %.0f s of the %.0f s storm window (%.0f %%, more than %.0f %%)",
			100*SaturatedBusy, sat, window, 100*sat/window, 100*BoundFraction)
	case v.HostBound:
		return "the result flags it hostBound"
	}
	return ""
}

// BoundNote is the warning the summary and the report give for a
// host-bound variant run; "" when it is not one.
func BoundNote(v *result.VariantRun) string {
	if !v.HostBound && !Bound(v) {
		return ""
	}
	return fmt.Sprintf("%s#%d is host-bound: %s; its latencies and recovery times describe this machine as much as the control plane (give the control plane headroom with controlPlane.cpus, or use a bigger machine)",
		v.Variant, v.Repetition, BoundReason(v))
}

// hostStormSaturation returns the storm window's saturated seconds and its
// length.
func hostStormSaturation(v *result.VariantRun) (saturated, window float64, ok bool) {
	m := v.Measurement(Name)
	sat, ok := m.Value(SaturatedSeconds, result.WindowStorm)
	w, okw := m.Window(result.WindowStorm)
	if !ok || !okw {
		return 0, 0, false
	}
	return sat, w.Duration().Seconds(), true
}

// Merge is how result.Merge combines the shards' host measurements.
// Each shard samples the machine it runs on: the host figures keep the
// worst shard's (Max; shards on one machine read the same). The busy series
// is kept for a lone shard only.
func Merge() result.MergeRule {
	return result.MergeRule{Scope: result.PerShard, Figures: measure.Figures(map[result.Aggregation][]string{
		result.Max: {CPUs, BusyP50, BusyMax, BusyMean, IOWaitMean, StealMean, SaturatedSeconds, SaturatedFraction,
			CoreSeconds, BusyCoreSeconds, Samples},
		result.LoneShard: {SeriesBusy},
	})}
}
