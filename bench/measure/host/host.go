package host

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/procfs"
	"k8s.io/utils/clock"

	"github.com/stormbench/stormbench/bench/measure"
	"github.com/stormbench/stormbench/bench/result"
)

// Options configure New.
type Options struct {
	// Interval is how often the host is sampled; default 1 s.
	Interval time.Duration
	// ReadCPU returns the host's CPU times; default reads /proc/stat
	// (ReadCPUTimes).
	ReadCPU func() (CPUTimes, error)
}

// Host measures the machine stormbench runs on (Name): every
// interval it reads /proc/stat, on the injected clock. Samples are taken
// at Start, at the storm's start and end (so the windows' edges fall on
// samples) and every interval between; the cadence restarts at the
// storm's start. The storm window ends at MarkStormEnd, as SelfCost's.
type Host struct {
	opts Options

	mu         sync.Mutex
	env        *measure.Env
	origin     time.Time
	stormStart time.Time
	stormEnd   time.Time
	marked     bool
	inStorm    bool
	last       time.Time
	prev       CPUTimes
	havePrev   bool
	baseline   []hostSample
	storm      []hostSample
	series     []result.Point
	cpus       int
	readErrs   int
	firstErr   error
	stop       chan struct{}
	mark       chan time.Time
	done       chan struct{}
}

var (
	_ measure.Measurement    = (*Host)(nil)
	_ measure.StormEndMarker = (*Host)(nil)
)

// New returns the host measurement.
func New(o Options) *Host {
	if o.Interval <= 0 {
		o.Interval = time.Second
	}
	if o.ReadCPU == nil {
		o.ReadCPU = hostCPUReader()
	}
	return &Host{opts: o}
}

// hostCPUReader reads the host's CPU times from /proc/stat, through one
// procfs handle for every sample.
func hostCPUReader() func() (CPUTimes, error) {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return func() (CPUTimes, error) { return CPUTimes{}, err }
	}
	return func() (CPUTimes, error) { return ReadCPUTimes(fs) }
}

// Name implements Measurement.
func (m *Host) Name() string { return Name }

// Start implements Measurement: the first sample, then the sampler.
func (m *Host) Start(_ context.Context, env *measure.Env) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stop != nil {
		return fmt.Errorf("host: already started")
	}
	m.env = env
	m.origin = env.Clock.Now()
	m.sampleLocked(m.origin)
	m.stop, m.mark, m.done = make(chan struct{}), make(chan time.Time), make(chan struct{})
	go m.loop(env.Clock, m.stop, m.mark, m.done)
	return nil
}

// loop samples every interval until stop; a time on mark is sampled at
// once and restarts the cadence.
func (m *Host) loop(clk clock.Clock, stop <-chan struct{}, mark <-chan time.Time, done chan<- struct{}) {
	defer close(done)
	t := clk.NewTimer(m.opts.Interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case now := <-t.C():
			m.mu.Lock()
			m.sampleLocked(now)
			m.mu.Unlock()
			t.Reset(m.opts.Interval)
		case at := <-mark:
			m.mu.Lock()
			m.sampleLocked(clk.Now())
			m.stormStart, m.inStorm = at, true
			m.mu.Unlock()
			if !t.Stop() {
				select {
				case <-t.C():
				default:
				}
			}
			t.Reset(m.opts.Interval)
		}
	}
}

// MarkStormStart implements Measurement: a sample now separates the
// baseline from the storm, whose window starts at t.
func (m *Host) MarkStormStart(t time.Time) {
	m.mu.Lock()
	if m.stop == nil || m.marked {
		m.mu.Unlock()
		return
	}
	m.marked = true
	mark, done := m.mark, m.done
	m.mu.Unlock()
	select {
	case mark <- t:
	case <-done:
	}
}

// MarkStormEnd implements StormEndMarker: a last sample at t, and the
// sampler stops.
func (m *Host) MarkStormEnd(_ context.Context, t time.Time) {
	m.mu.Lock()
	if m.stop == nil || !m.inStorm || !m.stormEnd.IsZero() {
		m.mu.Unlock()
		return
	}
	m.stopLocked()
	if m.havePrev && !t.After(m.last) {
		// Marked late (the calibration ends a case's window after it
		// gathered the case): the samples that began after t are dropped,
		// and the one across it counts up to it, its usage taken as even
		// over it.
		end := t.Sub(m.origin).Seconds()
		m.storm = slices.DeleteFunc(m.storm, func(s hostSample) bool { return s.end-s.seconds >= end })
		if n := len(m.storm); n > 0 && m.storm[n-1].end > end {
			last := &m.storm[n-1]
			last.end, last.seconds = end, end-(last.end-last.seconds)
		}
	} else {
		m.sampleLocked(t)
	}
	m.stormEnd = t
	m.mu.Unlock()
}

// stopLocked stops the sampler and waits for it; m.mu is held and is
// released while waiting.
func (m *Host) stopLocked() {
	select {
	case <-m.stop:
		return
	default:
	}
	close(m.stop)
	done := m.done
	m.mu.Unlock()
	<-done
	m.mu.Lock()
}

// sampleLocked reads the host at now and records the interval since the
// last sample.
func (m *Host) sampleLocked(now time.Time) {
	if m.havePrev && !now.After(m.last) {
		return
	}
	cur, err := m.opts.ReadCPU()
	if err != nil {
		m.readErrs++
		if m.firstErr == nil {
			m.firstErr = err
		}
		return
	}
	m.cpus = cur.CPUs
	prev, had, last := m.prev, m.havePrev, m.last
	m.prev, m.havePrev, m.last = cur, true, now
	if !had {
		return
	}
	u, ok := Usage(prev, cur)
	if !ok {
		return
	}
	s := hostSample{end: now.Sub(m.origin).Seconds(), seconds: now.Sub(last).Seconds(), usage: u}
	m.series = append(m.series, result.Point{T: s.end, V: u.Busy})
	if !m.inStorm {
		m.baseline = append(m.baseline, s)
	} else {
		m.storm = append(m.storm, s)
	}
}

// Gather implements Measurement: the baseline and storm windows' figures.
// A storm that did not reach its end is measured up to now.
func (m *Host) Gather(context.Context) (result.Measurement, error) {
	m.mu.Lock()
	if m.env == nil {
		m.mu.Unlock()
		return result.Measurement{Name: m.Name()}, fmt.Errorf("host: not started")
	}
	if m.inStorm && m.stormEnd.IsZero() {
		m.mu.Unlock()
		m.MarkStormEnd(context.Background(), m.env.Clock.Now())
		m.mu.Lock()
	} else if !m.inStorm {
		m.stopLocked()
		m.sampleLocked(m.env.Clock.Now())
	}
	defer m.mu.Unlock()
	out := result.Measurement{Name: m.Name()}
	baselineEnd := m.stormStart
	if !m.inStorm {
		baselineEnd = m.last
	}
	out.Windows = append(out.Windows, result.Window{Name: result.WindowBaseline, Start: m.origin, End: baselineEnd})
	minSample := m.opts.Interval.Seconds() / 2
	out.Values = append(out.Values, hostWindowValues(result.WindowBaseline, m.baseline, m.cpus, minSample)...)
	if m.inStorm {
		out.Windows = append(out.Windows, result.Window{Name: result.WindowStorm, Start: m.stormStart, End: m.stormEnd})
		out.Values = append(out.Values, hostWindowValues(result.WindowStorm, m.storm, m.cpus, minSample)...)
	}
	if m.cpus > 0 {
		out.Values = append(out.Values, result.Value{Name: CPUs, Unit: result.UnitCount, Value: float64(m.cpus)})
	}
	if len(m.series) > 0 {
		out.Series = append(out.Series, result.Series{Name: SeriesBusy, Unit: result.UnitRatio, Start: m.origin, Points: slices.Clone(m.series)})
	}
	if m.readErrs > 0 {
		out.Warnings = append(out.Warnings, fmt.Sprintf("reading the host's CPU failed %d times (first: %v); those intervals are joined with the next", m.readErrs, m.firstErr))
	}
	if !m.env.Embedded {
		out.Warnings = append(out.Warnings, "the control plane is not stormbench's (an existing cluster): the host figures are stormbench's own machine")
	}
	out.Sort()
	return out, nil
}

// hostWindowValues are the figures of one window's samples; the busy
// maximum is that of the samples at least minSample seconds long (a sliver
// of a few ticks at a window's edge is noise), or of all when none is.
func hostWindowValues(window string, samples []hostSample, cpus int, minSample float64) []result.Value {
	var out []result.Value
	add := func(name, unit string, v float64) {
		out = append(out, result.Value{Name: name, Window: window, Unit: unit, Value: v})
	}
	add(Samples, result.UnitCount, float64(len(samples)))
	if len(samples) == 0 {
		return out
	}
	var secs, busy, iowait, steal, sat, busyMax, longMax float64
	long := false
	for _, s := range samples {
		secs += s.seconds
		busy += s.usage.Busy * s.seconds
		iowait += s.usage.IOWait * s.seconds
		steal += s.usage.Steal * s.seconds
		if s.usage.Busy >= SaturatedBusy {
			sat += s.seconds
		}
		busyMax = max(busyMax, s.usage.Busy)
		if s.seconds >= minSample {
			longMax, long = max(longMax, s.usage.Busy), true
		}
	}
	if long {
		busyMax = longMax
	}
	add(BusyP50, result.UnitRatio, busyPercentile(samples, 50))
	add(BusyMax, result.UnitRatio, busyMax)
	add(BusyMean, result.UnitRatio, busy/secs)
	add(IOWaitMean, result.UnitRatio, iowait/secs)
	add(StealMean, result.UnitRatio, steal/secs)
	add(SaturatedSeconds, result.UnitSeconds, sat)
	add(SaturatedFraction, result.UnitRatio, sat/secs)
	if cpus > 0 {
		add(CoreSeconds, result.UnitSeconds, secs*float64(cpus))
		add(BusyCoreSeconds, result.UnitSeconds, busy*float64(cpus))
	}
	return out
}

// Dispose implements Measurement: the sampler stops.
func (m *Host) Dispose() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stop != nil {
		m.stopLocked()
	}
}
