package apiserver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"k8s.io/utils/clock"

	"github.com/stormbench/stormbench/bench/measure"
	"github.com/stormbench/stormbench/bench/poll"
)

// SettleOptions say when an API server counts as settled: its request rate
// (apiserver_request_total without WATCH, which counts opened watches, not
// traffic) over each of the last Windows windows differs from the others by
// at most Tolerance (relative) or Floor (requests/s, absolute), whichever is
// larger.
type SettleOptions struct {
	// Interval between scrapes; default 5s, or half the window when the
	// window is shorter than 10 s (each window then holds two scrapes).
	Interval time.Duration
	// Window of each rate; default 10s.
	Window time.Duration
	// Windows is how many consecutive windows must agree; default 4. At
	// fleet-1k, two (20 s) passed before the garbage collector's first
	// pass over the restored objects (about 2,000 GETs of nodes, CSINodes
	// and workloads 40 s after the restore) and the baseline caught it.
	Windows int
	// Tolerance is the relative difference allowed; default 0.15.
	Tolerance float64
	// Floor is the absolute difference allowed, requests/s; default 2.
	Floor float64
	// Timeout gives up waiting; default 3m. A timeout is not an error: the
	// caller gets Settled false and the rates seen.
	Timeout time.Duration
}

func (o SettleOptions) withDefaults() SettleOptions {
	if o.Window <= 0 {
		o.Window = 10 * time.Second
	}
	if o.Interval <= 0 {
		o.Interval = min(5*time.Second, o.Window/2)
	}
	if o.Windows < 2 {
		o.Windows = 4
	}
	if o.Tolerance <= 0 {
		o.Tolerance = 0.15
	}
	if o.Floor <= 0 {
		o.Floor = 2
	}
	if o.Timeout <= 0 {
		o.Timeout = 3 * time.Minute
	}
	return o
}

// Settle is the outcome of WaitSettled.
type Settle struct {
	// Settled is false when the timeout came first.
	Settled bool
	// After is how long the wait took.
	After time.Duration
	// Rate is the last window's request rate, per second; Low and High the
	// lowest and highest of the windows compared.
	Rate, Low, High float64
}

// String is the line a progress log prints.
func (s Settle) String() string {
	state := "steady"
	if !s.Settled {
		state = "still moving"
	}
	return fmt.Sprintf("API request rate %s after %s: %.1f/s (%.1f–%.1f/s in the last windows)", state, s.After.Round(time.Second), s.Rate, s.Low, s.High)
}

// WaitSettled scrapes the API server until its request rate is steady (see
// SettleOptions), and says how long that took. A restored snapshot's
// cluster serves and is Ready well before its controllers have finished
// relisting and resyncing; a baseline taken then is inflated, and every
// figure relative to it is off.
func WaitSettled(ctx context.Context, src measure.MetricsSource, clk clock.Clock, o SettleOptions) (Settle, error) {
	o = o.withDefaults()
	start := clk.Now()
	// One scrape at a time, fetched and parsed as the measurement's are.
	sc, b := &scraper{src: src, timeout: o.Interval}, &scrapeBuffers{parser: newMetricsParser()}
	var j settleJudge
	var last Settle
	var lastErr error
	w := poll.Wait{Clock: clk, Interval: o.Interval, Timeout: o.Timeout, What: "waiting for the API server's request rate to settle"}
	err := w.Until(ctx, func(ctx context.Context) (bool, string, error) {
		r := sc.fetch(ctx, b, time.Time{})
		at := clk.Now()
		if lastErr = r.err; r.err != nil {
			return false, r.err.Error(), nil
		}
		rates, ok := j.add(at, requestsWithoutWatch(r.sample), o)
		if !ok {
			return false, "too few windows yet", nil
		}
		lo, hi := slices.Min(rates), slices.Max(rates)
		last = Settle{After: at.Sub(start), Rate: rates[len(rates)-1], Low: lo, High: hi}
		last.Settled = hi-lo <= max(o.Floor, o.Tolerance*lo)
		return last.Settled, fmt.Sprintf("%.1f–%.1f/s", lo, hi), nil
	})
	switch {
	case err == nil:
		return last, nil
	case !errors.Is(err, poll.ErrTimeout):
		return last, ctx.Err()
	}
	// Not settled within the timeout: the last windows say how far.
	last.After = clk.Since(start)
	if last.High == 0 && lastErr != nil {
		return last, fmt.Errorf("API server rate never measured in %s: %w", o.Timeout, lastErr)
	}
	return last, nil
}

// requestsWithoutWatch sums apiserver_request_total over every label set
// but verb WATCH.
func requestsWithoutWatch(s *sample) float64 {
	var n float64
	for k, v := range s.counters {
		if k.fam == famRequests && k.a != "WATCH" {
			n += v
		}
	}
	return n
}

// settleJudge keeps a cumulative request count's points and gives the rates
// of the last whole windows, oldest first: each from the newest point at or
// before its start to the newest at or before its end, the last ending at
// the newest point. It needs no clock: points carry their times.
type settleJudge struct {
	points []settlePoint
}

type settlePoint struct {
	at    time.Time
	total float64
}

// add records a point and returns the rates of the last o.Windows windows,
// once that many whole windows lie between the first point and this one. A
// counter that went backwards (the API server restarted) starts the points
// afresh.
func (j *settleJudge) add(at time.Time, total float64, o SettleOptions) (rates []float64, ok bool) {
	if n := len(j.points); n > 0 && total < j.points[n-1].total {
		j.points = j.points[:0]
	}
	j.points = append(j.points, settlePoint{at, total})
	// The newest point at or before at-d.
	before := func(d time.Duration) (settlePoint, bool) {
		for i := len(j.points) - 1; i >= 0; i-- {
			if !j.points[i].at.After(at.Add(-d)) {
				return j.points[i], true
			}
		}
		return settlePoint{}, false
	}
	end := j.points[len(j.points)-1]
	var first settlePoint
	for i := 1; i <= o.Windows; i++ {
		p, found := before(time.Duration(i) * o.Window)
		if !found || !end.at.After(p.at) {
			return nil, false
		}
		rates = append(rates, (end.total-p.total)/end.at.Sub(p.at).Seconds())
		end, first = p, p
	}
	slices.Reverse(rates)
	// Points older than the oldest window's start are not needed again.
	for len(j.points) > 1 && j.points[1].at.Before(first.at) {
		j.points = j.points[1:]
	}
	return rates, true
}
