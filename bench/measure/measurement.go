package measure

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"

	"github.com/stormbench/stormbench/bench/result"
	"github.com/stormbench/stormbench/bench/storm"
	"github.com/stormbench/stormbench/profiles"
)

// Env is what a measurement needs from the run. The orchestration builds one
// per variant repetition and passes it to Set.Start.
type Env struct {
	// Client is the harness client (not impersonating a node). Watches of
	// measurements are opened with it.
	Client kubernetes.Interface
	// Namespace is the run namespace holding the workloads, Services and
	// EndpointSlices.
	Namespace string
	// NodeSelector is a label selector matching the run's nodes; empty
	// watches every node.
	NodeSelector string
	// Scrapers are the /metrics endpoints of the control plane; see
	// APIServerSource and HTTPSource.
	Scrapers []MetricsSource
	// Clock timestamps every observation. Production uses clock.RealClock.
	Clock clock.Clock
	// Nodes is the number of nodes in the fleet, used for the EndpointSlice
	// watch fan-out estimate (one kube-proxy watch per node).
	Nodes int
	// Outcomes are the storm's restart outcomes (the typed result of each
	// restart, kept as the restarts end); measurements read the restart
	// times from them at gather time. It may be nil when no storm ran.
	Outcomes *storm.Outcomes
	// Embedded says the control plane is stormbench's embedded cluster, on
	// this machine; false for an existing cluster.
	Embedded bool
}

func (e *Env) validate() error {
	var errs []error
	if e.Client == nil {
		errs = append(errs, errors.New("env.Client is nil"))
	}
	if e.Clock == nil {
		errs = append(errs, errors.New("env.Clock is nil"))
	}
	return errors.Join(errs...)
}

// Measurement is one thing stormbench measures, with the lifecycle of a
// clusterloader2 measurement: Start before the storm (after the fleet is
// Ready), MarkStormStart when the first restart begins, Gather after the
// recovery wait, then Dispose. Implementations are safe for MarkStormStart
// and Gather to be called from a goroutine other than Start's.
type Measurement interface {
	// Name is the registered name (apiserver.Name, ...).
	Name() string
	// Start begins observing: scrapers start, watches open and sync. It
	// returns once the measurement is observing, or with an error.
	Start(ctx context.Context, env *Env) error
	// MarkStormStart records when the storm began; it separates the
	// baseline window from the storm window.
	MarkStormStart(t time.Time)
	// Gather stops the storm window and returns the figures. On error the
	// returned Measurement still holds whatever figures could be computed.
	Gather(ctx context.Context) (result.Measurement, error)
	// Dispose stops every goroutine and watch the measurement started. It is
	// safe to call more than once, and without Start.
	Dispose()
}

// StormEndMarker is implemented by measurements whose storm window ends when
// the storm does (every node and pod recovered) rather than at Gather:
// stormbench's own cost must not count the gathering of the others, nor
// the fleet's state their requests.
type StormEndMarker interface {
	// MarkStormEnd records when the storm ended; ctx bounds what the
	// measurement reads then.
	MarkStormEnd(ctx context.Context, t time.Time)
}

// BaselineStartMarker is implemented by measurements that take a control
// from the fleet at rest: Set.Start calls MarkBaselineStart once every
// measurement of the set has started (its watches synced, its first scrape
// taken), so the window from there to the storm's start holds what keeps
// running while a steady fleet is watched and none of the start-up.
type BaselineStartMarker interface {
	// MarkBaselineStart records when every measurement was observing.
	MarkBaselineStart(t time.Time)
}

// ErrNoStorm is returned by Gather of a measurement that observes only the
// storm when the storm did not start (the run stopped during the baseline);
// Set.Gather leaves such a measurement out of the result.
var ErrNoStorm = errors.New("the storm did not start")

// Constructor builds a measurement from the profile's measurements section,
// or returns nil when the profile leaves it disabled. It validates its
// options and fails before the cluster is touched.
type Constructor func(cfg profiles.Measurements) (Measurement, error)

// Set runs the enabled measurements together. One measurement failing to
// start or gather does not stop the others; its failure is recorded in its
// result.
type Set struct {
	ms []Measurement

	mu        sync.Mutex
	startErrs map[Measurement]error
	started   bool
	disposed  bool
}

// NewSetFrom builds the measurements cfg enables from the given
// constructors, in name order. Every constructor error is reported.
func NewSetFrom(ctors map[string]Constructor, cfg profiles.Measurements) (*Set, error) {
	s := &Set{startErrs: map[Measurement]error{}}
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(ctors)) {
		m, err := ctors[name](cfg)
		if err != nil {
			errs = append(errs, fmt.Errorf("measurement %s: %w", name, err))
			continue
		}
		if m != nil {
			s.ms = append(s.ms, m)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return s, nil
}

// Add adds measurements the orchestration builds itself, from the run
// rather than from the profile (SelfCost, Simulator); they come after the
// profile's, in the order given. Add must be called before Start.
func (s *Set) Add(ms ...Measurement) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ms = append(s.ms, ms...)
}

// Measurements returns the enabled measurements in name order, then the
// added ones.
func (s *Set) Measurements() []Measurement { return slices.Clone(s.ms) }

// Figures builds a result.MergeRule's Figures: each figure named in a
// group aggregates by that group's Aggregation.
func Figures(groups map[result.Aggregation][]string) map[string]result.Aggregation {
	figures := map[string]result.Aggregation{}
	for a, names := range groups {
		for _, name := range names {
			figures[name] = a
		}
	}
	return figures
}

// Get returns the set's first measurement of type T, or T's zero value
// when the set has none: measure.Get[*clientlatency.Recorder](set) is
// the recorder the run installs on the simulated kubelets' rest.Config.
func Get[T Measurement](s *Set) T {
	for _, m := range s.ms {
		if t, ok := m.(T); ok {
			return t
		}
	}
	var zero T
	return zero
}

// BaselineWait is how long the orchestration should wait between Start and
// the storm so that every measurement has a full baseline window.
func (s *Set) BaselineWait() time.Duration {
	var d time.Duration
	for _, m := range s.ms {
		if b, ok := m.(interface{ BaselineWait() time.Duration }); ok {
			d = max(d, b.BaselineWait())
		}
	}
	return d
}

// Start starts every measurement. It returns the joined errors of those
// that failed; the others keep running and are gathered as usual, and the
// failed ones appear in Gather's output with their error.
func (s *Set) Start(ctx context.Context, env *Env) error {
	if err := env.validate(); err != nil {
		return fmt.Errorf("starting measurements: %w", err)
	}
	s.mu.Lock()
	if s.started {
		s.mu.Unlock()
		return errors.New("starting measurements: already started")
	}
	s.started = true
	s.mu.Unlock()

	var wg sync.WaitGroup
	errs := make([]error, len(s.ms))
	for i, m := range s.ms {
		wg.Go(func() {
			if err := m.Start(ctx, env); err != nil {
				errs[i] = fmt.Errorf("starting %s: %w", m.Name(), err)
			}
		})
	}
	wg.Wait()
	now := env.Clock.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, m := range s.ms {
		if errs[i] != nil {
			s.startErrs[m] = errs[i]
		} else if b, ok := m.(BaselineStartMarker); ok {
			b.MarkBaselineStart(now)
		}
	}
	return errors.Join(errs...)
}

// MarkStormStart forwards the storm's start to every measurement.
func (s *Set) MarkStormStart(t time.Time) {
	for _, m := range s.ms {
		m.MarkStormStart(t)
	}
}

// MarkStormEnd forwards the storm's end to the measurements that implement
// StormEndMarker, in the set's order.
func (s *Set) MarkStormEnd(ctx context.Context, t time.Time) {
	for _, m := range s.ms {
		if e, ok := m.(StormEndMarker); ok {
			e.MarkStormEnd(ctx, t)
		}
	}
}

// Gather gathers every measurement that started, sequentially and in the
// set's order, and returns one result per enabled measurement name:
// measurements that share a name (Simulator and SelfCost both write
// "storm") are gathered into one result. A failed start or
// gather is recorded in that result's Error; a measurement that returns
// ErrNoStorm is left out.
func (s *Set) Gather(ctx context.Context) []result.Measurement {
	out := make([]result.Measurement, 0, len(s.ms))
	for _, m := range s.ms {
		s.mu.Lock()
		startErr := s.startErrs[m]
		s.mu.Unlock()
		r := result.Measurement{Name: m.Name()}
		if startErr != nil {
			r.Error = startErr.Error()
		} else {
			var err error
			r, err = m.Gather(ctx)
			if errors.Is(err, ErrNoStorm) {
				continue
			}
			r.Name = m.Name()
			if err != nil {
				r.Error = fmt.Sprintf("gathering %s: %v", m.Name(), err)
			}
		}
		if i := slices.IndexFunc(out, func(o result.Measurement) bool { return o.Name == r.Name }); i >= 0 {
			out[i] = joinResults(out[i], r)
			continue
		}
		r.Sort()
		out = append(out, r)
	}
	return out
}

// joinResults joins the figures of two measurements that share a name.
// Windows of the same name are kept once (the first).
func joinResults(a, b result.Measurement) result.Measurement {
	switch {
	case a.Error == "":
		a.Error = b.Error
	case b.Error != "":
		a.Error += "; " + b.Error
	}
	for _, w := range b.Windows {
		if _, ok := a.Window(w.Name); !ok {
			a.Windows = append(a.Windows, w)
		}
	}
	a.Values = append(a.Values, b.Values...)
	a.Histograms = append(a.Histograms, b.Histograms...)
	a.Series = append(a.Series, b.Series...)
	a.Warnings = append(a.Warnings, b.Warnings...)
	a.Sort()
	return a
}

// Dispose disposes every measurement.
func (s *Set) Dispose() {
	s.mu.Lock()
	if s.disposed {
		s.mu.Unlock()
		return
	}
	s.disposed = true
	s.mu.Unlock()
	for _, m := range s.ms {
		m.Dispose()
	}
}
