package measure

import (
	"context"
	"runtime/debug"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/procfs"
	"k8s.io/utils/clock"

	"github.com/stormbench/stormbench/bench/result"
	"github.com/stormbench/stormbench/bench/storm"
)

// Process reads what stormbench's own process costs. ProcSelf reads the
// running process; tests inject a fake.
type Process interface {
	// RSS is the resident set size, in bytes (0 when unknown).
	RSS() int64
	// PeakRSS is the peak resident set size (VmHWM), in bytes.
	PeakRSS() int64
	// CPU is the user + system CPU time used so far.
	CPU() time.Duration
	// FreeOSMemory collects garbage and returns freed memory to the OS.
	FreeOSMemory()
}

// SelfCostOptions configure NewSelfCost.
type SelfCostOptions struct {
	// Interval is how often RSS is sampled during the storm; default 500 ms.
	Interval time.Duration
	// HeapProfile, when set, receives a heap profile at RSS peaks.
	HeapProfile *PeakHeapProfile
	// Process is what is measured; default ProcSelf.
	Process Process
}

// SelfCost measures what stormbench itself costs during a storm: its CPU,
// and its RSS sampled on the injected clock against the RSS at the storm's
// start, so the fleet's provisioning caches do not count. Its figures go
// into the MeasurementStorm measurement, beside the Simulator's.
//
// The storm window ends at MarkStormEnd (full recovery), so the gathering
// of the other measurements is not counted.
type SelfCost struct {
	opts SelfCostOptions
	env  *Env

	mu       sync.Mutex
	start    time.Time
	end      time.Time
	rssStart int64
	rssPeak  int64
	cpuStart time.Duration
	cpu      time.Duration
	stop     chan struct{}
	sampled  chan struct{}
}

var (
	_ Measurement    = (*SelfCost)(nil)
	_ StormEndMarker = (*SelfCost)(nil)
)

// NewSelfCost returns the self-cost measurement.
func NewSelfCost(o SelfCostOptions) *SelfCost {
	if o.Interval <= 0 {
		o.Interval = 500 * time.Millisecond
	}
	if o.Process == nil {
		o.Process = ProcSelf{}
	}
	return &SelfCost{opts: o}
}

// Name implements Measurement.
func (m *SelfCost) Name() string { return MeasurementStorm }

// Start implements Measurement; nothing is measured before the storm.
func (m *SelfCost) Start(_ context.Context, env *Env) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.env = env
	return nil
}

// MarkStormStart implements Measurement: freed memory goes back to the OS
// first, so a variant does not start from an earlier variant's peak (its
// growth would be understated), then the RSS sampler starts.
func (m *SelfCost) MarkStormStart(t time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.start.IsZero() || m.env == nil {
		return
	}
	p := m.opts.Process
	p.FreeOSMemory()
	m.start = t
	m.rssStart = p.RSS()
	m.rssPeak = m.rssStart
	m.cpuStart = p.CPU()
	m.stop, m.sampled = make(chan struct{}), make(chan struct{})
	go m.sample(m.env.Clock)
}

// sample samples RSS every interval on clk until the storm ends; a new peak
// may write a heap profile.
func (m *SelfCost) sample(clk clock.Clock) {
	defer close(m.sampled)
	for {
		select {
		case <-m.stop:
			return
		case <-clk.After(m.opts.Interval):
			r := m.opts.Process.RSS()
			m.mu.Lock()
			peak := r > m.rssPeak
			if peak {
				m.rssPeak = r
			}
			m.mu.Unlock()
			if peak {
				m.opts.HeapProfile.observe(r)
			}
		}
	}
}

// MarkStormEnd implements StormEndMarker: the CPU accounting and the RSS
// sampler stop.
func (m *SelfCost) MarkStormEnd(_ context.Context, t time.Time) {
	m.mu.Lock()
	if m.start.IsZero() || !m.end.IsZero() {
		m.mu.Unlock()
		return
	}
	m.end = t
	m.cpu = m.opts.Process.CPU() - m.cpuStart
	close(m.stop)
	sampled := m.sampled
	m.mu.Unlock()
	<-sampled
}

// Gather implements Measurement. It returns ErrNoStorm when the storm did
// not start. A storm that did not reach its end is measured up to now.
func (m *SelfCost) Gather(context.Context) (result.Measurement, error) {
	m.mu.Lock()
	started := !m.start.IsZero()
	m.mu.Unlock()
	if !started {
		return result.Measurement{Name: m.Name()}, ErrNoStorm
	}
	m.MarkStormEnd(context.Background(), m.env.Clock.Now())
	m.mu.Lock()
	defer m.mu.Unlock()
	out := result.Measurement{Name: m.Name(), Windows: []result.Window{{Name: result.WindowStorm, Start: m.start, End: m.end}}}
	add := func(name, unit string, v float64) {
		out.Values = append(out.Values, result.Value{Name: name, Window: result.WindowStorm, Unit: unit, Value: v})
	}
	add(StormCPUSeconds, result.UnitSeconds, m.cpu.Seconds())
	add(StormPeakRSS, result.UnitBytes, float64(m.opts.Process.PeakRSS()))
	add(StormRSSStart, result.UnitBytes, float64(m.rssStart))
	add(StormRSSPeak, result.UnitBytes, float64(m.rssPeak))
	if n := storm.Restarts(m.env.outcomes()); n > 0 {
		add(StormRSSGrowthPerRestart, result.UnitBytes, float64(m.rssPeak-m.rssStart)/float64(n))
	}
	out.Sort()
	return out, nil
}

// Dispose implements Measurement: the sampler stops.
func (m *SelfCost) Dispose() {
	m.mu.Lock()
	running := !m.start.IsZero() && m.end.IsZero()
	m.mu.Unlock()
	if running {
		m.MarkStormEnd(context.Background(), m.env.Clock.Now())
	}
}

// ProcSelf is the running process, read from /proc/self and getrusage.
type ProcSelf struct{}

// RSS implements Process from /proc/self/stat (procfs).
func (ProcSelf) RSS() int64 {
	p, err := procfs.Self()
	if err != nil {
		return 0
	}
	st, err := p.Stat()
	if err != nil {
		return 0
	}
	return int64(st.ResidentMemory())
}

// PeakRSS implements Process from VmHWM in /proc/self/status.
func (ProcSelf) PeakRSS() int64 { return PeakRSS() }

// CPU implements Process with getrusage(RUSAGE_SELF).
func (ProcSelf) CPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// FreeOSMemory implements Process with debug.FreeOSMemory.
func (ProcSelf) FreeOSMemory() { debug.FreeOSMemory() }

// PeakRSS is this process's peak resident set size (VmHWM of
// /proc/self/status, through procfs), in bytes.
func PeakRSS() int64 {
	p, err := procfs.Self()
	if err != nil {
		return 0
	}
	st, err := p.NewStatus()
	if err != nil {
		return 0
	}
	return int64(st.VmHWM)
}
