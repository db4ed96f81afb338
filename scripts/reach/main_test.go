package main

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/stormbench/stormbench/bench/measure/host"
	"github.com/stormbench/stormbench/bench/result"
	"github.com/stormbench/stormbench/profiles"
	"github.com/stormbench/stormbench/scripts/reach/reachfile"
)

// TestSearch: the sizes tried for a machine whose limit is known, and the
// answer read from them.
func TestSearch(t *testing.T) {
	for _, tc := range []struct {
		name            string
		limit           int // the largest size that passes; 0: none
		lo, hi          int
		resolution      float64
		tried           []int
		largest, failed int
	}{
		{"limit between doublings", 1000, 300, 5000, 0.1, []int{300, 600, 1200, 900, 1050, 975}, 975, 1050},
		{"max passes", 9999, 300, 5000, 0.1, []int{300, 600, 1200, 2400, 4800, 5000}, 5000, 0},
		{"min fails", 100, 300, 5000, 0.1, []int{300}, 0, 300},
		{"limit at a doubling", 600, 300, 5000, 0.25, []int{300, 600, 1200, 900, 750}, 600, 750},
		{"one node apart", 3, 2, 10, 0.1, []int{2, 4, 3}, 3, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var tried []int
			trials, err := search(context.Background(), func(_ context.Context, n int) (reachfile.Trial, error) {
				tried = append(tried, n)
				return reachfile.Trial{Nodes: n, Passed: n <= tc.limit}, nil
			}, tc.lo, tc.hi, tc.resolution)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(tried, tc.tried) {
				t.Errorf("tried %v, want %v", tried, tc.tried)
			}
			if l, f := answer(trials); l != tc.largest || f != tc.failed {
				t.Errorf("answer %d (failed %d), want %d (failed %d)", l, f, tc.largest, tc.failed)
			}
		})
	}
}

// TestSearchStopsOnError: a run that could not start ends the search with
// the trials so far.
func TestSearchStopsOnError(t *testing.T) {
	refused := errors.New("refused")
	trials, err := search(context.Background(), func(_ context.Context, n int) (reachfile.Trial, error) {
		if n > 600 {
			return reachfile.Trial{}, refused
		}
		return reachfile.Trial{Nodes: n, Passed: true}, nil
	}, 300, 5000, 0.1)
	if !errors.Is(err, refused) || len(trials) != 2 {
		t.Fatalf("err %v, %d trials; want refused after 2", err, len(trials))
	}
}

// TestJudge: a size passes only when the run exited 0 and every storm
// completed, without errors and not host-bound.
func TestJudge(t *testing.T) {
	storm := func(mut func(*result.VariantRun)) result.VariantRun {
		v := result.VariantRun{Variant: "legacy", Complete: true, Measurements: []result.Measurement{{
			Name:   host.Name,
			Values: []result.Value{{Name: host.SaturatedFraction, Window: result.WindowStorm, Value: 0.04}},
		}}}
		if mut != nil {
			mut(&v)
		}
		return v
	}
	for _, tc := range []struct {
		name    string
		res     result.Result
		exitErr error
		passed  bool
		why     string
	}{
		{"passes", result.Result{Complete: true, Variants: []result.VariantRun{storm(nil)}}, nil, true, ""},
		{"host-bound", result.Result{Complete: true, Variants: []result.VariantRun{storm(func(v *result.VariantRun) { v.HostBound = true })}}, nil, false, "legacy: host-bound"},
		{"incomplete storm", result.Result{Variants: []result.VariantRun{storm(func(v *result.VariantRun) { v.Complete = false })}}, nil, false, "legacy: storm incomplete"},
		{"incomplete and host-bound", result.Result{Variants: []result.VariantRun{storm(func(v *result.VariantRun) { v.Complete, v.HostBound = false, true })}}, nil, false, "legacy: storm incomplete; legacy: host-bound"},
		{"storm error", result.Result{Complete: true, Variants: []result.VariantRun{storm(func(v *result.VariantRun) { v.Errors = []string{"recovery timed out"} })}}, nil, false, "recovery timed out"},
		{"exit 3", result.Result{Variants: []result.VariantRun{storm(nil)}}, errors.New("exit status 3"), false, "run: exit status 3"},
		{"no storm", result.Result{Complete: true}, nil, false, "no storm ran"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := reachfile.Trial{Nodes: 300}
			judge(&tr, &tc.res, tc.exitErr)
			if tr.Passed != tc.passed || !strings.Contains(tr.Why, tc.why) {
				t.Errorf("passed %v (%q), want %v (%q)", tr.Passed, tr.Why, tc.passed, tc.why)
			}
			if tr.HostSaturated != 0.04 && len(tc.res.Variants) > 0 {
				t.Errorf("host saturated %v, want 0.04", tr.HostSaturated)
			}
		})
	}
}

// TestReachProfile: the profile reach scales by default loads, is the 300-node host
// shape with a control-plane budget, and a size set by the search survives
// Marshal as the trial's profile file.
func TestReachProfile(t *testing.T) {
	p, err := profiles.Load("../../results/host/host-300-budget.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if p.Fleet.Nodes != 300 || p.Fleet.PodsPerNode != 10 || p.ControlPlane.CPUs == 0 {
		t.Fatalf("fleet %d × %d, control plane %v cpus; want 300 × 10 with a budget", p.Fleet.Nodes, p.Fleet.PodsPerNode, p.ControlPlane.CPUs)
	}
	p.Fleet.Nodes = 1200
	doc, err := profiles.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	back, err := profiles.Parse("reach-1200.yaml", doc)
	if err != nil {
		t.Fatal(err)
	}
	if back.Fleet.Nodes != 1200 || back.Storm.Waves.Size != p.Storm.Waves.Size {
		t.Fatalf("round trip: %d nodes, waves %v; want 1200, %v", back.Fleet.Nodes, back.Storm.Waves.Size, p.Storm.Waves.Size)
	}
}
