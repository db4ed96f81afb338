package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stormbench/stormbench/bench/measure/host"
	"github.com/stormbench/stormbench/bench/result"
)

// rewriteFixture writes the A/B fixture changed by edit into dir/name.
func rewriteFixture(t *testing.T, dir, name string, edit func(*result.Result)) string {
	t.Helper()
	return editResult(t, abFixture, filepath.Join(dir, name), edit)
}

// TestGateHostBound: a current result whose legacy storm was host-bound
// fails the gate (exit 1) naming why, and passes the host gate with
// --allow-host-bound.
func TestGateHostBound(t *testing.T) {
	dir := t.TempDir()
	plain, _, _ := runCLI(t, "gate", "--current", abFixture)
	bound := rewriteFixture(t, dir, "bound.json", func(r *result.Result) {
		for i := range r.Variants {
			v := &r.Variants[i]
			sat := 2.0
			if v.Variant == "legacy" {
				sat = 40
			}
			start := v.StormStart
			v.Measurements = append(v.Measurements, result.Measurement{Name: host.Name,
				Windows: []result.Window{{Name: result.WindowStorm, Start: start, End: start.Add(100 * time.Second)}},
				Values: []result.Value{
					{Name: host.SaturatedSeconds, Window: result.WindowStorm, Unit: result.UnitSeconds, Value: sat},
					{Name: host.SaturatedFraction, Window: result.WindowStorm, Unit: result.UnitRatio, Value: sat / 100},
				}})
			v.HostBound = host.Bound(v)
		}
	})
	code, stdout, stderr := runCLI(t, "gate", "--current", bound)
	if code != 1 || !strings.Contains(stdout, "host-bound: #0: the host was at least 90 % busy for 40 s of the 100 s storm window") || !strings.Contains(stderr, "legacy host not saturated") {
		t.Errorf("gate of a host-bound result: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	code, stdout, _ = runCLI(t, "gate", "--current", bound, "--allow-host-bound")
	if code != plain || !strings.Contains(stdout, "allowed by --allow-host-bound") {
		t.Errorf("--allow-host-bound: exit %d, want %d (the fixture's own)\n%s", code, plain, stdout)
	}
}

// TestCompareBudgets: results of different control-plane CPU budgets are
// refused (exit 2) unless --allow-different-budgets.
func TestCompareBudgets(t *testing.T) {
	dir := t.TempDir()
	budget := rewriteFixture(t, dir, "budget.json", func(r *result.Result) { r.Run.Cluster.ControlPlaneCPUs = 1.5 })
	code, _, stderr := runCLI(t, "compare", abFixture, budget)
	if code != 2 || !strings.Contains(stderr, "quick-ab.json has none, budget.json has 1.5 cores") || !strings.Contains(stderr, "--allow-different-budgets") {
		t.Errorf("compare across budgets: exit %d\n%s", code, stderr)
	}
	code, _, stderr = runCLI(t, "compare", abFixture, budget, "--allow-different-budgets")
	if code != 0 || !strings.Contains(stderr, "warning: control-plane CPU budget") {
		t.Errorf("--allow-different-budgets: exit %d\n%s", code, stderr)
	}
}

// TestRunCPUBudgetWithKubeconfig: controlPlane.cpus budgets the embedded
// control plane only; with --kubeconfig it is bad input (exit 2), found
// before anything starts.
func TestRunCPUBudgetWithKubeconfig(t *testing.T) {
	dir := t.TempDir()
	quick, err := os.ReadFile("../../profiles/quick.yaml")
	if err != nil {
		t.Fatal(err)
	}
	prof := filepath.Join(dir, "budget.yaml")
	if err := os.WriteFile(prof, append(quick, []byte("controlPlane:\n  cpus: 1.5\n")...), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "run", "--profile", prof, "--kubeconfig", filepath.Join(dir, "none.kubeconfig"), "--dry-run")
	if code != 2 || !strings.Contains(stderr, "controlPlane.cpus 1.5 budgets the embedded control plane: not with --kubeconfig") {
		t.Errorf("exit %d\n%s", code, stderr)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, append(quick, []byte("controlPlane:\n  cpus: 0.05\n")...), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCLI(t, "run", "--profile", bad, "--dry-run")
	if code != 2 || !strings.Contains(stderr, "controlPlane.cpus") || !strings.Contains(stderr, "between 0.1 and 1024") {
		t.Errorf("cpus 0.05: exit %d\n%s", code, stderr)
	}
}
