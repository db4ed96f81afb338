package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stormbench/stormbench/bench/cluster"
	"github.com/stormbench/stormbench/bench/cluster/clustertest"
	"github.com/stormbench/stormbench/bench/fleet"
	"github.com/stormbench/stormbench/bench/result"
)

const snapshotProfile = `
apiVersion: stormbench.io/v1alpha1
kind: StormProfile
metadata: {name: snap}
fleet: {nodes: %d, podsPerNode: 3}
# Two windows of 4 s after each restore, not the default four of 10 s: the
# test judges what was restored and the order of storms, not a baseline.
measurements:
  apiserver: {interval: 1s, baseline: 5s, restoreSettle: {window: 4s, windows: 2}}
  recovery: {}
`

// TestFleetSnapshotRoundTrip saves a provisioned fleet, restores it into a
// fresh embedded cluster and checks that the same nodes and pods are there
// and Ready; a snapshot of another fleet, or no snapshot at all, is refused
// before anything starts.
func TestFleetSnapshotRoundTrip(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	// The CLI starts these clusters itself: none of the package's shared
	// one beside them.
	clustertest.StopShared()
	wd := t.TempDir()
	for _, name := range []string{"snapa", "snapb", "sb-snap"} {
		t.Cleanup(func() { runCLI(t, "cluster", "down", "--name", name, "--workdir", wd) })
	}
	prof := filepath.Join(wd, "snap.yaml")
	other := filepath.Join(wd, "other.yaml")
	if err := os.WriteFile(prof, []byte(strings.Replace(snapshotProfile, "%d", "5", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(other, []byte(strings.Replace(snapshotProfile, "%d", "6", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	must := func(args ...string) string {
		t.Helper()
		code, out, errOut := runCLI(t, args...)
		if code != 0 {
			t.Fatalf("stormbench %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
		}
		return out
	}
	must("cluster", "up", "--name", "snapa", "--workdir", wd)
	must("fleet", "up", "--name", "snapa", "--workdir", wd, "--profile", prof, "--run-id", "snap")
	file := filepath.Join(wd, "fleet.snap")
	out := must("fleet", "snapshot", "save", "--name", "snapa", "--workdir", wd, "--profile", prof, "--run-id", "snap", "--file", file)
	t.Log(strings.TrimSpace(out))
	names := func(name string) ([]string, int) {
		t.Helper()
		emb, err := cluster.NewEmbedded(cluster.EmbeddedOptions{Name: name, WorkDir: wd})
		if err != nil {
			t.Fatal(err)
		}
		tg, err := cluster.Connect(context.Background(), cluster.ConnectOptions{Kubeconfig: emb.ClientKubeconfig()})
		if err != nil {
			t.Fatal(err)
		}
		sel := metav1.ListOptions{LabelSelector: fleet.RunLabel + "=snap"}
		nodes, err := tg.Client.CoreV1().Nodes().List(context.Background(), sel)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, n := range nodes.Items {
			out = append(out, n.Name)
		}
		slices.Sort(out)
		pods, err := tg.Client.CoreV1().Pods(metav1.NamespaceAll).List(context.Background(), sel)
		if err != nil {
			t.Fatal(err)
		}
		ready := 0
		for _, p := range pods.Items {
			for _, c := range p.Status.Conditions {
				if c.Type == "Ready" && c.Status == "True" {
					ready++
				}
			}
		}
		return out, ready
	}
	wantNodes, wantReady := names("snapa")
	// 3 pods per node, rounded up per workload of the mix.
	if len(wantNodes) != 5 || wantReady < 15 {
		t.Fatalf("source fleet: nodes %v, %d pods Ready; want 5 and at least 15", wantNodes, wantReady)
	}

	// Refusals: each before any cluster starts, exit 2.
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"exists", []string{"fleet", "snapshot", "save", "--name", "snapa", "--workdir", wd, "--profile", prof, "--run-id", "snap", "--file", file}, "exists"},
		{"other fleet", []string{"fleet", "snapshot", "restore", "--name", "snapb", "--workdir", wd, "--profile", other, "--file", file}, "fleet"},
		{"not a snapshot", []string{"fleet", "snapshot", "restore", "--name", "snapb", "--workdir", wd, "--profile", prof, "--file", prof}, "not a stormbench fleet snapshot"},
		{"run from another fleet", []string{"run", "--name", "snapb", "--workdir", wd, "--profile", other, "--from-snapshot", file}, "fleet"},
		{"no file", []string{"fleet", "snapshot", "restore", "--name", "snapb", "--workdir", wd, "--profile", prof}, "--file is required"},
		{"restore each without a snapshot", []string{"run", "--workdir", wd, "--profile", prof, "--restore-each"}, "--restore-each restores the --from-snapshot fleet"},
	} {
		code, _, errOut := runCLI(t, tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want 2 and %q", tc.name, code, errOut, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(wd, "clusters", "snapb")); err == nil {
		t.Error("a refused restore started the cluster")
	}

	out = must("fleet", "snapshot", "restore", "--name", "snapb", "--workdir", wd, "--profile", prof, "--file", file)
	t.Log(strings.TrimSpace(out))
	gotNodes, gotReady := names("snapb")
	if !slices.Equal(gotNodes, wantNodes) || gotReady != wantReady {
		t.Errorf("restored fleet: nodes %v, %d pods Ready; want %v and %d", gotNodes, gotReady, wantNodes, wantReady)
	}

	// run --restore-each: two variants from the same snapshot, the second
	// after restoring it again into the run's cluster.
	stormProf := filepath.Join(wd, "storm.yaml")
	if err := os.WriteFile(stormProf, []byte(strings.Replace(snapshotProfile, "%d", "5", 1)+snapshotStorm), 0o600); err != nil {
		t.Fatal(err)
	}
	resPath := filepath.Join(wd, "each.json")
	out = must("run", "--workdir", wd, "--profile", stormProf, "--from-snapshot", file, "--restore-each", "--result", resPath)
	t.Log(out)
	res, err := result.ReadFile(resPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Variants) != 2 {
		t.Fatalf("run --restore-each: %d variants in the result, want 2", len(res.Variants))
	}
	if first, second := res.Variants[0], res.Variants[1]; first.ResetSeconds != 0 || second.ResetSeconds <= 0 || !first.Complete || !second.Complete {
		t.Errorf("run --restore-each: reset %gs and %gs, complete %t and %t; want none before the first variant, a restore before the second, both complete",
			first.ResetSeconds, second.ResetSeconds, first.Complete, second.Complete)
	}
	if !strings.Contains(out, "isolated: the fleet snapshot was restored before every storm") {
		t.Errorf("run --restore-each: the summary does not say the second variant started from a restore:\n%s", out)
	}
}

// snapshotStorm is a storm over the snapshot profile's fleet, two variants.
const snapshotStorm = `
storm:
  kind: kubelet
  select: {count: 1}
  downtime: {type: fixed, value: 3s}
variants:
- name: legacy
  featureGates: {ChangeContainerStatusOnKubeletRestart: true}
- name: preserve
  featureGates: {ChangeContainerStatusOnKubeletRestart: false}
`
