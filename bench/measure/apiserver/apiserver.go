package apiserver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"k8s.io/utils/clock"

	"github.com/stormbench/stormbench/bench/measure"
	"github.com/stormbench/stormbench/bench/measure/internal/track"
	"github.com/stormbench/stormbench/bench/result"
	"github.com/stormbench/stormbench/bench/storm"
)

// Options configure the /metrics scraper.
type Options struct {
	// Interval is the scrape interval; default 1s.
	Interval time.Duration
	// Baseline is the length of the baseline window before the storm;
	// default 10s.
	Baseline time.Duration
	// Timeout bounds one scrape; default 10s.
	Timeout time.Duration
	// MaxInFlight bounds the scrapes of one source running at once; default
	// DefaultMaxScrapesInFlight. Each slot of the cadence starts its scrape
	// at its tick, whether or not the earlier ones have returned; a slot
	// that finds MaxInFlight scrapes running is skipped (scrapes_skipped).
	MaxInFlight int
}

// DefaultMaxScrapesInFlight is the default Options.MaxInFlight.
// Under a 1,000-node storm a kube-apiserver scrape took about 3 s: at a 1 s
// interval three scrapes are in flight at once, and a fourth leaves room
// for one slower than that. More would only pile load on a server that
// already answers slowly.
const DefaultMaxScrapesInFlight = 4

// Metrics scrapes the control plane's /metrics (env.Scrapers) every
// interval and reports per-window deltas and 1 s time series; see METRICS.md.
//
// It is three parts: one scraper per source schedules and fetches the
// scrapes and records their coverage; the apiAccumulator turns the samples
// into the figures (see it for gaps, resets and windows); its apiSeries
// builds the time series. Gather takes a final scrape of every source, so
// the storm window ends then.
type Metrics struct {
	opts Options

	env *measure.Env
	clk clock.Clock
	// stopLoops ends the scrape loops' cadence; they then wait for their
	// scrapes in flight. abort cancels those scrapes too.
	stopLoops, abort context.CancelFunc
	wg               sync.WaitGroup

	mu       sync.Mutex
	start    time.Time
	comps    []*scraper
	acc      *apiAccumulator
	warnings caveats
}

var _ measure.Measurement = (*Metrics)(nil)

// New validates opts and returns the measurement.
func New(opts Options) (*Metrics, error) {
	var errs []error
	for _, d := range []struct {
		name  string
		v     *time.Duration
		deflt time.Duration
	}{{"interval", &opts.Interval, time.Second}, {"baseline", &opts.Baseline, 10 * time.Second}, {"timeout", &opts.Timeout, 10 * time.Second}} {
		if *d.v == 0 {
			*d.v = d.deflt
		}
		if *d.v < 0 {
			errs = append(errs, fmt.Errorf("%s %v must be positive", d.name, *d.v))
		}
	}
	if opts.MaxInFlight == 0 {
		opts.MaxInFlight = DefaultMaxScrapesInFlight
	}
	if opts.MaxInFlight < 0 {
		errs = append(errs, fmt.Errorf("maxInFlight %d must be positive", opts.MaxInFlight))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	m := &Metrics{opts: opts}
	m.acc = newAPIAccumulator(time.Time{}, opts.Baseline, opts.Interval, &m.warnings)
	return m, nil
}

// Name implements Measurement.
func (m *Metrics) Name() string { return Name }

// BaselineWait is the time to wait after Start for a full baseline window:
// the baseline plus one interval, since the first scrape only sets the base.
func (m *Metrics) BaselineWait() time.Duration { return m.opts.Baseline + m.opts.Interval }

// Start scrapes every source once (that scrape is the base of the first
// interval) and starts one scrape loop per source. It fails only if every
// source failed its first scrape.
func (m *Metrics) Start(ctx context.Context, env *measure.Env) error {
	if err := m.setup(env); err != nil {
		return err
	}
	var errs []error
	for _, c := range m.comps {
		c.schedule(1, false) // the first scrape is a slot too
		if err := m.fold(c, c.scrape(ctx)); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == len(m.comps) {
		return errors.Join(errs...)
	}
	abortCtx, abort := context.WithCancel(context.WithoutCancel(ctx))
	loopCtx, stopLoops := context.WithCancel(abortCtx)
	m.stopLoops, m.abort = stopLoops, abort
	for _, c := range m.comps {
		m.wg.Go(func() {
			// A failure is recorded as a gap and a warning; keep scraping.
			c.run(loopCtx, abortCtx, func(r scrapeResult) { _ = m.fold(c, r) })
		})
	}
	return nil
}

// setup prepares one scraper per source and the accumulator; Start and
// tests call it.
func (m *Metrics) setup(env *measure.Env) error {
	if len(env.Scrapers) == 0 {
		return errors.New("no /metrics sources configured (env.Scrapers is empty)")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.env, m.clk = env, env.Clock
	m.start = m.clk.Now()
	m.acc = newAPIAccumulator(m.start, m.opts.Baseline, m.opts.Interval, &m.warnings)
	for _, src := range env.Scrapers {
		m.comps = append(m.comps, newScraper(src, m.clk, m.opts.Interval, m.opts.Timeout, m.opts.MaxInFlight))
	}
	return nil
}

// fold hands a successful scrape of c to the accumulator, and records a
// failed one as a warning.
func (m *Metrics) fold(c *scraper, r scrapeResult) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r.err != nil {
		m.warnings.addf("scrape of %s at %s failed (gap until the next successful scrape): %v", c.src.Component, r.at.UTC().Format(time.RFC3339), r.err)
		return fmt.Errorf("scraping %s: %w", c.src.Component, r.err)
	}
	m.acc.Add(c.src.Component, r.sample)
	return nil
}

// MarkStormStart implements Measurement.
func (m *Metrics) MarkStormStart(t time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.acc.MarkStormStart(t)
}

// Gather stops the scrape loops, waits for their scrapes in flight (at
// most the scrape timeout), takes a final scrape of every source so that
// the storm window ends now, and computes the figures.
func (m *Metrics) Gather(ctx context.Context) (result.Measurement, error) {
	if m.abort != nil {
		// An interrupted Gather does not wait for the scrapes in flight.
		defer context.AfterFunc(ctx, m.abort)()
	}
	m.stop(false)
	var errs []error
	for _, c := range m.comps {
		c.schedule(1, false) // and so is the final one
		if err := m.fold(c, c.scrape(ctx)); err != nil {
			errs = append(errs, fmt.Errorf("final scrape: %w", err))
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	stormMarked := !m.acc.stormStart.IsZero()
	out := m.figures()
	if !stormMarked {
		errs = append(errs, errors.New("the storm start was never marked: no baseline or storm window"))
	}
	return out, errors.Join(errs...)
}

// figures builds the result: the scrape coverage of every source, the
// warnings, then the accumulator's figures. Callers hold m.mu.
func (m *Metrics) figures() result.Measurement {
	var coverage []result.Value
	for _, c := range m.comps {
		coverage = append(coverage, c.figures()...)
	}
	warnings := m.warnings.close()
	n := 0
	if m.env != nil {
		n = storm.Restarts(m.env.Outcomes.All())
	}
	out := m.acc.Close(n)
	out.Name = m.Name()
	out.Values = slices.Concat(coverage, out.Values)
	out.Warnings = slices.Concat(warnings, out.Warnings)
	return out
}

// stop ends the scrape loops and waits for them. They hand over their
// scrapes in flight first, which abort cancels.
func (m *Metrics) stop(abort bool) {
	if m.stopLoops != nil {
		m.stopLoops()
	}
	if abort && m.abort != nil {
		m.abort()
	}
	m.wg.Wait()
	if m.abort != nil {
		m.abort()
	}
}

// Dispose implements Measurement: it cancels the scrapes in flight.
func (m *Metrics) Dispose() { m.stop(true) }

// caveats is a bounded list of warnings: the first maxWarnings are kept,
// and the rest counted.
type caveats struct {
	list    []string
	dropped int
}

func (c *caveats) addf(format string, args ...any) {
	if len(c.list) >= track.MaxWarnings {
		c.dropped++
		return
	}
	c.list = append(c.list, fmt.Sprintf(format, args...))
}

// close returns the warnings, with a last one counting those dropped.
func (c *caveats) close() []string {
	if c.dropped > 0 {
		c.list = append(c.list, fmt.Sprintf("%d more warnings dropped", c.dropped))
		c.dropped = 0
	}
	return c.list
}
