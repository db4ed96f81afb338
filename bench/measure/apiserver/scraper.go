package apiserver

import (
	"bytes"
	"context"
	"sync"
	"time"

	"k8s.io/utils/clock"

	"github.com/stormbench/stormbench/bench/measure"
	"github.com/stormbench/stormbench/bench/result"
)

// scraper fetches and parses one source's /metrics on a fixed cadence and
// records the coverage of its scrapes. It knows nothing of windows or
// figures: each scrape goes to the caller, which hands the sample to the
// accumulator.
//
// Every slot of the cadence starts its scrape at its tick, whether or not
// the earlier scrapes have returned, up to maxInFlight scrapes at once: a
// loaded API server takes seconds to answer a scrape (a 1,000-node storm:
// about 3 s), and a loop that waited for each scrape before the next one
// landed a third of its slots. A slot that finds maxInFlight scrapes
// still running is skipped. The scrapes are handed over in the order of
// their slots, which is the time order the accumulator needs, whatever
// order they finish in.
type scraper struct {
	src         measure.MetricsSource
	clk         clock.Clock
	interval    time.Duration
	timeout     time.Duration
	maxInFlight int
	// free holds a parser and body buffer for each scrape that may be in
	// flight; a scrape holds one from its tick until it is parsed, so that
	// no two scrapes share a parser (it is not safe for concurrent use) or
	// a body. A scrape is in flight while it holds them.
	free chan *scrapeBuffers

	mu       sync.Mutex
	coverage scrapeCoverage
}

// scrapeBuffers is what one scrape in flight needs of its own.
type scrapeBuffers struct {
	parser *metricsParser
	body   bytes.Buffer
}

// scrapeCoverage counts a source's scrapes against its schedule: what
// fraction of the cadence the figures actually cover.
type scrapeCoverage struct {
	// scheduled counts the scrape slots of the cadence, including the
	// skipped ones; skipped counts the slots that found maxInFlight scrapes
	// still running.
	scheduled int
	skipped   int
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

func newScraper(src measure.MetricsSource, clk clock.Clock, interval, timeout time.Duration, maxInFlight int) *scraper {
	sc := &scraper{src: src, clk: clk, interval: interval, timeout: timeout, maxInFlight: maxInFlight, free: make(chan *scrapeBuffers, maxInFlight)}
	for range maxInFlight {
		sc.free <- &scrapeBuffers{parser: newMetricsParser()}
	}
	return sc
}

// run starts a scrape at every tick of the interval cadence until ctx
// ends, unless maxInFlight scrapes are running, and hands each scrape to
// handle in the order of their slots, from one goroutine. Every scrape has
// its own timeout and runs under abort, not ctx: when ctx ends, run waits
// for the scrapes in flight (at most the timeout), hands them over and
// returns; ending abort cancels them too.
func (sc *scraper) run(ctx, abort context.Context, handle func(scrapeResult)) {
	// order holds the scrapes not yet handed over, oldest first: those in
	// flight, and those done but waiting for an older one. The oldest is
	// at most the scrape timeout old, so a timeout's worth of slots (and
	// the in-flight ones) fit; were it full, the loop would wait.
	order := make(chan *inFlight, int(sc.timeout/sc.interval)+sc.maxInFlight+1)
	handed := make(chan struct{})
	go func() {
		defer close(handed)
		for f := range order {
			r := <-f.done
			sc.record(r)
			handle(r)
		}
	}()
	defer func() {
		close(order)
		<-handed
	}()
	next := sc.clk.Now()
	for {
		next = next.Add(sc.interval)
		if !sc.wait(ctx, next) {
			return
		}
		at := sc.clk.Now()
		if late := at.Sub(next); late >= sc.interval {
			// The loop woke up slots late (a starved process): the slots
			// it slept through are scheduled and skipped, this one is
			// taken now, and the cadence does not drift.
			missed := int(late / sc.interval)
			next = next.Add(time.Duration(missed) * sc.interval)
			sc.schedule(missed, true)
		}
		select {
		case b := <-sc.free:
			sc.schedule(1, false)
			f := &inFlight{done: make(chan scrapeResult, 1)}
			order <- f
			go func() {
				r := sc.fetch(abort, b, at)
				sc.free <- b // the sample holds nothing of the buffers
				f.done <- r
			}()
		default:
			sc.schedule(1, true)
		}
	}
}

// inFlight is one scrape of the loop, from its tick until it is handed
// over.
type inFlight struct {
	done chan scrapeResult
}

// wait waits until the given time, and reports false if ctx ended first.
func (sc *scraper) wait(ctx context.Context, until time.Time) bool {
	d := until.Sub(sc.clk.Now())
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := sc.clk.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C():
		return true
	}
}

// schedule counts n scrape slots, skipped ones if they start no scrape.
func (sc *scraper) schedule(n int, skipped bool) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	sc.coverage.scheduled += n
	if skipped {
		sc.coverage.skipped += n
	}
}

// scrape takes one scrape now, outside the cadence (the first and the
// final one), and records it. The loop must not be running: it may be
// holding every buffer.
func (sc *scraper) scrape(ctx context.Context) scrapeResult {
	b := <-sc.free
	defer func() { sc.free <- b }()
	r := sc.fetch(ctx, b, sc.clk.Now())
	sc.record(r)
	return r
}

// fetch fetches and parses one scrape taken at the given time with the
// given buffers, bounded by the scrape timeout.
func (sc *scraper) fetch(ctx context.Context, b *scrapeBuffers, at time.Time) scrapeResult {
	fctx, cancel := context.WithTimeout(ctx, sc.timeout)
	defer cancel()
	b.body.Reset()
	contentType, err := sc.src.Fetch(fctx, &b.body)
	var s *sample
	if err == nil {
		s, err = b.parser.decode(b.body.Bytes(), contentType, at)
	}
	return scrapeResult{at: at, sample: s, err: err}
}

// record counts one scrape in the coverage; scrapes are recorded in time
// order.
func (sc *scraper) record(r scrapeResult) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	sc.coverage.record(r.at, r.err == nil)
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
	out := []result.Value{value(Scrapes, result.UnitCount, float64(c.scrapes)), value(ScrapeFailures, result.UnitCount, float64(c.failures))}
	if c.scheduled > 0 {
		out = append(out, value(ScrapesScheduled, result.UnitCount, float64(c.scheduled)), value(ScrapesSkipped, result.UnitCount, float64(c.skipped)))
	}
	return append(out, value(ScrapeMaxGap, result.UnitSeconds, c.maxGap.Seconds()))
}
