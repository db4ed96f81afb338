package self

import (
	"context"
	"sync"
	"time"

	"github.com/stormbench/stormbench/bench/fleet"
	"github.com/stormbench/stormbench/bench/measure"
	"github.com/stormbench/stormbench/bench/result"
	"github.com/stormbench/stormbench/bench/storm"
)

// part is what Simulator and SelfCost, the two measurements that write
// Name, share: the Env that Start keeps, and the lock over their state.
type part struct {
	mu  sync.Mutex
	env *measure.Env
}

// Name implements Measurement.
func (*part) Name() string { return Name }

// Start implements Measurement; nothing is measured before the baseline
// (SelfCost) or the storm (Simulator).
func (p *part) Start(_ context.Context, env *measure.Env) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.env = env
	return nil
}

// SimulatedFleet is what Simulator reads from the fleet (*fleet.Fleet).
type SimulatedFleet interface {
	// Readiness lists the fleet's nodes and pods.
	Readiness(ctx context.Context) (*fleet.Readiness, error)
	// StaleReadinessFixed is the running count of pods set Ready again.
	StaleReadinessFixed() int64
}

// SimulatorOptions configure NewSimulator.
type SimulatorOptions struct {
	// Counters returns the simulated kubelets' counters by figure name
	// (kubelet.Counters.Snapshot), read at Gather.
	Counters func() map[string]int64
	// Fleet is the fleet the storm restarts.
	Fleet SimulatedFleet
}

// Simulator records what the simulated kubelets did during the storm: their
// counters, the restarts (from the storm's event log, the one count of
// them), and the fleet's pods lost and set Ready by stormbench, read when
// the storm ends. Its figures go into the Name
// measurement, beside SelfCost's.
type Simulator struct {
	part
	opts SimulatorOptions

	start, end  time.Time
	fixedBefore int64
	fleetValues []result.Value
}

var (
	_ measure.Measurement    = (*Simulator)(nil)
	_ measure.StormEndMarker = (*Simulator)(nil)
)

// NewSimulator returns the simulator measurement.
func NewSimulator(o SimulatorOptions) *Simulator { return &Simulator{opts: o} }

// MarkStormStart implements Measurement: the stale-readiness fixes count
// from here.
func (m *Simulator) MarkStormStart(t time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.start.IsZero() {
		return
	}
	m.start = t
	if m.opts.Fleet != nil {
		m.fixedBefore = m.opts.Fleet.StaleReadinessFixed()
	}
}

// MarkStormEnd implements StormEndMarker: the storm window ends at full
// recovery, and the fleet is read then, before the other measurements'
// gathering adds its requests.
func (m *Simulator) MarkStormEnd(ctx context.Context, t time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.markEnd(ctx, t)
}

// markEnd ends the storm window once. Callers hold m.mu.
func (m *Simulator) markEnd(ctx context.Context, t time.Time) {
	if m.start.IsZero() || !m.end.IsZero() {
		return
	}
	m.end = t
	f := m.opts.Fleet
	if f == nil {
		return
	}
	// A failed listing counts no pod lost; the recovery wait reports the
	// fleet's state.
	lost := 0
	if r, err := f.Readiness(ctx); err == nil {
		lost = r.LostPods
	}
	m.fleetValues = []result.Value{
		{Name: PodsLost, Window: result.WindowStorm, Unit: result.UnitCount, Value: float64(lost)},
		{Name: StaleReadinessFixed, Window: result.WindowStorm, Unit: result.UnitCount, Value: float64(f.StaleReadinessFixed() - m.fixedBefore)},
	}
}

// Gather implements Measurement. It returns ErrNoStorm when the storm did
// not start; a storm that did not reach its end ends here.
func (m *Simulator) Gather(ctx context.Context) (result.Measurement, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.start.IsZero() {
		return result.Measurement{Name: m.Name()}, measure.ErrNoStorm
	}
	m.markEnd(ctx, m.env.Clock.Now())
	out := result.Measurement{Name: m.Name(), Windows: []result.Window{{Name: result.WindowStorm, Start: m.start, End: m.end}}}
	add := func(name string, v float64) {
		out.Values = append(out.Values, result.Value{Name: name, Window: result.WindowStorm, Unit: result.UnitCount, Value: v})
	}
	if m.opts.Counters != nil {
		for name, v := range m.opts.Counters() {
			add(name, float64(v))
		}
	}
	add(Restarts, float64(storm.Restarts(m.env.Outcomes.All())))
	out.Values = append(out.Values, m.fleetValues...)
	out.Sort()
	return out, nil
}

// Dispose implements Measurement; there is nothing to stop.
func (m *Simulator) Dispose() {}
