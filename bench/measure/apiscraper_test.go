package measure

import (
	"context"
	"errors"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"

	"github.com/stormbench/stormbench/bench/result"
)

func TestScrapeCoverage(t *testing.T) {
	type scrape struct {
		sec float64
		ok  bool
	}
	tests := []struct {
		name               string
		scrapes            []scrape
		wantScrapes, wantN int
		wantMaxGap         time.Duration
	}{
		{"none", nil, 0, 0, 0},
		{"one success: no gap yet", []scrape{{0, true}}, 1, 0, 0},
		{"steady", []scrape{{0, true}, {1, true}, {2, true}}, 3, 0, time.Second},
		{"a failure widens the gap", []scrape{{0, true}, {1, true}, {2, false}, {3, true}}, 4, 1, 2 * time.Second},
		{"failures before the first success", []scrape{{0, false}, {1, false}, {2, true}, {3.5, true}}, 4, 2, 1500 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c scrapeCoverage
			for _, s := range tt.scrapes {
				c.record(at(time.Duration(s.sec*float64(time.Second))), s.ok)
			}
			if c.scrapes != tt.wantScrapes || c.failures != tt.wantN || c.maxGap != tt.wantMaxGap {
				t.Errorf("scrapes %d, failures %d, max gap %v; want %d, %d, %v", c.scrapes, c.failures, c.maxGap, tt.wantScrapes, tt.wantN, tt.wantMaxGap)
			}
		})
	}
}

// TestScraperTimeout: a scrape that hangs fails at the scrape timeout, and
// the next scrape runs as usual.
func TestScraperTimeout(t *testing.T) {
	hang := true
	src := MetricsSource{Component: ComponentEtcd, Fetch: func(ctx context.Context) ([]byte, string, error) {
		if hang {
			<-ctx.Done()
			return nil, "", ctx.Err()
		}
		return []byte("process_cpu_seconds_total 1\n"), "text/plain; version=0.0.4", nil
	}}
	sc := newScraper(src, testingclock.NewFakeClock(t0), time.Second, 10*time.Millisecond)
	if r := sc.scrape(context.Background()); !errors.Is(r.err, context.DeadlineExceeded) {
		t.Fatalf("hung scrape: error %v, want the scrape timeout", r.err)
	}
	hang = false
	if r := sc.scrape(context.Background()); r.err != nil || r.sample.counters[cpuKey] != 1 {
		t.Fatalf("scrape after the hung one: %+v", r)
	}
	figures := result.Measurement{Values: sc.figures()}
	for _, tt := range []struct {
		name string
		want float64
	}{{APIScrapes, 2}, {APIScrapeFailures, 1}, {APIScrapeMaxGap, 0}} {
		if v := value(t, &figures, tt.name, "", result.LabelComponent, ComponentEtcd); v != tt.want {
			t.Errorf("%s = %v, want %v", tt.name, v, tt.want)
		}
	}
	if _, ok := figures.Value(APIScrapesScheduled, "", result.LabelComponent, ComponentEtcd); ok {
		t.Error("scrapes_scheduled reported with no slot scheduled")
	}
}

// TestScraperSkipsOverrunSlots: a scrape that overruns its slot makes the
// loop skip the slots it missed, and they count as scheduled.
func TestScraperSkipsOverrunSlots(t *testing.T) {
	clk := testingclock.NewFakeClock(t0)
	src := MetricsSource{Component: ComponentEtcd, Fetch: func(ctx context.Context) ([]byte, string, error) {
		clk.Step(2500 * time.Millisecond) // the scrape takes 2.5 intervals
		return []byte("process_cpu_seconds_total 1\n"), "", nil
	}}
	sc := newScraper(src, clk, time.Second, time.Minute)
	ctx, cancel := context.WithCancel(context.Background())
	results := make(chan scrapeResult, 10)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc.run(ctx, func(r scrapeResult) { results <- r })
	}()
	waitFor(t, "the loop to wait for its first slot", clk.HasWaiters)
	clk.Step(time.Second)
	if r := <-results; r.err != nil || !r.at.Equal(at(time.Second)) {
		t.Fatalf("first scrape %+v, want one at 1s", r)
	}
	// The scrape ended at 3.5 s: the slots at 2 s and 3 s are missed, and
	// the loop waits for the one at 4 s.
	waitFor(t, "the loop to wait for its next slot", clk.HasWaiters)
	cancel()
	<-done
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.coverage.scheduled != 4 || sc.coverage.scrapes != 1 {
		t.Errorf("scheduled %d, scrapes %d; want 4 slots (1, then 2, 3 missed and 4) and 1 scrape", sc.coverage.scheduled, sc.coverage.scrapes)
	}
}
