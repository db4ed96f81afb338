package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stormbench/stormbench/bench/result"
)

// repsProfile is quick's two variants on a fleet of 10 nodes × 4 pods, half
// of them restarted at once for 2 s: the storms are short, and the run's
// time is the five restores (about a minute each, most of it the settle
// wait of the restored API server).
const repsProfile = `
apiVersion: stormbench.io/v1alpha1
kind: StormProfile
metadata: {name: reps}
seed: 42
fleet: {nodes: 10, podsPerNode: 4}
storm:
  kind: kubelet
  select: {fraction: 0.5}
  downtime: {type: fixed, value: 2s}
variants:
- name: legacy
  featureGates: {ChangeContainerStatusOnKubeletRestart: true}
- name: preserve
  featureGates: {ChangeContainerStatusOnKubeletRestart: false}
measurements:
  apiserver: {interval: 1s, baseline: 5s}
  endpointSlices: {}
  recovery: {}
`

// TestRunInterleavedRepetitions runs two variants with 2 repetitions on the
// run's own embedded cluster (a restore replaces its etcd, so it cannot
// share one): the storms run in the blocks of the seed, each block a
// permutation of the variants, every storm after a restore of the fleet
// saved after provisioning, and the summary shows medians with n = 2 and
// says the runs are too few for an interval. It asserts the run's order
// and isolation, not its figures, so it runs beside the package's other
// parallel tests: most of its time is waiting for restores to settle.
func TestRunInterleavedRepetitions(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	t.Parallel()
	wd := t.TempDir()
	path := filepath.Join(wd, "reps.json")
	prof := filepath.Join(wd, "reps.yaml")
	if err := os.WriteFile(prof, []byte(repsProfile), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { runCLI(t, "cluster", "down", "--name", "sb-reps", "--workdir", wd) })
	code, out, errOut := runCLI(t, "run", "--workdir", wd, "--profile", prof, "--run-id", "reps", "--repetitions", "2", "--result", path)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s%s", code, out, errOut)
	}
	t.Log(out)
	res, err := result.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if res.Run.Isolation != result.IsolationRestored {
		t.Errorf("isolation %q, want %q", res.Run.Isolation, result.IsolationRestored)
	}
	if len(res.Run.Order) != 2 {
		t.Fatalf("order %v: want 2 blocks", res.Run.Order)
	}
	var ran []string
	for _, v := range res.Variants {
		ran = append(ran, v.Variant)
		if v.ResetSeconds <= 0 || !v.Complete {
			t.Errorf("%s#%d: restore took %gs, complete %t; want a restore before every storm", v.Variant, v.Repetition, v.ResetSeconds, v.Complete)
		}
	}
	var want []string
	for b, block := range res.Run.Order {
		if got := slices.Sorted(slices.Values(block)); !slices.Equal(got, []string{"legacy", "preserve"}) {
			t.Errorf("block %d = %v, want both variants once", b, block)
		}
		want = append(want, block...)
	}
	if !slices.Equal(ran, want) {
		t.Errorf("storms ran as %v, the recorded order is %v", ran, want)
	}
	for _, w := range []string{"legacy (n=2)", "preserve (n=2)", "too few runs", "isolated: the fleet snapshot was restored before every storm", "order: 2 blocks"} {
		if !strings.Contains(out, w) {
			t.Errorf("summary lacks %q", w)
		}
	}
}
