package report

import (
	"fmt"

	"github.com/stormbench/stormbench/bench/measure/host"
	"github.com/stormbench/stormbench/bench/result"
)

// hostCPU is the host's busy fraction in the storm window, median and
// maximum per second, and the seconds it was at least 90 % busy, with
// "host-bound" when they are more than 10 % of the window
// (host.IsBound).
func hostCPU(v *result.VariantRun) string {
	m := v.Measurement(host.Name)
	p50, ok1 := m.Value(host.BusyP50, result.WindowStorm)
	mx, ok2 := m.Value(host.BusyMax, result.WindowStorm)
	sat, ok3 := m.Value(host.SaturatedSeconds, result.WindowStorm)
	if !ok1 || !ok2 || !ok3 {
		return missing
	}
	s := fmt.Sprintf("%.0f%% / %.0f%%; %.0fs", 100*p50, 100*mx, sat)
	if w, ok := m.Window(result.WindowStorm); ok {
		s += fmt.Sprintf(" of %.0fs", w.Duration().Seconds())
	}
	if v.HostBound {
		s += " HOST-BOUND"
	}
	return s
}

// hostNotes are the warnings for the host-bound variant runs of r.
func hostNotes(r *result.Result) []string {
	var out []string
	for i := range r.Variants {
		if n := host.BoundNote(&r.Variants[i]); n != "" {
			out = append(out, n)
		}
	}
	return out
}
