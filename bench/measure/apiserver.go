package measure

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"k8s.io/utils/clock"

	"github.com/stormbench/stormbench/bench/result"
	"github.com/stormbench/stormbench/bench/storm"
)

// APIServerOptions configure the /metrics scraper.
type APIServerOptions struct {
	// Interval is the scrape interval; default 1s.
	Interval time.Duration
	// Baseline is the length of the baseline window before the storm;
	// default 10s.
	Baseline time.Duration
	// Timeout bounds one scrape; default 10s. A scrape still running at the
	// next tick delays that tick rather than overlapping it.
	Timeout time.Duration
}

// maxWarnings bounds the scrape-failure warnings kept per measurement; the
// failures are all counted in APIScrapeFailures.
const maxWarnings = 20

// APIServerMetrics scrapes the control plane's /metrics (env.Scrapers) every
// interval and reports per-window deltas and 1 s time series; see METRICS.md.
//
// Each scrape is reduced to the families it needs and diffed against the
// component's previous successful scrape. A failed scrape is a gap: the next
// successful one yields one longer interval, so no increment is lost and
// rates use the real elapsed time. A counter that decreases is a reset (the
// component restarted) and counts from zero, as PromQL's increase() does.
//
// Intervals are assigned to a window by the time of their closing scrape:
// baseline if it falls in (stormStart − Baseline, stormStart], storm if it
// falls after stormStart, up to the final scrape taken by Gather. Window
// edges are therefore quantized to the scrape interval.
type APIServerMetrics struct {
	opts APIServerOptions

	env    *Env
	clk    clock.Clock
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu         sync.Mutex
	start      time.Time
	stormStart time.Time
	comps      []*componentState
	pending    []*interval
	baseline   *windowAcc
	storm      *windowAcc
	points     []point
	warnings   []string
	dropped    int
	gathered   bool
}

var _ Measurement = (*APIServerMetrics)(nil)

// componentState is one scrape source's state. parser is used by one
// goroutine at a time: the source's loop, then Gather's final scrape.
type componentState struct {
	src      MetricsSource
	parser   *metricsParser
	last     *sample
	scrapes  int
	failures int
	resets   int
	// scheduled counts the scrape slots of the loop, including the ones a
	// scrape overrunning its slot made it skip; maxGap is the longest time
	// between two successful scrapes (the coverage of the figures).
	scheduled int
	lastOK    time.Time
	maxGap    time.Duration
}

// interval is the change of one component between two successful scrapes.
type interval struct {
	component string
	from, to  time.Time
	counters  map[seriesKey]float64
	hists     map[seriesKey]*bucketSample
	gauges    map[seriesKey]float64 // at `to`
}

// NewAPIServerMetrics validates opts and returns the measurement.
func NewAPIServerMetrics(opts APIServerOptions) (*APIServerMetrics, error) {
	if opts.Interval == 0 {
		opts.Interval = time.Second
	}
	if opts.Baseline == 0 {
		opts.Baseline = 10 * time.Second
	}
	if opts.Timeout == 0 {
		opts.Timeout = 10 * time.Second
	}
	var errs []error
	if opts.Interval < 0 {
		errs = append(errs, fmt.Errorf("interval %v must be positive", opts.Interval))
	}
	if opts.Baseline < 0 {
		errs = append(errs, fmt.Errorf("baseline %v must be positive", opts.Baseline))
	}
	if opts.Timeout < 0 {
		errs = append(errs, fmt.Errorf("timeout %v must be positive", opts.Timeout))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &APIServerMetrics{opts: opts, baseline: newWindowAcc(), storm: newWindowAcc()}, nil
}

// Name implements Measurement.
func (m *APIServerMetrics) Name() string { return result.MeasurementAPIServer }

// BaselineWait is the time to wait after Start for a full baseline window:
// the baseline plus one interval, since the first scrape only sets the base.
func (m *APIServerMetrics) BaselineWait() time.Duration { return m.opts.Baseline + m.opts.Interval }

// Start scrapes every source once (that scrape is the base of the first
// interval) and starts one scrape loop per source. It fails only if every
// source failed its first scrape.
func (m *APIServerMetrics) Start(ctx context.Context, env *Env) error {
	if err := m.setup(env); err != nil {
		return err
	}
	var errs []error
	for _, c := range m.comps {
		m.schedule(c, 1) // the first scrape is a slot too
		if err := m.scrape(ctx, c); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == len(m.comps) {
		return errors.Join(errs...)
	}
	loopCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	m.cancel = cancel
	for _, c := range m.comps {
		m.wg.Go(func() { m.loop(loopCtx, c) })
	}
	return nil
}

// setup prepares one componentState per source; Start and tests call it.
func (m *APIServerMetrics) setup(env *Env) error {
	if len(env.Scrapers) == 0 {
		return errors.New("no /metrics sources configured (env.Scrapers is empty)")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.env, m.clk = env, env.Clock
	m.start = m.clk.Now()
	for _, src := range env.Scrapers {
		m.comps = append(m.comps, &componentState{src: src, parser: newMetricsParser()})
	}
	return nil
}

// loop scrapes c every interval on a fixed cadence until ctx ends. A scrape
// that overruns its slot skips the missed ticks rather than bunching up.
func (m *APIServerMetrics) loop(ctx context.Context, c *componentState) {
	next := m.clk.Now()
	for {
		next = next.Add(m.opts.Interval)
		wait := next.Sub(m.clk.Now())
		slots := 1
		if wait < 0 {
			missed := (-wait + m.opts.Interval - 1) / m.opts.Interval
			next = next.Add(missed * m.opts.Interval)
			wait = next.Sub(m.clk.Now())
			slots += int(missed)
		}
		m.schedule(c, slots)
		t := m.clk.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C():
		}
		// A failure is recorded as a gap and a warning; keep scraping.
		_ = m.scrape(ctx, c)
	}
}

// schedule counts n scrape slots of c.
func (m *APIServerMetrics) schedule(c *componentState, n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c.scheduled += n
}

// scrape fetches and parses one scrape of c and folds it into the windows.
func (m *APIServerMetrics) scrape(ctx context.Context, c *componentState) error {
	at := m.clk.Now()
	fctx, cancel := context.WithTimeout(ctx, m.opts.Timeout)
	data, err := c.src.Fetch(fctx)
	cancel()
	var s *sample
	if err == nil {
		s, err = c.parser.parse(data, at)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	c.scrapes++
	if err != nil {
		c.failures++
		m.warnf("scrape of %s at %s failed (gap until the next successful scrape): %v", c.src.Component, at.UTC().Format(time.RFC3339), err)
		return fmt.Errorf("scraping %s: %w", c.src.Component, err)
	}
	if s.skipped > 0 {
		m.warnf("scrape of %s at %s: %d histogram series with an unexpected bucket layout ignored", c.src.Component, at.UTC().Format(time.RFC3339), s.skipped)
	}
	if !c.lastOK.IsZero() {
		c.maxGap = max(c.maxGap, at.Sub(c.lastOK))
	}
	c.lastOK = at
	if prev := c.last; prev != nil {
		counters, hists, reset := delta(prev, s)
		if reset {
			c.resets++
			m.warnf("counter reset in %s between %s and %s (component restarted?); increments after the reset counted from zero",
				c.src.Component, prev.at.UTC().Format(time.RFC3339), at.UTC().Format(time.RFC3339))
		}
		iv := &interval{component: c.src.Component, from: prev.at, to: at, counters: counters, hists: hists, gauges: s.gauges}
		m.points = append(m.points, newPoint(iv, s))
		m.addInterval(iv)
	}
	c.last = s
	return nil
}

func (m *APIServerMetrics) warnf(format string, args ...any) {
	if len(m.warnings) >= maxWarnings {
		m.dropped++
		return
	}
	m.warnings = append(m.warnings, fmt.Sprintf(format, args...))
}

// addInterval assigns iv to a window, or keeps it pending until the storm
// start is known. Pending intervals older than the baseline are dropped.
func (m *APIServerMetrics) addInterval(iv *interval) {
	if m.gathered {
		return
	}
	if m.stormStart.IsZero() {
		m.pending = append(m.pending, iv)
		cutoff := iv.to.Add(-m.opts.Baseline - m.opts.Interval)
		i := 0
		for i < len(m.pending) && m.pending[i].to.Before(cutoff) {
			i++
		}
		m.pending = m.pending[i:]
		return
	}
	switch {
	case iv.to.After(m.stormStart):
		m.storm.add(iv)
	case iv.to.After(m.stormStart.Add(-m.opts.Baseline)):
		m.baseline.add(iv)
	}
}

// MarkStormStart implements Measurement.
func (m *APIServerMetrics) MarkStormStart(t time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.stormStart.IsZero() {
		return
	}
	m.stormStart = t
	for _, iv := range m.pending {
		m.addInterval(iv)
	}
	m.pending = nil
}

// Gather stops the scrape loops, takes a final scrape of every source so
// that the storm window ends now, and computes the figures.
func (m *APIServerMetrics) Gather(ctx context.Context) (result.Measurement, error) {
	m.stop()
	var errs []error
	for _, c := range m.comps {
		m.schedule(c, 1) // and so is the final one
		if err := m.scrape(ctx, c); err != nil {
			errs = append(errs, fmt.Errorf("final scrape: %w", err))
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.gathered = true
	out := m.figures()
	if m.stormStart.IsZero() {
		errs = append(errs, errors.New("the storm start was never marked: no baseline or storm window"))
	}
	return out, errors.Join(errs...)
}

func (m *APIServerMetrics) stop() {
	if m.cancel != nil {
		m.cancel()
	}
	m.wg.Wait()
}

// Dispose implements Measurement.
func (m *APIServerMetrics) Dispose() { m.stop() }

// windowAcc accumulates the intervals of one window.
type windowAcc struct {
	from, to  time.Time
	counters  map[seriesKey]float64
	hists     map[seriesKey]*bucketSample
	gaugeMax  map[seriesKey]float64
	rates     []float64 // per-interval total request rate, of request-bearing intervals
	rateDur   []float64 // and their lengths in seconds
	intervals int
	layoutErr int
}

func newWindowAcc() *windowAcc {
	return &windowAcc{counters: map[seriesKey]float64{}, hists: map[seriesKey]*bucketSample{}, gaugeMax: map[seriesKey]float64{}}
}

// compKey tags per-component families with their component, so that CPU and
// RSS stay per component while request counters sum across API servers.
func compKey(k seriesKey, comp string) seriesKey {
	switch k.fam {
	case famCPU, famRSS:
		k.d = comp
	}
	return k
}

func (w *windowAcc) add(iv *interval) {
	if w.intervals == 0 || iv.from.Before(w.from) {
		w.from = iv.from
	}
	if iv.to.After(w.to) {
		w.to = iv.to
	}
	w.intervals++
	requests, hasRequests := 0.0, false
	for k, v := range iv.counters {
		w.counters[compKey(k, iv.component)] += v
		if k.fam == famRequests {
			requests += v
			hasRequests = true
		}
	}
	if dt := iv.to.Sub(iv.from).Seconds(); hasRequests && dt > 0 {
		w.rates = append(w.rates, requests/dt)
		w.rateDur = append(w.rateDur, dt)
	}
	for k, h := range iv.hists {
		if acc, ok := w.hists[k]; ok {
			if err := acc.add(h); err != nil {
				w.layoutErr++
			}
			continue
		}
		w.hists[k] = h.clone()
	}
	for k, v := range iv.gauges {
		k = compKey(k, iv.component)
		if cur, ok := w.gaugeMax[k]; !ok || v > cur {
			w.gaugeMax[k] = v
		}
	}
}

func (w *windowAcc) seconds() float64 { return w.to.Sub(w.from).Seconds() }

// point is the compact per-interval record behind the time series.
type point struct {
	component  string
	to         time.Time
	hasReq     bool
	requests   float64 // per second
	throttled  float64 // per second
	byResource map[string]float64
	p99        map[string]float64 // by verb class, for classes with samples
	inflight   map[string]float64
	watchers   float64
	hasWatch   bool
	inqueue    float64
	hasInqueue bool
	cpu        float64 // cores
	hasCPU     bool
	rss        float64
	hasRSS     bool
}

func newPoint(iv *interval, s *sample) point {
	p := point{component: iv.component, to: iv.to}
	dt := iv.to.Sub(iv.from).Seconds()
	if dt <= 0 {
		return p
	}
	for k, v := range iv.counters {
		switch k.fam {
		case famRequests:
			p.hasReq = true
			p.requests += v / dt
			if k.d == "429" {
				p.throttled += v / dt
			}
			if v > 0 {
				if p.byResource == nil {
					p.byResource = map[string]float64{}
				}
				p.byResource[resourceName(k.b, k.c)] += v / dt
			}
		case famCPU:
			p.cpu, p.hasCPU = v/dt, true
		}
	}
	for k, h := range iv.hists {
		if k.fam == famRequestDuration && h.count > 0 {
			if p.p99 == nil {
				p.p99 = map[string]float64{}
			}
			p.p99[k.a] = result.BucketQuantile(0.99, h.bounds, h.cum)
		}
	}
	watchers, longRunning, hasWatchers, hasLR := 0.0, 0.0, false, false
	for k, v := range s.gauges {
		switch k.fam {
		case famInflight:
			if p.inflight == nil {
				p.inflight = map[string]float64{}
			}
			p.inflight[k.a] = v
		case famWatchers:
			watchers, hasWatchers = v, true
		case famLongRunning:
			longRunning, hasLR = v, true
		case famFlowInqueue:
			p.inqueue += v
			p.hasInqueue = true
		case famRSS:
			p.rss, p.hasRSS = v, true
		}
	}
	switch {
	case hasWatchers:
		p.watchers, p.hasWatch = watchers, true
	case hasLR:
		p.watchers, p.hasWatch = longRunning, true
	}
	return p
}

// resourceName joins resource and subresource as "pods/status".
func resourceName(resource, subresource string) string {
	if subresource == "" {
		return resource
	}
	return resource + "/" + subresource
}

// restarts counts the storm's Down events.
func restarts(events []storm.Event) int {
	n := 0
	for _, e := range events {
		if e.Type == storm.EventDown {
			n++
		}
	}
	return n
}

// figures builds the result. Callers hold m.mu.
func (m *APIServerMetrics) figures() result.Measurement {
	out := result.Measurement{Name: m.Name()}
	add := func(name, window, unit string, v float64, labels ...string) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return
		}
		out.Values = append(out.Values, result.Value{Name: name, Window: window, Unit: unit, Value: v, Labels: result.Labels(labels...)})
	}
	for _, c := range m.comps {
		add(result.APIScrapes, "", result.UnitCount, float64(c.scrapes), result.LabelComponent, c.src.Component)
		add(result.APIScrapeFailures, "", result.UnitCount, float64(c.failures), result.LabelComponent, c.src.Component)
		if c.scheduled > 0 {
			add(result.APIScrapesScheduled, "", result.UnitCount, float64(c.scheduled), result.LabelComponent, c.src.Component)
		}
		add(result.APIScrapeMaxGap, "", result.UnitSeconds, c.maxGap.Seconds(), result.LabelComponent, c.src.Component)
	}
	if m.dropped > 0 {
		m.warnings = append(m.warnings, fmt.Sprintf("%d more warnings dropped", m.dropped))
		m.dropped = 0
	}
	out.Warnings = append(out.Warnings, m.warnings...)

	windows := []struct {
		name string
		w    *windowAcc
	}{{result.WindowBaseline, m.baseline}, {result.WindowStorm, m.storm}}
	for _, win := range windows {
		w := win.w
		if w.intervals == 0 {
			out.Warnings = append(out.Warnings, fmt.Sprintf("no scrape interval fell in the %s window", win.name))
			continue
		}
		if w.layoutErr > 0 {
			out.Warnings = append(out.Warnings, fmt.Sprintf("%s window: %d histogram intervals with a changed bucket layout ignored", win.name, w.layoutErr))
		}
		out.Windows = append(out.Windows, result.Window{Name: win.name, Start: w.from, End: w.to})
		m.windowFigures(&out, win.name, w, add)
	}
	if m.baseline.intervals > 0 && m.storm.intervals > 0 {
		m.burstFigures(&out, add)
	}
	out.Series = m.series()
	return out
}

func (m *APIServerMetrics) windowFigures(out *result.Measurement, window string, w *windowAcc, add func(name, window, unit string, v float64, labels ...string)) {
	total, throttled := 0.0, 0.0
	byKey := map[[3]string]float64{}
	byCode := map[string]float64{}
	hasRequests := false
	for k, v := range w.counters {
		switch k.fam {
		case famRequests:
			hasRequests = true
			total += v
			byKey[[3]string{k.a, k.b, k.c}] += v
			byCode[k.d] += v
			if k.d == "429" {
				throttled += v
			}
		case famFlowDispatched:
			add(result.APIFlowDispatched, window, result.UnitRequests, v, result.LabelPriorityLevel, k.a, result.LabelFlowSchema, k.b)
		case famFlowRejected:
			add(result.APIFlowRejected, window, result.UnitRequests, v, result.LabelPriorityLevel, k.a, result.LabelFlowSchema, k.b, result.LabelReason, k.c)
		case famWatchEvents:
			add(result.APIWatchEvents, window, result.UnitEvents, v, result.LabelResource, k.a)
		case famCPU:
			add(result.APICPUSeconds, window, result.UnitSeconds, v, result.LabelComponent, k.d)
		case famSliceChanges:
			add(result.APISliceControllerChanges, window, result.UnitCount, v, result.LabelOperation, k.a)
		}
	}
	if hasRequests {
		add(result.APIRequests, window, result.UnitRequests, total)
		add(result.APIThrottled, window, result.UnitRequests, throttled)
		for k, v := range byKey {
			add(result.APIRequests, window, result.UnitRequests, v, result.LabelVerb, k[0], result.LabelResource, k[1], result.LabelSubresource, k[2])
		}
		for code, v := range byCode {
			add(result.APIRequests, window, result.UnitRequests, v, result.LabelCode, code)
		}
		if secs := w.seconds(); secs > 0 {
			add(result.APIRequestRateMean, window, result.UnitRequestsPerSecond, total/secs)
		}
		_, sd := meanStdDev(w.rates, w.rateDur)
		add(result.APIRequestRateStdDev, window, result.UnitRequestsPerSecond, sd)
		peak := 0.0
		for _, r := range w.rates {
			peak = max(peak, r)
		}
		add(result.APIRequestRatePeak, window, result.UnitRequestsPerSecond, peak)
	}
	watchers, longRunning, hasWatchers, hasLR := 0.0, 0.0, false, false
	for k, v := range w.gaugeMax {
		switch k.fam {
		case famInflight:
			add(result.APIInflightMax, window, result.UnitCount, v, result.LabelRequestKind, k.a)
		case famFlowInqueue:
			add(result.APIFlowInqueueMax, window, result.UnitCount, v, result.LabelPriorityLevel, k.a, result.LabelFlowSchema, k.b)
		case famWatchers:
			watchers, hasWatchers = max(watchers, v), true
		case famLongRunning:
			longRunning, hasLR = max(longRunning, v), true
		case famRSS:
			add(result.APIRSSMax, window, result.UnitBytes, v, result.LabelComponent, k.d)
		}
	}
	switch {
	case hasWatchers:
		add(result.APIWatchersMax, window, result.UnitCount, watchers)
	case hasLR:
		add(result.APIWatchersMax, window, result.UnitCount, longRunning)
	}
	var etcdAll *bucketSample
	for k, h := range w.hists {
		switch k.fam {
		case famRequestDuration:
			out.Histograms = append(out.Histograms, result.FromBuckets(result.APIRequestDuration, window, result.Labels(result.LabelClass, k.a), h.bounds, h.cum, h.sum))
		case famFlowWait:
			// Only flows that queued anything: most never do, and an empty
			// histogram per flow schema and window would bloat the file.
			if h.count > 0 {
				out.Histograms = append(out.Histograms, result.FromBuckets(result.APIFlowWait, window, result.Labels(result.LabelPriorityLevel, k.a, result.LabelFlowSchema, k.b), h.bounds, h.cum, h.sum))
			}
		case famEtcdDuration:
			out.Histograms = append(out.Histograms, result.FromBuckets(result.APIEtcdRequestDuration, window, result.Labels(result.LabelOperation, k.a), h.bounds, h.cum, h.sum))
			if etcdAll == nil {
				etcdAll = h.clone()
			} else if err := etcdAll.add(h); err != nil {
				w.layoutErr++
			}
		}
	}
	if etcdAll != nil {
		out.Histograms = append(out.Histograms, result.FromBuckets(result.APIEtcdRequestDuration, window, nil, etcdAll.bounds, etcdAll.cum, etcdAll.sum))
	}
}

// burstFigures derives the storm-versus-baseline figures; see METRICS.md.
func (m *APIServerMetrics) burstFigures(out *result.Measurement, add func(name, window, unit string, v float64, labels ...string)) {
	b, s := m.baseline, m.storm
	bSecs, sSecs := b.seconds(), s.seconds()
	if bSecs <= 0 || sSecs <= 0 || len(b.rates) == 0 {
		return
	}
	mean, sd := meanStdDev(b.rates, b.rateDur)
	threshold := max(mean+3*sd, 2*mean)
	add(result.APIBurstThreshold, result.WindowStorm, result.UnitRequestsPerSecond, threshold)
	burst := 0.0
	for i, r := range s.rates {
		if r > threshold {
			burst += s.rateDur[i]
		}
	}
	add(result.APIBurstSeconds, result.WindowStorm, result.UnitSeconds, burst)

	scale := sSecs / bSecs
	excessByKey := map[[3]string]float64{}
	excess := 0.0
	for k, v := range s.counters {
		if k.fam == famRequests {
			excessByKey[[3]string{k.a, k.b, k.c}] += v
			excess += v
		}
	}
	for k, v := range b.counters {
		if k.fam == famRequests {
			excessByKey[[3]string{k.a, k.b, k.c}] -= v * scale
			excess -= v * scale
		}
	}
	add(result.APIExcessRequests, result.WindowStorm, result.UnitRequests, excess)
	n := restarts(m.env.events())
	if n == 0 {
		return
	}
	add(result.APIExcessPerRestart, result.WindowStorm, result.UnitRequests, excess/float64(n))
	for k, v := range excessByKey {
		if v > 0 {
			add(result.APIExcessPerRestart, result.WindowStorm, result.UnitRequests, v/float64(n),
				result.LabelVerb, k[0], result.LabelResource, k[1], result.LabelSubresource, k[2])
		}
	}
}

// meanStdDev returns the duration-weighted mean and standard deviation of
// per-interval rates.
func meanStdDev(rates, durs []float64) (mean, sd float64) {
	total := 0.0
	for i, r := range rates {
		mean += r * durs[i]
		total += durs[i]
	}
	if total == 0 {
		return 0, 0
	}
	mean /= total
	for i, r := range rates {
		sd += durs[i] * (r - mean) * (r - mean)
	}
	return mean, math.Sqrt(sd / total)
}

// series builds the time series from the per-interval points, with time
// measured from Start.
func (m *APIServerMetrics) series() []result.Series {
	type key struct{ name, k, v string }
	order := []key{}
	byKey := map[key]*result.Series{}
	push := func(name, unit, labelKey, labelValue string, t time.Time, v float64) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return
		}
		k := key{name, labelKey, labelValue}
		s, ok := byKey[k]
		if !ok {
			s = &result.Series{Name: name, Unit: unit, Start: m.start}
			if labelKey != "" {
				s.Labels = result.Labels(labelKey, labelValue)
			}
			byKey[k] = s
			order = append(order, k)
		}
		s.Points = append(s.Points, result.Point{T: roundMillis(t.Sub(m.start).Seconds()), V: v})
	}
	resources := map[string]bool{}
	for _, p := range m.points {
		for r := range p.byResource {
			resources[r] = true
		}
	}
	for _, p := range m.points {
		if p.hasReq {
			push(result.SeriesRequestRate, result.UnitRequestsPerSecond, "", "", p.to, p.requests)
			push(result.SeriesThrottledRate, result.UnitRequestsPerSecond, "", "", p.to, p.throttled)
			for _, r := range sortedKeys(resources) {
				push(result.SeriesRequestRate, result.UnitRequestsPerSecond, result.LabelResource, r, p.to, p.byResource[r])
			}
		}
		for _, class := range sortedKeys(p.p99) {
			push(result.SeriesRequestP99, result.UnitSeconds, result.LabelClass, class, p.to, p.p99[class])
		}
		for _, kind := range sortedKeys(p.inflight) {
			push(result.SeriesInflight, result.UnitCount, result.LabelRequestKind, kind, p.to, p.inflight[kind])
		}
		if p.hasWatch {
			push(result.SeriesWatchers, result.UnitCount, "", "", p.to, p.watchers)
		}
		if p.hasInqueue {
			push(result.SeriesFlowInqueue, result.UnitCount, "", "", p.to, p.inqueue)
		}
		if p.hasCPU {
			push(result.SeriesCPUCores, result.UnitCores, result.LabelComponent, p.component, p.to, p.cpu)
		}
		if p.hasRSS {
			push(result.SeriesRSS, result.UnitBytes, result.LabelComponent, p.component, p.to, p.rss)
		}
	}
	out := make([]result.Series, 0, len(order))
	for _, k := range order {
		out = append(out, *byKey[k])
	}
	return out
}

func roundMillis(s float64) float64 { return math.Round(s*1000) / 1000 }
