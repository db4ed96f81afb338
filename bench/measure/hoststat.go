package measure

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// CPUTimes are the host's cumulative CPU times from the "cpu" line of
// /proc/stat, summed over every CPU, in USER_HZ ticks (proc(5)).
type CPUTimes struct {
	User, Nice, System, Idle, IOWait, IRQ, SoftIRQ, Steal uint64
	// CPUs is the number of "cpuN" lines: the online CPUs.
	CPUs int
}

// Total is every tick of the CPU times. guest and guest_nice are left out:
// the kernel already counts them in user and nice (proc(5)).
func (c CPUTimes) Total() uint64 {
	return c.User + c.Nice + c.System + c.Idle + c.IOWait + c.IRQ + c.SoftIRQ + c.Steal
}

// ParseProcStat reads the aggregate "cpu" line and counts the "cpuN" lines
// of a /proc/stat text. Kernels before 2.6.11 lack steal (and 2.6.0 lacks
// iowait, irq and softirq): missing trailing fields are 0, but the four
// fields user, nice, system and idle are required.
func ParseProcStat(text []byte) (CPUTimes, error) {
	var c CPUTimes
	found := false
	sc := bufio.NewScanner(bytes.NewReader(text))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || !strings.HasPrefix(fields[0], "cpu") {
			continue
		}
		if fields[0] != "cpu" {
			if _, err := strconv.Atoi(fields[0][len("cpu"):]); err == nil {
				c.CPUs++
			}
			continue
		}
		if len(fields) < 5 {
			return CPUTimes{}, fmt.Errorf("/proc/stat: the cpu line has %d fields, want at least 4 numbers: %q", len(fields)-1, sc.Text())
		}
		dst := []*uint64{&c.User, &c.Nice, &c.System, &c.Idle, &c.IOWait, &c.IRQ, &c.SoftIRQ, &c.Steal}
		for i, f := range fields[1:min(len(fields), len(dst)+1)] {
			v, err := strconv.ParseUint(f, 10, 64)
			if err != nil {
				return CPUTimes{}, fmt.Errorf("/proc/stat: cpu field %d: %q is not a tick count", i+1, f)
			}
			*dst[i] = v
		}
		found = true
	}
	if err := sc.Err(); err != nil {
		return CPUTimes{}, fmt.Errorf("/proc/stat: %w", err)
	}
	if !found {
		return CPUTimes{}, fmt.Errorf("/proc/stat: no cpu line")
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
	total := float64(ct - pt)
	idle := float64(cur.Idle - prev.Idle)
	iowait := float64(cur.IOWait - prev.IOWait)
	busy := 1 - (idle+iowait)/total
	return HostUsage{
		Busy:   min(max(busy, 0), 1),
		IOWait: iowait / total,
		Steal:  float64(cur.Steal-prev.Steal) / total,
	}, true
}

// hostSample is the host's usage over one sampling interval, with the CPU
// the watched processes used in it.
type hostSample struct {
	// end is when the interval ended; seconds is its length.
	end     float64
	seconds float64
	usage   HostUsage
	// process is the CPU seconds each watched process used in the
	// interval, by component.
	process map[string]float64
}

// SaturatedSeconds is the time of the samples in which the host was at
// least HostSaturatedBusy busy.
func saturatedSeconds(samples []hostSample) float64 {
	var s float64
	for _, x := range samples {
		if x.usage.Busy >= HostSaturatedBusy {
			s += x.seconds
		}
	}
	return s
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

// busyMax is the largest busy fraction of the samples at least minSeconds
// long, or of all of them when none is.
func busyMax(samples []hostSample, minSeconds float64) float64 {
	var m, all float64
	long := false
	for _, s := range samples {
		all = max(all, s.usage.Busy)
		if s.seconds >= minSeconds {
			m, long = max(m, s.usage.Busy), true
		}
	}
	if !long {
		return all
	}
	return m
}

// IsHostBound is the host-bound rule: a storm window in which the host was
// saturated (at least HostSaturatedBusy busy) for more than
// HostBoundFraction of its length. Its latencies and recovery times
// describe the machine as much as the control plane.
func IsHostBound(saturatedSeconds, windowSeconds float64) bool {
	return windowSeconds > 0 && saturatedSeconds > HostBoundFraction*windowSeconds
}
