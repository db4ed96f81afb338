package apiserver

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stormbench/stormbench/bench/measure"
	"k8s.io/utils/clock"
)

// TestSettleDefaults: a scrape every 5 s, or twice per window when the
// window is shorter than 10 s; a given interval stays.
func TestSettleDefaults(t *testing.T) {
	for _, tc := range []struct {
		in           SettleOptions
		wantInterval time.Duration
		wantWindow   time.Duration
	}{
		{SettleOptions{}, 5 * time.Second, 10 * time.Second},
		{SettleOptions{Window: 4 * time.Second}, 2 * time.Second, 4 * time.Second},
		{SettleOptions{Window: 20 * time.Second}, 5 * time.Second, 20 * time.Second},
		{SettleOptions{Window: 10 * time.Second, Interval: 2500 * time.Millisecond}, 2500 * time.Millisecond, 10 * time.Second},
	} {
		got := tc.in.withDefaults()
		if got.Interval != tc.wantInterval || got.Window != tc.wantWindow {
			t.Errorf("%+v.withDefaults(): interval %v window %v, want %v and %v", tc.in, got.Interval, got.Window, tc.wantInterval, tc.wantWindow)
		}
	}
}

// TestSettleJudge: the rates of the last two whole windows, from points of a
// cumulative count; none until two windows have passed; a counter reset
// starts afresh.
func TestSettleJudge(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	o := SettleOptions{Windows: 2}.withDefaults() // two 10 s windows
	type point struct {
		sec   int
		total float64
	}
	for _, tc := range []struct {
		name             string
		points           []point
		wantOK           bool
		wantRate, wantPv float64
	}{
		{"one window only", []point{{0, 0}, {5, 50}, {10, 100}}, false, 0, 0},
		{"steady 10/s", []point{{0, 0}, {5, 50}, {10, 100}, {15, 150}, {20, 200}}, true, 10, 10},
		{"falling burst", []point{{0, 0}, {10, 1000}, {20, 1200}}, true, 20, 100},
		{"uneven points: each window reaches back to the newest point a window old", []point{{0, 0}, {7, 70}, {14, 140}, {21, 175}}, true, 7.5, 10},
		{"counter reset", []point{{0, 0}, {10, 1000}, {20, 2000}, {25, 10}}, false, 0, 0},
		{"after a reset", []point{{0, 500}, {5, 10}, {15, 110}, {25, 210}}, true, 10, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var j settleJudge
			var rates []float64
			var ok bool
			for _, p := range tc.points {
				rates, ok = j.add(t0.Add(time.Duration(p.sec)*time.Second), p.total, o)
			}
			var rate, prev float64
			if len(rates) == 2 {
				prev, rate = rates[0], rates[1]
			}
			if ok != tc.wantOK || rate != tc.wantRate || prev != tc.wantPv {
				t.Errorf("got rate %v, previous %v, ok %v; want %v, %v, %v", rate, prev, ok, tc.wantRate, tc.wantPv, tc.wantOK)
			}
		})
	}
}

// TestWaitSettled: scripted scrapes of a falling request rate. The wait ends
// at the first scrape whose window is within tolerance of the one before,
// or at the timeout with Settled false; WATCH requests are not counted.
func TestWaitSettled(t *testing.T) {
	for _, tc := range []struct {
		name        string
		rates       []float64 // requests/s in each 5 s interval
		windows     int
		timeout     time.Duration
		wantSettled bool
		wantAfter   time.Duration
	}{
		// Windows (10 s) at 20 s: 100 vs 300; 25 s: 100 vs 200; 30 s: 30 vs 100;
		// 35 s: 30 vs 65; 40 s: 30 vs 30.
		{"burst then steady", []float64{300, 300, 100, 100, 30, 30, 30, 30, 30, 30}, 2, time.Minute, true, 40 * time.Second},
		{"steady from the start", []float64{50, 50, 50, 50, 50}, 2, time.Minute, true, 20 * time.Second},
		{"never steady", []float64{1000, 500, 250, 125, 1000, 500, 250, 125, 1000, 500, 250, 125, 1000}, 2, 30 * time.Second, false, 30 * time.Second},
		// A late burst, as the garbage collector's first pass after a
		// restore: two windows pass at 20 s, before it; four see it and
		// wait until 40 s of steady rate follow it.
		{"late burst, two windows", []float64{50, 50, 50, 50, 400, 50, 50, 50, 50, 50, 50, 50, 50, 50, 50, 50}, 2, 2 * time.Minute, true, 20 * time.Second},
		{"late burst, four windows", []float64{50, 50, 50, 50, 400, 50, 50, 50, 50, 50, 50, 50, 50, 50, 50, 50}, 4, 2 * time.Minute, true, 65 * time.Second},
		{"steady, four windows", []float64{50, 50, 50, 50, 50, 50, 50, 50, 50}, 4, time.Minute, true, 40 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				clk := clock.RealClock{}
				start := clk.Now()
				src := measure.MetricsSource{Component: measure.ComponentAPIServer, Fetch: fetchBytes(func(context.Context) ([]byte, string, error) {
					// The count at this time: the integral of the scripted rates.
					el := clk.Since(start)
					var total float64
					for i, r := range tc.rates {
						from := time.Duration(i) * 5 * time.Second
						if el <= from {
							break
						}
						total += r * min(el-from, 5*time.Second).Seconds()
					}
					body := fmt.Sprintf("apiserver_request_total{code=\"200\",resource=\"pods\",subresource=\"\",verb=\"GET\"} %g\n"+
						"apiserver_request_total{code=\"200\",resource=\"pods\",subresource=\"\",verb=\"WATCH\"} %g\n", total, 7*el.Seconds()*el.Seconds())
					return []byte(body), "text/plain; version=0.0.4", nil
				})}
				got, err := WaitSettled(context.Background(), src, clk, SettleOptions{Windows: tc.windows, Timeout: tc.timeout})
				if err != nil {
					t.Fatal(err)
				}
				if got.Settled != tc.wantSettled || got.After != tc.wantAfter {
					t.Errorf("got %+v, want settled %v after %s", got, tc.wantSettled, tc.wantAfter)
				}
			})
		})
	}
}

// TestWaitSettledUnreachable: an API server that never answers is an error
// at the timeout, not a settled cluster.
func TestWaitSettledUnreachable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := measure.MetricsSource{Component: measure.ComponentAPIServer, Fetch: fetchBytes(func(context.Context) ([]byte, string, error) {
			return nil, "", fmt.Errorf("connection refused")
		})}
		if got, err := WaitSettled(context.Background(), src, clock.RealClock{}, SettleOptions{Timeout: 20 * time.Second}); err == nil {
			t.Errorf("got %+v and no error", got)
		}
	})
}
