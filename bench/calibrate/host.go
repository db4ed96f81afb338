package calibrate

import (
	"context"
	"fmt"
	"time"

	"github.com/stormbench/stormbench/bench/measure"
	"github.com/stormbench/stormbench/bench/measure/host"
	"github.com/stormbench/stormbench/bench/result"
)

// A case's host: how busy the machine was while both sides restarted. The
// real kubelets share the machine with the control plane and stormbench;
// on a saturated host they wait for a CPU, and their timings stretch (a
// containerd reboot's not-ready periods went from 5.5 s to 10.9 s under
// the load of make test's other lanes), while the model's are the clock's.
// A timing row of a host-bound case is therefore judged with the host's
// slack (judgeHostBound): the model may be faster than the real kubelet by
// the tolerance plus the seconds the host was saturated (the longest it
// can have held the real kubelet back), and slower by the tolerance
// alone. Counts are judged as always.

// CaseHost is the host's usage over a case's window (host.Host's
// storm-window figures).
type CaseHost struct {
	// WindowSeconds is the sampled length of the window;
	// SaturatedSeconds the time in it the host was at least
	// host.SaturatedBusy busy.
	WindowSeconds    float64 `json:"windowSeconds"`
	SaturatedSeconds float64 `json:"saturatedSeconds"`
	// BusyMean is the busy fraction of the whole window.
	BusyMean float64 `json:"busyMean"`
	// Bound is host.IsBound of the two: the timing rows were
	// judged with the host's slack.
	Bound bool `json:"bound,omitempty"`
}

// String is the case's host in a reader's words.
func (h *CaseHost) String() string {
	s := fmt.Sprintf("host %.0f %% busy, saturated (≥ %.0f %%) for %.0f of %.0f s", 100*h.BusyMean, 100*host.SaturatedBusy, h.SaturatedSeconds, h.WindowSeconds)
	if h.Bound {
		s += fmt.Sprintf(": host-bound, timings judged with %.0f s of slack below the real side (the model may be that much faster than the slowed real kubelet, beyond the tolerance; slower only within it)", h.SaturatedSeconds)
	}
	return s
}

// startHost samples the host from t0, the case's restart.
func (c *calibration) startHost(ctx context.Context, t0 time.Time) (*host.Host, error) {
	m := host.New(host.Options{})
	if err := m.Start(ctx, &measure.Env{Clock: c.o.Clock}); err != nil {
		return nil, err
	}
	m.MarkStormStart(t0)
	return m, nil
}

// caseHostOver ends the host's window at end and returns its figures.
func caseHostOver(ctx context.Context, m *host.Host, end time.Time) (*CaseHost, error) {
	m.MarkStormEnd(ctx, end)
	g, err := m.Gather(ctx)
	if err != nil {
		return nil, err
	}
	return caseHost(g), nil
}

// caseHost reads a host measurement's storm window; nil without one.
func caseHost(g result.Measurement) *CaseHost {
	sat, ok := g.Value(host.SaturatedSeconds, result.WindowStorm)
	w, okw := g.Window(result.WindowStorm)
	if !ok || !okw {
		return nil
	}
	busy, _ := g.Value(host.BusyMean, result.WindowStorm)
	h := &CaseHost{WindowSeconds: round3(w.Duration().Seconds()), SaturatedSeconds: round3(sat), BusyMean: round3(busy)}
	h.Bound = host.IsBound(sat, w.Duration().Seconds())
	return h
}

// judgeHostBound judges a host-bound case's checked timing rows with the
// host's slack (Tolerance.agreeBelow): a row whose model is below the real
// side by no more than the tolerance plus the saturated seconds agrees,
// marked, since a saturated host only delays the real kubelet, and by at
// most the time it was saturated; a model further below, or above the
// real side's interval, still differs.
func judgeHostBound(rows []Row, tol Tolerance, h *CaseHost) {
	for i := range rows {
		r := &rows[i]
		if r.Unit != "s" || r.Informational || r.Agree {
			continue
		}
		if tol.agreeBelow(*r, h.SaturatedSeconds) {
			r.Agree, r.HostBound = true, true
		}
	}
}
