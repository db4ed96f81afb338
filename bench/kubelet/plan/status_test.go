package plan

import (
	"fmt"
	"testing"
	"time"
)

// TestStartupSteps: the legacy gate's reset of a started container with a
// startup probe, by the order of the two workers' first probes.
func TestStartupSteps(t *testing.T) {
	s := time.Second
	type w struct {
		at             time.Duration
		started, ready bool
	}
	for _, tc := range []struct {
		name           string
		s0, sp, r0, rp time.Duration
		want           []w
	}{
		{"startup first: not started for a startup period, ready at once after", 3 * s, 10 * s, 5 * s, 10 * s,
			[]w{{3 * s, false, false}, {13 * s, true, false}, {13 * s, true, true}}},
		{"readiness first: down at its first result, a moment Ready (SetContainerReadiness), started at the startup worker's first probe", 6 * s, 10 * s, 1 * s, 10 * s,
			[]w{{1 * s, false, false}, {1 * s, false, true}, {1 * s, false, false}, {6 * s, true, false}, {6 * s, true, true}}},
		{"no readiness probe: ready once started", 4 * s, 5 * s, 0, 0,
			[]w{{4 * s, false, false}, {9 * s, true, true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []w
			for _, st := range startupSteps("app", tc.s0, tc.sp, tc.r0, tc.rp) {
				if st.Container != "app" {
					t.Errorf("step for %q", st.Container)
				}
				got = append(got, w{st.At, st.Started, st.Ready})
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("steps %v, want %v", got, tc.want)
			}
		})
	}
}

// TestRebootFirstProbe: a recreated container's first readiness Success
// comes at the worker's manual trigger when it runs, or when the worker
// wakes from its start-up sleep if that is later, and not before the
// initial delay, counted in ticks from the trigger.
func TestRebootFirstProbe(t *testing.T) {
	s := time.Second
	for _, tc := range []struct {
		name                                  string
		jitter, running, initialDelay, period time.Duration
		want                                  time.Duration
	}{
		{"the worker is awake: the trigger at running", 1 * s, 3 * s, 0, 10 * s, 3*s + rebootProbeLatency},
		{"the worker still sleeps: its first probe", 7 * s, 3 * s, 0, 10 * s, 7*s + rebootProbeLatency},
		{"an initial delay: ticks after the trigger", 1 * s, 3 * s, 1 * s, 2 * s, 5*s + rebootProbeLatency},
		{"an initial delay shorter than the sleep's remainder", 7 * s, 3 * s, 2 * s, 10 * s, 7*s + rebootProbeLatency},
		{"an initial delay longer than the sleep's remainder", 4 * s, 3 * s, 2 * s, 5 * s, 9*s + rebootProbeLatency},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := rebootFirstProbe(tc.jitter, tc.running, tc.initialDelay, tc.period); got != tc.want {
				t.Errorf("rebootFirstProbe(%v, %v, %v, %v) = %v, want %v", tc.jitter, tc.running, tc.initialDelay, tc.period, got, tc.want)
			}
		})
	}
}
