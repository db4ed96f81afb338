package report

import (
	"bytes"
	"testing"
	"time"

	"github.com/stormbench/stormbench/bench/measure/host"
	"github.com/stormbench/stormbench/bench/result"
	"github.com/stormbench/stormbench/bench/testutil"
)

// hostMeasurement is a host measurement of a storm window of window
// seconds, saturated for sat of them.
func hostMeasurement(start time.Time, window, p50, maxBusy, sat float64) result.Measurement {
	v := func(name string, x float64) result.Value {
		return result.Value{Name: name, Window: result.WindowStorm, Unit: result.UnitRatio, Value: x}
	}
	return result.Measurement{Name: host.Name,
		Windows: []result.Window{{Name: result.WindowStorm, Start: start, End: start.Add(time.Duration(window * float64(time.Second)))}},
		Values:  []result.Value{v(host.BusyP50, p50), v(host.BusyMax, maxBusy), v(host.SaturatedSeconds, sat)}}
}

// TestSummaryHost: the host row, and the warning of a host-bound variant
// (45 s of 120 s saturated) but not of one within the rule (12 of 120).
func TestSummaryHost(t *testing.T) {
	r := summaryFixture(t)
	start := r.Variants[0].StormStart
	r.Variants[0].Measurements = append(r.Variants[0].Measurements, hostMeasurement(start, 120, 0.62, 1, 12))
	r.Variants[1].Measurements = append(r.Variants[1].Measurements, hostMeasurement(start, 120, 0.97, 1, 45))
	r.Variants[1].HostBound = host.Bound(&r.Variants[1])
	if host.Bound(&r.Variants[0]) || !r.Variants[1].HostBound {
		t.Fatalf("host-bound: %v %v, want false true", host.Bound(&r.Variants[0]), r.Variants[1].HostBound)
	}
	var buf bytes.Buffer
	if err := WriteSummary(&buf, r); err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, "summary-host.golden", buf.Bytes())
	if n := hostNotes(r); len(n) != 1 {
		t.Errorf("host notes = %q, want one", n)
	}
}
