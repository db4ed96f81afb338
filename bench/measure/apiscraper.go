package measure

import (
	"context"
	"sync"
	"time"

	"k8s.io/utils/clock"

	"github.com/stormbench/stormbench/bench/result"
)

// scraper fetches and parses one source's /metrics on a fixed cadence and
// records the coverage of its scrapes. It knows nothing of windows or
// figures: each scrape goes to the caller, which hands the sample to the
// accumulator. Its parser is used by one goroutine at a time: the loop, then
// Gather's final scrape.
type scraper struct {
	src      MetricsSource
	parser   *metricsParser
	clk      clock.Clock
	interval time.Duration
	timeout  time.Duration

	mu       sync.Mutex
	coverage scrapeCoverage
}

// scrapeCoverage counts a source's scrapes against its schedule: what
// fraction of the cadence the figures actually cover.
type scrapeCoverage struct {
	// scheduled counts the scrape slots of the cadence, including the ones a
	// scrape overrunning its slot made the loop skip.
	scheduled int
	scrapes   int
	failures  int
	// lastOK is the time of the last successful scrape, and maxGap the
	// longest time between two successful scrapes.
	lastOK time.Time
	maxGap time.Duration
}

// scrapeResult is one scrape: its time, and the parsed sample or the error.
type scrapeResult struct {
	at     time.Time
	sample *sample
	err    error
}

func newScraper(src MetricsSource, clk clock.Clock, interval, timeout time.Duration) *scraper {
	return &scraper{src: src, parser: newMetricsParser(), clk: clk, interval: interval, timeout: timeout}
}

// run scrapes every interval on a fixed cadence until ctx ends, and hands
// each scrape to handle. Every scrape has its own timeout, so a scrape that
// hung or failed does not hold up the next slot; one that overruns its slot
// makes the loop skip the missed slots (counted as scheduled) rather than
// bunch up.
func (sc *scraper) run(ctx context.Context, handle func(scrapeResult)) {
	next := sc.clk.Now()
	for {
		next = next.Add(sc.interval)
		wait := next.Sub(sc.clk.Now())
		slots := 1
		if wait < 0 {
			missed := (-wait + sc.interval - 1) / sc.interval
			next = next.Add(missed * sc.interval)
			wait = next.Sub(sc.clk.Now())
			slots += int(missed)
		}
		sc.schedule(slots)
		t := sc.clk.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C():
		}
		handle(sc.scrape(ctx))
	}
}

// schedule counts n scrape slots.
func (sc *scraper) schedule(n int) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	sc.coverage.scheduled += n
}

// scrape fetches and parses one scrape, bounded by the scrape timeout, and
// records it in the coverage.
func (sc *scraper) scrape(ctx context.Context) scrapeResult {
	at := sc.clk.Now()
	fctx, cancel := context.WithTimeout(ctx, sc.timeout)
	body, contentType, err := sc.src.Fetch(fctx)
	cancel()
	var s *sample
	if err == nil {
		s, err = sc.parser.decode(body, contentType, at)
	}
	sc.mu.Lock()
	defer sc.mu.Unlock()
	sc.coverage.record(at, err == nil)
	return scrapeResult{at: at, sample: s, err: err}
}

// record counts one scrape taken at the given time.
func (c *scrapeCoverage) record(at time.Time, ok bool) {
	c.scrapes++
	if !ok {
		c.failures++
		return
	}
	if !c.lastOK.IsZero() {
		c.maxGap = max(c.maxGap, at.Sub(c.lastOK))
	}
	c.lastOK = at
}

// figures are the coverage figures of the source; see METRICS.md.
func (sc *scraper) figures() []result.Value {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	c := sc.coverage
	value := func(name, unit string, v float64) result.Value {
		return result.Value{Name: name, Unit: unit, Value: v, Labels: result.Labels(result.LabelComponent, sc.src.Component)}
	}
	out := []result.Value{value(APIScrapes, result.UnitCount, float64(c.scrapes)), value(APIScrapeFailures, result.UnitCount, float64(c.failures))}
	if c.scheduled > 0 {
		out = append(out, value(APIScrapesScheduled, result.UnitCount, float64(c.scheduled)))
	}
	return append(out, value(APIScrapeMaxGap, result.UnitSeconds, c.maxGap.Seconds()))
}
