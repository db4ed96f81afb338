package self

import (
	"context"
	"fmt"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/prometheus/procfs"
	"k8s.io/utils/clock"

	"github.com/stormbench/stormbench/bench/measure"
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
// into the Name measurement, beside the Simulator's.
//
// The storm window ends at MarkStormEnd (full recovery), so the gathering
// of the other measurements is not counted.
//
// Its CPU is also read over a baseline window, from MarkBaselineStart
// (every measurement of the set observing) to the storm's start, to split
// the storm's CPU into a standing cost and a marginal cost per restart
// (selfCostSplit says what the control holds and where it falls short).
type SelfCost struct {
	part
	opts SelfCostOptions

	baseStart time.Time
	baseCPU0  time.Duration
	baseCPU   time.Duration
	start     time.Time
	end       time.Time
	rssStart  int64
	rssPeak   int64
	cpuStart  time.Duration
	cpu       time.Duration
	stop      chan struct{}
	sampled   chan struct{}
}

var (
	_ measure.Measurement         = (*SelfCost)(nil)
	_ measure.StormEndMarker      = (*SelfCost)(nil)
	_ measure.BaselineStartMarker = (*SelfCost)(nil)
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

// MarkBaselineStart implements BaselineStartMarker: the CPU so far, from
// which the baseline window's is counted.
func (m *SelfCost) MarkBaselineStart(t time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.baseStart.IsZero() || !m.start.IsZero() || m.env == nil {
		return
	}
	m.baseStart, m.baseCPU0 = t, m.opts.Process.CPU()
}

// MarkStormStart implements Measurement: the baseline window's CPU is read
// first, then freed memory goes back to the OS, so a variant does not start
// from an earlier variant's peak (its growth would be understated), and the
// RSS sampler starts. The collection FreeOSMemory forces falls between the
// two CPU readings, in neither window.
func (m *SelfCost) MarkStormStart(t time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.start.IsZero() || m.env == nil {
		return
	}
	p := m.opts.Process
	if !m.baseStart.IsZero() {
		m.baseCPU = p.CPU() - m.baseCPU0
	}
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
		return result.Measurement{Name: m.Name()}, measure.ErrNoStorm
	}
	m.MarkStormEnd(context.Background(), m.env.Clock.Now())
	m.mu.Lock()
	defer m.mu.Unlock()
	out := result.Measurement{Name: m.Name(), Windows: []result.Window{{Name: result.WindowStorm, Start: m.start, End: m.end}}}
	add := func(name, unit string, v float64) {
		out.Values = append(out.Values, result.Value{Name: name, Window: result.WindowStorm, Unit: unit, Value: v})
	}
	n := storm.Restarts(m.env.Outcomes.All())
	add(CPUSeconds, result.UnitSeconds, m.cpu.Seconds())
	add(PeakRSS, result.UnitBytes, float64(m.opts.Process.PeakRSS()))
	add(RSSStart, result.UnitBytes, float64(m.rssStart))
	add(RSSPeak, result.UnitBytes, float64(m.rssPeak))
	if n > 0 {
		add(RSSGrowthPerRestart, result.UnitBytes, float64(m.rssPeak-m.rssStart)/float64(n))
	}
	if m.baseStart.IsZero() {
		out.Warnings = append(out.Warnings, "stormbench's CPU is not split into its standing and marginal costs: the storm started without a baseline window")
	} else {
		out.Windows = append(out.Windows, result.Window{Name: result.WindowBaseline, Start: m.baseStart, End: m.start})
		values, warnings := selfCostSplit(cpuSpan{m.baseCPU, m.start.Sub(m.baseStart)}, cpuSpan{m.cpu, m.end.Sub(m.start)}, m.env.Nodes, n)
		out.Values = append(out.Values, values...)
		out.Warnings = append(out.Warnings, warnings...)
	}
	out.Sort()
	return out, nil
}

// cpuSpan is stormbench's CPU over one window of the run's clock.
type cpuSpan struct {
	cpu, length time.Duration
}

const (
	// minStandingWindow is the shortest baseline window a standing cost is
	// taken from. A profile without an apiserver baseline starts the storm
	// as soon as the measurements have started (Set.BaselineWait is 0):
	// milliseconds, which hold no steady state at all.
	minStandingWindow = time.Second
	// coarseStandingWindow is the baseline window under which the standing
	// cost comes with a warning. A steady fleet's work comes in periods of
	// seconds to tens of seconds: the scrapes and the host sampler every
	// second, KWOK's lease renewals in bursts (a kubelet renews its lease
	// every quarter of its duration, 10 s for the default 40 s:
	// nodeLeaseRenewIntervalFraction, pkg/kubelet/kubelet.go), node status
	// updates, and Go's garbage collections, as often as the heap doubles.
	// A window shorter than a few of those periods catches them by luck;
	// the 60 s baselines of the quick and aa profiles hold six renewal
	// periods, the 10 s of the fleet profiles one.
	coarseStandingWindow = 30 * time.Second
)

// selfCostSplit splits stormbench's CPU in the storm window into the
// standing cost of watching a steady fleet and the marginal cost of the
// storm, with the baseline window as the control:
//
//   - the baseline runs from the moment every measurement observes (its
//     informers synced and first scrapes taken: Set.Start, so none of the
//     start-up is in it) to the storm's start; the fleet is Ready and no
//     kubelet restarts. It holds what stormbench does whatever the fleet
//     does: the measurements' informers decoding every update of the
//     fleet's pods, nodes, leases and EndpointSlices, the steady watches,
//     the scrapes, the host sampler, the collections of the heap they hold;
//   - the standing rate is the baseline's CPU ÷ its length (cores), and
//     StandingCPU that per 1,000 of the fleet's nodes;
//   - MarginalCPU is the storm window's CPU less the standing rate
//     over the storm window's length, and MarginalCPUPerRestart that ÷
//     restarts.
//
// The control's limits: whatever stormbench starts only for the storm is
// marginal, even when it grows with the fleet rather than with the
// restarts: the recovery wait (fleet.WaitReady) lists every node and pod
// and recounts the fleet's readiness every second until it is Ready, so a
// longer storm or a bigger fleet adds to the marginal figure with the
// same restarts. The baseline is as long as the profile's apiserver
// baseline (plus one scrape interval); under coarseStandingWindow the
// figures come with a warning, under minStandingWindow there are none.
// Old results have none of these figures, and readers show them missing.
func selfCostSplit(baseline, stormW cpuSpan, nodes, restarts int) ([]result.Value, []string) {
	if baseline.length < minStandingWindow {
		return nil, []string{fmt.Sprintf("stormbench's CPU is not split into its standing and marginal costs: its baseline window was %s, under %s (set measurements.apiserver.baseline)",
			baseline.length, minStandingWindow)}
	}
	var out []result.Value
	add := func(name, window, unit string, v float64) {
		out = append(out, result.Value{Name: name, Window: window, Unit: unit, Value: v})
	}
	rate := baseline.cpu.Seconds() / baseline.length.Seconds()
	add(CPUSeconds, result.WindowBaseline, result.UnitSeconds, baseline.cpu.Seconds())
	if nodes > 0 {
		add(StandingCPU, result.WindowBaseline, result.UnitCores, rate/(float64(nodes)/1000))
	}
	marginal := stormW.cpu.Seconds() - rate*stormW.length.Seconds()
	add(MarginalCPU, result.WindowStorm, result.UnitSeconds, marginal)
	if restarts > 0 {
		add(MarginalCPUPerRestart, result.WindowStorm, result.UnitSeconds, marginal/float64(restarts))
	}
	var warnings []string
	if baseline.length < coarseStandingWindow {
		warnings = append(warnings, fmt.Sprintf("stormbench's standing cost is taken over a %s baseline window, under %s: a coarse figure, and so is the marginal cost per restart (a baseline of 60 s holds whole periods of the fleet's lease renewals)",
			baseline.length.Round(100*time.Millisecond), coarseStandingWindow))
	}
	return out, warnings
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

// PeakRSS implements Process: this process's peak resident set size
// (VmHWM of /proc/self/status, through procfs), in bytes.
func (ProcSelf) PeakRSS() int64 {
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
