package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stormbench/stormbench/bench/cluster"
	"github.com/stormbench/stormbench/bench/kubeversion"
	"github.com/stormbench/stormbench/bench/result"
)

// TestRunUpgradeNotBuilt: a variant of a Kubernetes version whose
// components are not built stops the run before anything starts (exit 2),
// naming the variant and the make command that builds them.
func TestRunUpgradeNotBuilt(t *testing.T) {
	bin := t.TempDir()
	for _, b := range cluster.AllBinaries() {
		if err := os.WriteFile(filepath.Join(bin, b), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	code, _, errOut := runCLI(t, "run", "--profile", "upgrade", "--bin-dir", bin, "--dry-run", "--workdir", t.TempDir())
	want := "variant 1.37.2: Kubernetes v1.37.2 is not built: " + filepath.Join(bin, "v1.37.2") + " lacks kube-apiserver, kube-controller-manager, kube-scheduler, kubectl; build it with `make components KUBE_VERSION=v1.37.2`"
	if code != exitUsage || !strings.Contains(errOut, want) {
		t.Fatalf("exit %d, stderr:\n%s\nwant exit %d naming %q", code, errOut, exitUsage, want)
	}
	code, _, errOut = runCLI(t, "run", "--profile", "upgrade", "--bin-dir", bin, "--no-restore", "--dry-run", "--workdir", t.TempDir())
	if code != exitUsage || !strings.Contains(errOut, "each restored into its own control plane: not with --no-restore or --shard") {
		t.Errorf("--no-restore: exit %d, stderr:\n%s", code, errOut)
	}
}

// TestRunUpgrade runs the upgrade profile (on a tenth of its fleet, one
// storm a variant, see smallProfile) on its own embedded cluster: the
// fleet provisioned on 1.36.3, restored before each storm into the control
// plane of the variant's version, the storm of 1.37.2 recorded with its
// version, and the summary naming both. It needs v1.37.2's components
// (`make components KUBE_VERSION=v1.37.2`), which CI does not build: it
// skips without them, saying so.
func TestRunUpgrade(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	if _, err := cluster.FindComponentsFor("", kubeversion.V1_37); err != nil {
		t.Skipf("needs Kubernetes v1.37.2's components: %v", err)
	}
	wd := t.TempDir()
	out, errOut, res := runEmbedded(t, wd, smallProfile(t, wd, "upgrade"), "up", "--repetitions", "1")
	if res.Run.Isolation != result.IsolationRestored || res.Run.Cluster.KubernetesVersion != "v1.36.3" {
		t.Errorf("isolation %q, cluster %s; want %q, v1.36.3", res.Run.Isolation, res.Run.Cluster.KubernetesVersion, result.IsolationRestored)
	}
	got := map[string]string{}
	for _, v := range res.Variants {
		got[v.Variant] = v.KubernetesVersion
		if v.ResetSeconds <= 0 || !v.Complete {
			t.Errorf("%s: restore took %gs, complete %t; want a restore before every storm", v.Variant, v.ResetSeconds, v.Complete)
		}
	}
	if len(got) != 2 || got["1.36.3"] != "" || got["1.37.2"] != "v1.37.2" {
		t.Errorf("variants' versions %v; want 1.36.3 the run's and 1.37.2 of its own", got)
	}
	for _, w := range []string{"Restoring the fleet before variant 1.37.2 (repetition 0) into Kubernetes 1.37.2", "Kubernetes 1.37.2, gates"} {
		if !strings.Contains(errOut, w) {
			t.Errorf("progress lacks %q", w)
		}
	}
	if !strings.Contains(out, "1.37.2 vs 1.36.3: API excess requests per restart") {
		t.Errorf("summary does not lead with 1.37.2 vs 1.36.3:\n%s", out)
	}
}
