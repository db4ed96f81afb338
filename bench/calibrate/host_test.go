package calibrate

import (
	"testing"
	"time"

	"github.com/stormbench/stormbench/bench/measure/host"
	"github.com/stormbench/stormbench/bench/result"
)

// TestJudgeHostBound: in a host-bound case (here saturated for 30 s) a
// timing row whose model is below the real kubelet by no more than the
// tolerance plus the saturated seconds agrees, marked; one further below,
// or above the real side's interval beyond the tolerance, still differs,
// and counts and informational rows are left as they were judged.
func TestJudgeHostBound(t *testing.T) {
	tol := DefaultTolerance()
	periods := func(lo, hi float64) *Spread {
		return &Spread{N: 20, Min: lo, Max: hi, CI95: &Interval{Lo: lo, Hi: hi}, Of: "periods"}
	}
	for _, tc := range []struct {
		name          string
		row           Row
		agree, marked bool
	}{
		{"model faster than the slowed kubelet", Row{Metric: MetricNotReadyP50, Unit: "s", Real: 10.9, Simulated: 4.52,
			RealSpread: periods(10.4, 12.5), SimulatedSpread: periods(4.2, 4.8)}, true, true},
		{"model faster than the host's slack", Row{Metric: MetricNotReadyP50, Unit: "s", Real: 50, Simulated: 4,
			RealSpread: periods(48, 55), SimulatedSpread: periods(3, 5)}, false, false},
		{"model slower beyond the tolerance", Row{Metric: MetricNotReadyMax, Unit: "s", Real: 5, Simulated: 9,
			RealSpread: periods(4, 5.5), SimulatedSpread: periods(8, 9)}, false, false},
		{"already agrees: not marked", Row{Metric: MetricNotReadyP50, Unit: "s", Real: 5, Simulated: 5.2}, true, false},
		{"a count below the real side still differs", Row{Metric: "kubelet: get pods", Unit: "/restart", Real: 15, Simulated: 5}, false, false},
		{"informational", Row{Metric: MetricKubeletCPU, Unit: "s", Real: 3, Simulated: 0.1, Informational: true}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			row := tc.row
			if !row.Informational {
				row.Agree = tol.agreeSpread(row.Unit, row.Real, row.Simulated, row.RealSpread, row.SimulatedSpread)
			}
			rows := []Row{row}
			judgeHostBound(rows, tol, &CaseHost{WindowSeconds: 60, SaturatedSeconds: 30, Bound: true})
			if rows[0].Agree != tc.agree || rows[0].HostBound != tc.marked {
				t.Errorf("agree %v, host-bound %v; want %v, %v", rows[0].Agree, rows[0].HostBound, tc.agree, tc.marked)
			}
		})
	}
}

// TestCaseHost: a case is host-bound when the host was saturated for
// more than host.BoundFraction of its window.
func TestCaseHost(t *testing.T) {
	start := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	window := func(saturated float64) result.Measurement {
		return result.Measurement{Name: host.Name,
			Windows: []result.Window{{Name: result.WindowStorm, Start: start, End: start.Add(100 * time.Second)}},
			Values: []result.Value{
				{Name: host.SaturatedSeconds, Window: result.WindowStorm, Value: saturated},
				{Name: host.BusyMean, Window: result.WindowStorm, Value: 0.5},
			}}
	}
	for _, tc := range []struct {
		saturated float64
		bound     bool
	}{{0, false}, {10, false}, {10.5, true}, {96, true}} {
		h := caseHost(window(tc.saturated))
		if h == nil || h.Bound != tc.bound || h.WindowSeconds != 100 || h.SaturatedSeconds != tc.saturated {
			t.Errorf("saturated %v s of 100: %+v, want bound %v", tc.saturated, h, tc.bound)
		}
	}
	if h := caseHost(result.Measurement{Name: host.Name}); h != nil {
		t.Errorf("no storm window: %+v, want nil", h)
	}
}
