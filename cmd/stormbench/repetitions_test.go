package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stormbench/stormbench/bench/result"
)

// TestRunInterleavedRepetitions runs quick with 2 repetitions on the run's
// own embedded cluster (a restore replaces its etcd, so it cannot share
// one): the storms run in the blocks of the seed, each block a permutation
// of the variants, every storm after a restore of the fleet saved after
// provisioning, and the summary shows medians with n = 2 and says the runs
// are too few for an interval.
func TestRunInterleavedRepetitions(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	wd := t.TempDir()
	path := filepath.Join(wd, "reps.json")
	t.Cleanup(func() { runCLI(t, "cluster", "down", "--name", "sb-reps", "--workdir", wd) })
	code, out, errOut := runCLI(t, "run", "--workdir", wd, "--profile", "quick", "--run-id", "reps", "--repetitions", "2", "--result", path)
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
