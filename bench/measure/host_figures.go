package measure

import (
	"fmt"

	"github.com/stormbench/stormbench/bench/result"
)

// MeasurementHost is the machine stormbench runs on: its CPU from
// /proc/stat, and the CPU of stormbench and of each embedded component,
// in the baseline and storm windows (Host). It is always on. Against an
// existing cluster, whose control plane runs elsewhere, it is stormbench's
// own machine.
const MeasurementHost = "host"

// Figures of MeasurementHost, per window (baseline and storm) unless said.
const (
	// HostCPUs is the number of online CPUs, without a window.
	HostCPUs = "cpus"
	// HostBusyP50 is the median, over the window's time, of the host's busy
	// fraction per sampling interval (one second): the fraction of CPU time
	// neither idle nor iowait, steal included (HostUsage.Busy).
	HostBusyP50 = "busy_p50"
	// HostBusyMax is the largest busy fraction of an interval.
	HostBusyMax = "busy_max"
	// HostBusyMean is the busy fraction of the whole window.
	HostBusyMean = "busy_mean"
	// HostIOWaitMean and HostStealMean are the iowait and steal fractions
	// of the whole window.
	HostIOWaitMean = "iowait_mean"
	HostStealMean  = "steal_mean"
	// HostSaturatedSeconds is the time of the intervals in which the host
	// was at least HostSaturatedBusy busy.
	HostSaturatedSeconds = "saturated_seconds"
	// HostSaturatedFraction is HostSaturatedSeconds over the window's
	// sampled time.
	HostSaturatedFraction = "saturated_fraction"
	// HostCoreSeconds is the host's capacity in the window: sampled time ×
	// CPUs.
	HostCoreSeconds = "core_seconds"
	// HostBusyCoreSeconds is the CPU time the host spent busy.
	HostBusyCoreSeconds = "busy_core_seconds"
	// HostProcessCPUSeconds is the user + system CPU of a process, labelled
	// result.LabelComponent: ComponentStormbench, and with an embedded
	// cluster each of its components (kube-apiserver, etcd, ...).
	HostProcessCPUSeconds = "process_cpu_seconds"
	// HostProcessCPUShare is HostProcessCPUSeconds over HostCoreSeconds: the
	// process's share of the whole machine.
	HostProcessCPUShare = "process_cpu_share"
	// HostSamples counts the sampling intervals of the window.
	HostSamples = "samples"
	// HostSeriesBusy is the busy fraction per sampling interval, from the
	// measurement's start (a series, without a window).
	HostSeriesBusy = "busy"
)

// ComponentStormbench labels stormbench's own process in
// HostProcessCPUSeconds and HostProcessCPUShare.
const ComponentStormbench = "stormbench"

const (
	// HostSaturatedBusy is the busy fraction at or above which an interval
	// counts as saturated.
	HostSaturatedBusy = 0.9
	// HostBoundFraction is how much of a storm window may be saturated
	// before the variant run is host-bound (IsHostBound).
	HostBoundFraction = 0.10
)

// HostBound reports whether the variant run's storm window was host-bound
// (IsHostBound), from its host figures; false without them.
func HostBound(v *result.VariantRun) bool {
	sat, window, ok := hostStormSaturation(v)
	return ok && IsHostBound(sat, window)
}

// HostBoundReason says why a host-bound variant run is one, in a reader's
// words with the figures; "" when it is not host-bound. A run flagged
// hostBound in the result without host figures says only that.
func HostBoundReason(v *result.VariantRun) string {
	sat, window, ok := hostStormSaturation(v)
	switch {
	case ok && IsHostBound(sat, window):
		return fmt.Sprintf("the host was at least %.0f %% busy for %.0f s of the %.0f s storm window (%.0f %%, more than %.0f %%)",
			100*HostSaturatedBusy, sat, window, 100*sat/window, 100*HostBoundFraction)
	case v.HostBound:
		return "the result flags it hostBound"
	}
	return ""
}

// HostBoundNote is the warning the summary and the report give for a
// host-bound variant run; "" when it is not one.
func HostBoundNote(v *result.VariantRun) string {
	if !v.HostBound && !HostBound(v) {
		return ""
	}
	return fmt.Sprintf("%s#%d is host-bound: %s; its latencies and recovery times describe this machine as much as the control plane (give the control plane headroom with controlPlane.cpus, or use a bigger machine)",
		v.Variant, v.Repetition, HostBoundReason(v))
}

// hostStormSaturation returns the storm window's saturated seconds and its
// length.
func hostStormSaturation(v *result.VariantRun) (saturated, window float64, ok bool) {
	m := v.Measurement(MeasurementHost)
	sat, ok := m.Value(HostSaturatedSeconds, result.WindowStorm)
	w, okw := m.Window(result.WindowStorm)
	if !ok || !okw {
		return 0, 0, false
	}
	return sat, w.Duration().Seconds(), true
}

// hostMerge is how result.Merge combines the shards' host measurements.
// Each shard samples the machine it runs on: the host figures keep the
// worst shard's (Max; shards on one machine read the same), and the
// processes' CPU seconds and shares add up (each shard's stormbench is its
// own process). The busy series is kept for a lone shard only.
func hostMerge() result.MergeRule {
	return result.MergeRule{Scope: result.PerShard, Figures: map[string]result.Aggregation{
		HostCPUs:              result.Max,
		HostBusyP50:           result.Max,
		HostBusyMax:           result.Max,
		HostBusyMean:          result.Max,
		HostIOWaitMean:        result.Max,
		HostStealMean:         result.Max,
		HostSaturatedSeconds:  result.Max,
		HostSaturatedFraction: result.Max,
		HostCoreSeconds:       result.Max,
		HostBusyCoreSeconds:   result.Max,
		HostSamples:           result.Max,
		HostProcessCPUSeconds: result.Sum,
		HostProcessCPUShare:   result.Sum,
		HostSeriesBusy:        result.LoneShard,
	}}
}
