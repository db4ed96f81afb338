package host

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/prometheus/procfs"
)

// CPUTimes are the host's cumulative CPU times from the "cpu" line of
// /proc/stat, summed over every CPU, in seconds (procfs converts the
// kernel's USER_HZ ticks).
type CPUTimes struct {
	User, Nice, System, Idle, IOWait, IRQ, SoftIRQ, Steal float64
	// CPUs is the number of "cpuN" lines: the online CPUs.
	CPUs int
}

// Total is every second of the CPU times. guest and guest_nice are left
// out: the kernel already counts them in user and nice (proc(5)).
func (c CPUTimes) Total() float64 {
	return c.User + c.Nice + c.System + c.Idle + c.IOWait + c.IRQ + c.SoftIRQ + c.Steal
}

// ReadCPUTimes reads the aggregate "cpu" line and counts the "cpuN" lines
// of fs's stat file with procfs. Kernels before 2.6.11 lack steal (and
// 2.6.0 lacks iowait, irq and softirq): missing trailing fields are 0.
func ReadCPUTimes(fs procfs.FS) (CPUTimes, error) {
	st, err := fs.Stat()
	if err != nil {
		return CPUTimes{}, fmt.Errorf("reading the host's CPU times: %w", err)
	}
	t := st.CPUTotal
	c := CPUTimes{User: t.User, Nice: t.Nice, System: t.System, Idle: t.Idle, IOWait: t.Iowait, IRQ: t.IRQ, SoftIRQ: t.SoftIRQ, Steal: t.Steal, CPUs: len(st.CPU)}
	if c.Total() == 0 {
		return CPUTimes{}, errors.New("reading the host's CPU times: /proc/stat has no cpu line")
	}
	return c, nil
}

// HostUsage is how the host's CPU time between two readings of /proc/stat
// was spent, each as a fraction of it (0 to 1).
type HostUsage struct {
	// Busy is every tick that was neither idle nor iowait. Steal counts as
	// busy: the hypervisor gave that time to another guest, so this machine
	// could not use it.
	Busy float64
	// IOWait is idle time with I/O outstanding.
	IOWait float64
	// Steal is time the hypervisor ran another guest.
	Steal float64
}

// Usage returns the host's usage between two readings, or false when no
// tick passed (or the counters went back, as after a CPU went offline).
func Usage(prev, cur CPUTimes) (HostUsage, bool) {
	pt, ct := prev.Total(), cur.Total()
	if ct <= pt || cur.Idle < prev.Idle || cur.IOWait < prev.IOWait || cur.Steal < prev.Steal {
		return HostUsage{}, false
	}
	total := ct - pt
	idle := cur.Idle - prev.Idle
	iowait := cur.IOWait - prev.IOWait
	busy := 1 - (idle+iowait)/total
	return HostUsage{
		Busy:   min(max(busy, 0), 1),
		IOWait: iowait / total,
		Steal:  (cur.Steal - prev.Steal) / total,
	}, true
}

// hostSample is the host's usage over one sampling interval.
type hostSample struct {
	// end is when the interval ended; seconds is its length.
	end     float64
	seconds float64
	usage   HostUsage
}

// busyPercentile is the p-th percentile (0-100) of the busy fraction over
// the samples' time: the smallest busy fraction the host was at or below
// for p % of it. 0 without samples.
func busyPercentile(samples []hostSample, p float64) float64 {
	if len(samples) == 0 {
		return 0
	}
	sorted := slices.Clone(samples)
	slices.SortStableFunc(sorted, func(a, b hostSample) int { return cmp.Compare(a.usage.Busy, b.usage.Busy) })
	var total float64
	for _, s := range sorted {
		total += s.seconds
	}
	var acc float64
	for _, s := range sorted {
		acc += s.seconds
		if acc >= p/100*total-1e-9 {
			return s.usage.Busy
		}
	}
	return sorted[len(sorted)-1].usage.Busy
}

// IsBound is the host-bound rule: a storm window in which the host was
// saturated (at least SaturatedBusy busy) for more than
// BoundFraction of its length. Its latencies and recovery times
// describe the machine as much as the control plane.
func IsBound(saturatedSeconds, windowSeconds float64) bool {
	return windowSeconds > 0 && saturatedSeconds > BoundFraction*windowSeconds
}
