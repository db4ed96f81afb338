package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stormbench/stormbench/bench/measure"
	"github.com/stormbench/stormbench/bench/measure/apiserver"
	"github.com/stormbench/stormbench/bench/measure/host"
	"github.com/stormbench/stormbench/bench/measure/self"
	"github.com/stormbench/stormbench/bench/result"
)

// TestRunInterleavedRepetitions runs quick (on a tenth of its fleet and a
// short storm, see quickSmall) with 2 repetitions on the run's
// own embedded cluster (a restore replaces its etcd, so it cannot
// share one): the storms run in the blocks of the seed, each block a
// permutation of the variants, every storm after a restore of the fleet
// saved after provisioning, and the summary shows medians with n = 2 and
// says the runs are too few for an interval; every storm carries the host
// figures (the machine's CPU).
// It asserts the run's order, isolation and that the host was measured,
// not what was measured. Run beside TestFleetSnapshotRoundTrip (t.Parallel)
// the two took 814 s against about 825 s one after the other: their
// clusters' starts and restores wait on each other (cluster.lockPorts), so
// they run one after the other.
func TestRunInterleavedRepetitions(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	wd := t.TempDir()
	out, _, res := runEmbedded(t, wd, quickSmall(t, wd), "reps", "--repetitions", "2")
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
		checkHostFigures(t, v)
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
	for _, w := range []string{"legacy (n=2)", "preserve (n=2)", "too few runs", "isolated: the fleet snapshot was restored before every storm", "order: 2 blocks", "host CPU busy p50 / max; saturated seconds"} {
		if !strings.Contains(out, w) {
			t.Errorf("summary lacks %q", w)
		}
	}
}

// quickSmall writes quick's profile with a tenth of its fleet (10 nodes ×
// 3 pods), its storm of 20 % in one wave with 1 s of downtime, a 10 s node
// lease, a 2 s baseline and a settle of two 2 s windows after each restore,
// and returns the file. The test judges the order, the restores and the
// host figures, not the figures' size: quick's 500 pods and four 10 s
// windows after each of four restores took about 500 s of the test's time,
// and its two waves of 3 to 8 s downtime on a 40 s lease about 40 s a
// storm; this storm takes about 20 s, most of it the model's wait before it
// hands a node back to KWOK (kubelet kwokRequeueAfter: the lease's renew
// interval and 16 s).
func quickSmall(t *testing.T, dir string) string {
	t.Helper()
	return smallProfile(t, dir, "quick")
}

// smallProfile writes the built-in profile name (quick's fleet, storm and
// windows) shrunk as quickSmall says, named name-small, and returns the
// file.
func smallProfile(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "profiles", name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, r := range []struct{ old, new string }{
		{"name: " + name + "\n", "name: " + name + "-small\n"},
		{"  nodeLeaseDurationSeconds: 40\n", "  nodeLeaseDurationSeconds: 10\n"},
		{"  nodes: 50\n  podsPerNode: 10\n", "  nodes: 10\n  podsPerNode: 3\n"},
		// A short baseline: the test checks the interleaving, not the excess.
		{"    baseline: 60s\n", "    baseline: 2s\n    restoreSettle: {window: 2s, windows: 2}\n"},
		{"    size: \"50%\"\n", "    size: \"100%\"\n"},
		{"    type: uniform\n    min: 3s\n    max: 8s\n", "    type: fixed\n    value: 1s\n"},
	} {
		if !strings.Contains(s, r.old) {
			t.Fatalf("profiles/%s.yaml has no %q to replace", name, r.old)
		}
		s = strings.Replace(s, r.old, r.new, 1)
	}
	path := filepath.Join(dir, name+"-small.yaml")
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// checkHostFigures fails the test unless the variant run's storm window has
// its host figures: the machine's CPUs and samples, its busy CPU time within
// its capacity, and a hostBound flag that agrees with them; and the CPU of
// stormbench (storm) and of the embedded API server (apiserver).
func checkHostFigures(t *testing.T, v result.VariantRun) {
	t.Helper()
	if v.Measurement(host.Name) == nil {
		t.Errorf("%s#%d: no %q measurement", v.Variant, v.Repetition, host.Name)
		return
	}
	get := func(meas, name, window string, labels ...string) float64 {
		x, ok := v.Measurement(meas).Value(name, window, labels...)
		if !ok {
			t.Errorf("%s#%d: %s figure %s (%s %v) missing", v.Variant, v.Repetition, meas, name, window, labels)
		}
		return x
	}
	cpus := get(host.Name, host.CPUs, "")
	samples := get(host.Name, host.Samples, result.WindowStorm)
	capacity := get(host.Name, host.CoreSeconds, result.WindowStorm)
	busy := get(host.Name, host.BusyCoreSeconds, result.WindowStorm)
	sb := get(self.Name, self.CPUSeconds, result.WindowStorm)
	api := get(apiserver.Name, apiserver.CPUSeconds, result.WindowStorm, result.LabelComponent, measure.ComponentAPIServer)
	if cpus < 1 || samples < 1 || capacity <= 0 || busy <= 0 || busy > capacity*1.01 || sb <= 0 || api <= 0 {
		t.Errorf("%s#%d: host figures cpus %v, samples %v, busy %v of %v core-s, stormbench %v s, kube-apiserver %v s; want each above 0 and busy within capacity",
			v.Variant, v.Repetition, cpus, samples, busy, capacity, sb, api)
	}
	if v.HostBound != host.Bound(&v) {
		t.Errorf("%s#%d: hostBound %t, but the host figures say %t", v.Variant, v.Repetition, v.HostBound, host.Bound(&v))
	}
}
