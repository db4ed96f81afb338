package apiserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"

	"github.com/stormbench/stormbench/bench/measure"
	"github.com/stormbench/stormbench/bench/measure/internal/measuretest"
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
				c.record(measuretest.At(time.Duration(s.sec*float64(time.Second))), s.ok)
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
	src := measure.MetricsSource{Component: measure.ComponentEtcd, Fetch: fetchBytes(func(ctx context.Context) ([]byte, string, error) {
		if hang {
			<-ctx.Done()
			return nil, "", ctx.Err()
		}
		return []byte("process_cpu_seconds_total 1\n"), "text/plain; version=0.0.4", nil
	})}
	sc := newScraper(src, testingclock.NewFakeClock(measuretest.T0), time.Second, 10*time.Millisecond, 1)
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
	}{{Scrapes, 2}, {ScrapeFailures, 1}, {ScrapeMaxGap, 0}} {
		if v := measuretest.Value(t, &figures, tt.name, "", result.LabelComponent, measure.ComponentEtcd); v != tt.want {
			t.Errorf("%s = %v, want %v", tt.name, v, tt.want)
		}
	}
	for _, name := range []string{ScrapesScheduled, ScrapesSkipped} {
		if _, ok := figures.Value(name, "", result.LabelComponent, measure.ComponentEtcd); ok {
			t.Errorf("%s reported with no slot scheduled", name)
		}
	}
}

// scriptedScrapes is a MetricsSource whose scrapes block until the test
// releases them, and a record of the scrapes started, released and handed
// over, by the second of their slot.
type scriptedScrapes struct {
	clk  *testingclock.FakeClock
	fail map[int]bool

	mu       sync.Mutex
	started  []int // in slot order
	release  map[int]chan struct{}
	released map[int]bool
	handed   []int
}

func newScriptedScrapes(clk *testingclock.FakeClock, fail map[int]bool) *scriptedScrapes {
	return &scriptedScrapes{clk: clk, fail: fail, release: map[int]chan struct{}{}, released: map[int]bool{}}
}

func (s *scriptedScrapes) second(tm time.Time) int { return int(tm.Sub(measuretest.T0) / time.Second) }

func (s *scriptedScrapes) source() measure.MetricsSource {
	return measure.MetricsSource{Component: measure.ComponentAPIServer, Fetch: func(ctx context.Context, body *bytes.Buffer) (string, error) {
		// The clock stands still while a scrape starts: now is its slot.
		sec := s.second(s.clk.Now())
		s.mu.Lock()
		s.started = append(s.started, sec)
		ch := make(chan struct{})
		s.release[sec] = ch
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return "", ctx.Err()
		}
		if s.fail[sec] {
			return "", errors.New("scripted failure")
		}
		fmt.Fprintf(body, "process_cpu_seconds_total %d\n", sec)
		return "", nil
	}}
}

func (s *scriptedScrapes) hand(r scrapeResult) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handed = append(s.handed, s.second(r.at))
}

// isStarted reports whether the scrape of the slot at sec has started.
func (s *scriptedScrapes) isStarted(sec int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.release[sec] != nil
}

// releaseSlot lets the scrape of the slot at sec return.
func (s *scriptedScrapes) releaseSlot(sec int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.released[sec] {
		s.released[sec] = true
		close(s.release[sec])
	}
}

// counts returns how many scrapes are still running, and how many have
// returned in slot order with no older one running: the ones that should
// have been handed over.
func (s *scriptedScrapes) counts() (running, handable int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	prefix := true
	for _, sec := range s.started {
		if !s.released[sec] {
			running++
			prefix = false
		} else if prefix {
			handable++
		}
	}
	return running, handable
}

func (s *scriptedScrapes) handedCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.handed)
}

// TestScraperOnSchedule drives the scrape loop with a fake clock, one slot
// a second, and scrapes that take a scripted number of seconds: every slot
// starts its scrape at its tick while fewer than maxInFlight are running,
// and the scrapes are handed over in slot order whatever order they
// return in. A scrape that takes d seconds is still running at the tick d
// seconds after its own.
func TestScraperOnSchedule(t *testing.T) {
	tests := []struct {
		name        string
		maxInFlight int
		// took[i] is how long the scrape of the slot at second i+1 takes,
		// in seconds; the loop runs len(took) slots.
		took []int
		fail map[int]bool

		wantScheduled, wantSkipped, wantFailures int
		wantHanded                               []int
		wantMaxGap                               time.Duration
	}{{
		name: "quick scrapes land every slot", maxInFlight: 3, took: []int{0, 0, 0, 0, 0},
		wantScheduled: 5, wantHanded: []int{1, 2, 3, 4, 5}, wantMaxGap: time.Second,
	}, {
		name: "2 s scrapes overlap and all land", maxInFlight: 3, took: []int{2, 2, 2, 2, 2, 2},
		wantScheduled: 6, wantHanded: []int{1, 2, 3, 4, 5, 6}, wantMaxGap: time.Second,
	}, {
		// Three scrapes in flight at every tick: the fourth slot finds
		// the cap reached.
		name: "3 s scrapes with 3 in flight: every fourth slot skipped", maxInFlight: 3, took: []int{3, 3, 3, 3, 3, 3, 3, 3},
		wantScheduled: 8, wantSkipped: 2, wantHanded: []int{1, 2, 3, 5, 6, 7}, wantMaxGap: 2 * time.Second,
	}, {
		name: "3 s scrapes with 4 in flight all land", maxInFlight: 4, took: []int{3, 3, 3, 3, 3, 3, 3, 3},
		wantScheduled: 8, wantHanded: []int{1, 2, 3, 4, 5, 6, 7, 8}, wantMaxGap: time.Second,
	}, {
		// The scrapes at 2, 3 and 4 return before the one at 1; they wait
		// for it, and do not count against the cap while they wait.
		name: "a slow scrape holds up no slot, and scrapes are handed in slot order", maxInFlight: 3, took: []int{4, 0, 0, 0, 0, 0},
		wantScheduled: 6, wantHanded: []int{1, 2, 3, 4, 5, 6}, wantMaxGap: time.Second,
	}, {
		name: "two hung scrapes fill a cap of 2", maxInFlight: 2, took: []int{5, 5, 0, 0, 0, 0, 0},
		wantScheduled: 7, wantSkipped: 4, wantHanded: []int{1, 2, 7}, wantMaxGap: 5 * time.Second,
	}, {
		name: "failed scrapes widen the gap", maxInFlight: 3, took: []int{0, 1, 0, 0, 0}, fail: map[int]bool{2: true, 3: true},
		wantScheduled: 5, wantFailures: 2, wantHanded: []int{1, 2, 3, 4, 5}, wantMaxGap: 3 * time.Second,
	}, {
		name: "one in flight: a sequential loop", maxInFlight: 1, took: []int{2, 2, 2, 2, 2, 2},
		wantScheduled: 6, wantSkipped: 4, wantHanded: []int{1, 4}, wantMaxGap: 3 * time.Second,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := testingclock.NewFakeClock(measuretest.T0)
			script := newScriptedScrapes(clk, tt.fail)
			sc := newScraper(script.source(), clk, time.Second, time.Minute, tt.maxInFlight)
			ctx, stop := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() {
				defer close(done)
				sc.run(ctx, context.Background(), script.hand)
			}()
			due := map[int][]int{} // second → the slots whose scrape returns then
			for sec := 1; sec <= len(tt.took); sec++ {
				measuretest.WaitFor(t, "the loop to wait for its next slot", clk.HasWaiters)
				sc.mu.Lock()
				skipped := sc.coverage.skipped
				sc.mu.Unlock()
				clk.Step(time.Second)
				measuretest.WaitFor(t, fmt.Sprintf("the tick at %d s", sec), func() bool {
					sc.mu.Lock()
					defer sc.mu.Unlock()
					return sc.coverage.scheduled == sec
				})
				sc.mu.Lock()
				started := sc.coverage.skipped == skipped
				sc.mu.Unlock()
				if started {
					measuretest.WaitFor(t, fmt.Sprintf("the scrape at %d s to start", sec), func() bool { return script.isStarted(sec) })
					due[sec+tt.took[sec-1]] = append(due[sec+tt.took[sec-1]], sec)
				}
				for _, s := range due[sec] {
					script.releaseSlot(s)
				}
				running, handable := script.counts()
				measuretest.WaitFor(t, fmt.Sprintf("the scrapes returned by %d s to be handed over and free their buffers", sec), func() bool {
					return script.handedCount() == handable && len(sc.free) == tt.maxInFlight-running
				})
			}
			stop()
			for _, secs := range due {
				for _, s := range secs {
					script.releaseSlot(s)
				}
			}
			<-done

			if !slices.Equal(script.handed, tt.wantHanded) {
				t.Errorf("scrapes handed over at %v s, want %v", script.handed, tt.wantHanded)
			}
			c := sc.coverage
			if c.scheduled != tt.wantScheduled || c.skipped != tt.wantSkipped || c.scrapes != len(tt.wantHanded) || c.failures != tt.wantFailures || c.maxGap != tt.wantMaxGap {
				t.Errorf("scheduled %d, skipped %d, scrapes %d, failures %d, max gap %v; want %d, %d, %d, %d, %v",
					c.scheduled, c.skipped, c.scrapes, c.failures, c.maxGap, tt.wantScheduled, tt.wantSkipped, len(tt.wantHanded), tt.wantFailures, tt.wantMaxGap)
			}
		})
	}
}

// TestScraperLateWakeup: a loop that wakes up slots late takes one scrape
// now and counts the slots it slept through as skipped; the cadence does
// not drift.
func TestScraperLateWakeup(t *testing.T) {
	clk := testingclock.NewFakeClock(measuretest.T0)
	script := newScriptedScrapes(clk, nil)
	sc := newScraper(script.source(), clk, time.Second, time.Minute, 3)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc.run(ctx, context.Background(), script.hand)
	}()
	measuretest.WaitFor(t, "the loop to wait for its first slot", clk.HasWaiters)
	clk.Step(3500 * time.Millisecond)
	measuretest.WaitFor(t, "the late scrape to start", func() bool { return script.isStarted(3) })
	script.releaseSlot(3)
	measuretest.WaitFor(t, "the loop to wait for the slot at 4 s", clk.HasWaiters)
	clk.Step(500 * time.Millisecond)
	measuretest.WaitFor(t, "the scrape at 4 s to start", func() bool { return script.isStarted(4) })
	script.releaseSlot(4)
	stop()
	<-done
	c := sc.coverage
	if !slices.Equal(script.handed, []int{3, 4}) || c.scheduled != 4 || c.skipped != 2 {
		t.Errorf("handed %v, scheduled %d, skipped %d; want [3 4] (3 taken at 3.5 s), 4 slots, 2 skipped", script.handed, c.scheduled, c.skipped)
	}
}

// TestScraperStop: when the loop's context ends, the loop waits for its
// scrapes in flight and hands them over; ending abort cancels them.
func TestScraperStop(t *testing.T) {
	for _, abort := range []bool{false, true} {
		t.Run(fmt.Sprintf("abort=%v", abort), func(t *testing.T) {
			clk := testingclock.NewFakeClock(measuretest.T0)
			script := newScriptedScrapes(clk, nil)
			sc := newScraper(script.source(), clk, time.Second, time.Minute, 3)
			ctx, stop := context.WithCancel(context.Background())
			abortCtx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var results []scrapeResult
			done := make(chan struct{})
			go func() {
				defer close(done)
				sc.run(ctx, abortCtx, func(r scrapeResult) { results = append(results, r) })
			}()
			measuretest.WaitFor(t, "the loop to wait for its first slot", clk.HasWaiters)
			clk.Step(time.Second)
			measuretest.WaitFor(t, "the scrape at 1 s to start", func() bool { return script.isStarted(1) })
			stop()
			if abort {
				cancel()
			} else {
				script.releaseSlot(1)
			}
			<-done
			switch {
			case len(results) != 1:
				t.Fatalf("%d results, want the scrape at 1 s", len(results))
			case abort && !errors.Is(results[0].err, context.Canceled):
				t.Errorf("aborted scrape: error %v, want context.Canceled", results[0].err)
			case !abort && (results[0].err != nil || results[0].sample.counters[cpuKey] != 1):
				t.Errorf("scrape in flight at stop: %+v, want it parsed", results[0])
			}
		})
	}
}
