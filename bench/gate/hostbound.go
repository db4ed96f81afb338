package gate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/stormbench/stormbench/bench/compare"
	"github.com/stormbench/stormbench/bench/measure/host"
	"github.com/stormbench/stormbench/bench/result"
)

// KindHost checks that the current run was not host-bound: its latencies
// and recovery times describe the control plane, not a saturated machine.
const KindHost Kind = "host"

// CheckHostBound adds a host gate per variant of the current result that
// rep already gates, in their order, and counts it: it fails when a
// repetition was host-bound (result.VariantRun.HostBound, the rule of
// host.IsBound), naming why, unless allow (--allow-host-bound), which
// skips it. A variant without host figures (a result written before they
// existed) gets no host gate.
func CheckHostBound(rep *Report, current compare.Input, allow bool) {
	if current.Result == nil {
		return
	}
	var order []string
	for _, c := range rep.Results {
		if !slices.Contains(order, c.Variant) {
			order = append(order, c.Variant)
		}
	}
	for _, name := range order {
		var runs []*result.VariantRun
		for i := range current.Result.Variants {
			if v := &current.Result.Variants[i]; v.Variant == name {
				runs = append(runs, v)
			}
		}
		if c, ok := hostGate(name, runs, allow); ok {
			rep.Results = append(rep.Results, c)
		}
	}
	rep.count()
}

// hostGate is the host gate of one variant's repetitions; false when they
// have no host figures and no hostBound flag.
func hostGate(name string, runs []*result.VariantRun, allow bool) (Check, bool) {
	limit := host.BoundFraction
	c := Check{Variant: name, Kind: KindHost, Name: "host not saturated", Unit: result.UnitRatio, Limit: &limit,
		Threshold: fmt.Sprintf("≤ %.0f%% of the storm ≥ %.0f%% busy", 100*host.BoundFraction, 100*host.SaturatedBusy)}
	var bound []string
	measured := false
	for _, v := range runs {
		m := v.Measurement(host.Name)
		if frac, ok := m.Value(host.SaturatedFraction, result.WindowStorm); ok {
			measured = true
			c.Value = max(c.Value, frac)
		}
		if v.HostBound || host.Bound(v) {
			bound = append(bound, fmt.Sprintf("#%d: %s", v.Repetition, host.BoundReason(v)))
		}
	}
	switch {
	case len(bound) > 0 && allow:
		c.Status, c.Detail = Skip, "host-bound, allowed by --allow-host-bound ("+strings.Join(bound, "; ")+")"
	case len(bound) > 0:
		c.Status, c.Detail = Fail, "host-bound: "+strings.Join(bound, "; ")+"; its latencies and recovery times describe this machine: give the control plane headroom (controlPlane.cpus) or a bigger machine, or pass --allow-host-bound"
	case !measured:
		return c, false
	default:
		c.Status, c.Detail = Pass, fmt.Sprintf("worst repetition %.0f%% saturated", 100*c.Value)
	}
	return c, true
}
