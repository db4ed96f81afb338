package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stormbench/stormbench/bench/cluster"
	"github.com/stormbench/stormbench/bench/kubeversion"
)

// versionBinDir is a bin directory with the shared and the default
// version's binaries, and the given versions' in their subdirectories
// (the control plane's and the hollow oracle's).
func versionBinDir(t *testing.T, versions ...string) string {
	t.Helper()
	bin := fakeBinDir(t, append(cluster.AllBinaries(), cluster.BinHollowKubelet, cluster.BinFakeCRI)...)
	for _, v := range versions {
		dir := filepath.Join(bin, v)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, b := range []string{cluster.BinKubeApiserver, cluster.BinKubeControllerManager, cluster.BinKubeScheduler, cluster.BinKubectl, cluster.BinHollowKubelet, cluster.BinFakeCRI} {
			if err := os.WriteFile(filepath.Join(dir, b), []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	return bin
}

// TestKubeVersionFlag: --kube-version on run, cluster up and calibrate
// resolves a version ("1.37" is 1.37.2), overrides the profile's, refuses
// an unsupported or malformed one and a version that is not built (exit
// 2, naming the make command), before anything starts.
func TestKubeVersionFlag(t *testing.T) {
	built := versionBinDir(t, "v1.37.2", "v1.35.4")
	profile := filepath.Join(t.TempDir(), "v135.yaml")
	if err := os.WriteFile(profile, []byte(`apiVersion: stormbench.io/v1alpha1
kind: StormProfile
metadata: {name: v135}
kubernetes: {version: "1.35"}
fleet: {nodes: 10, podsPerNode: 5}
storm: {kind: kubelet, select: {count: 2}, downtime: {value: 5s}}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	const supported = "stormbench runs 1.34.4, 1.35.4, 1.36.3 (the default) and 1.37.2"
	for _, tc := range []struct {
		name string
		args []string
		code int
		// want are in stdout or stderr; wantNot in neither.
		want, wantNot []string
	}{
		{"run, default", []string{"run", "--profile", "quick", "--dry-run", "--bin-dir", built}, exitOK,
			[]string{"Plan: 50 nodes × 10 pods (run plan), Kubernetes 1.36.3, kubelet storm"}, []string{"kubernetes:"}},
		{"run, release tag", []string{"run", "--profile", "quick", "--dry-run", "--bin-dir", built, "--kube-version", "v1.37.2"}, exitOK,
			[]string{"Kubernetes 1.37.2, kubelet storm", "kubernetes:\n  version: v1.37.2"}, nil},
		{"run, minor release", []string{"run", "--profile", "quick", "--dry-run", "--bin-dir", built, "--kube-version", "1.37"}, exitOK,
			[]string{"Kubernetes 1.37.2, kubelet storm", "version: v1.37.2"}, nil},
		{"run, profile field", []string{"run", "--profile", profile, "--dry-run", "--bin-dir", built}, exitOK,
			[]string{"Kubernetes 1.35.4, kubelet storm", "version: v1.35.4"}, nil},
		{"run, flag over profile", []string{"run", "--profile", profile, "--dry-run", "--bin-dir", built, "--kube-version", "1.37.2"}, exitOK,
			[]string{"Kubernetes 1.37.2, kubelet storm", "version: v1.37.2"}, []string{"1.35"}},
		{"run, unsupported", []string{"run", "--profile", "quick", "--dry-run", "--bin-dir", built, "--kube-version", "1.33"}, exitUsage,
			[]string{"--kube-version: Kubernetes 1.33 is not supported: " + supported}, nil},
		{"run, unknown patch", []string{"run", "--profile", "quick", "--dry-run", "--bin-dir", built, "--kube-version", "1.37.1"}, exitUsage,
			[]string{"Kubernetes 1.37.1 is not supported", "give 1.37.2 or 1.37"}, nil},
		{"run, malformed", []string{"run", "--profile", "quick", "--dry-run", "--bin-dir", built, "--kube-version", "latest"}, exitUsage,
			[]string{`--kube-version: "latest" is not a Kubernetes version`, supported}, nil},
		{"run, not built", []string{"run", "--profile", "quick", "--bin-dir", built, "--kube-version", "1.34"}, exitUsage,
			[]string{"Kubernetes v1.34.4 is not built: " + filepath.Join(built, "v1.34.4") + " lacks kube-apiserver", "build it with `make components KUBE_VERSION=v1.34.4`"}, []string{"Starting embedded cluster"}},
		{"run, not built, dry run", []string{"run", "--profile", profile, "--dry-run", "--bin-dir", fakeBinDir(t, cluster.AllBinaries()...)}, exitUsage,
			[]string{"`make components KUBE_VERSION=v1.35.4`"}, nil},
		{"run, gate the version lacks", []string{"run", "--profile", "quick", "--dry-run", "--bin-dir", built, "--kube-version", "1.34.4"}, exitUsage,
			[]string{"invalid profile quick with --kube-version 1.34.4", "variants[1].featureGates[ChangeContainerStatusOnKubeletRestart]: Invalid value: false: Kubernetes 1.34.4's kubelet has no such gate"}, nil},
		{"sweep, minor release", []string{"sweep", "--profile", "quick", "--wave-sizes", "5", "--dry-run", "--bin-dir", built, "--kube-version", "1.35"}, exitOK,
			[]string{"Kubernetes 1.35.4, kubelet storm"}, nil},
		{"cluster up, not built", []string{"cluster", "up", "--bin-dir", built, "--kube-version", "1.34"}, exitUsage,
			[]string{"Kubernetes v1.34.4 is not built", "`make components KUBE_VERSION=v1.34.4`"}, []string{"Starting embedded cluster"}},
		{"cluster up, unsupported", []string{"cluster", "up", "--bin-dir", built, "--kube-version", "1.38"}, exitUsage,
			[]string{"--kube-version: Kubernetes 1.38 is not supported"}, []string{"Starting embedded cluster"}},
		{"calibrate, built", []string{"calibrate", "--dry-run", "--cases", "reboot", "--bin-dir", built, "--kube-version", "1.37"}, exitOK,
			[]string{"on Kubernetes 1.37.2"}, nil},
		{"calibrate, default", []string{"calibrate", "--dry-run", "--cases", "reboot", "--bin-dir", built}, exitOK,
			[]string{"on Kubernetes 1.36.3"}, nil},
		{"calibrate, not built", []string{"calibrate", "--dry-run", "--cases", "reboot", "--bin-dir", built, "--kube-version", "v1.34.4"}, exitUsage,
			[]string{"`make components KUBE_VERSION=v1.34.4`"}, nil},
		{"calibrate, malformed", []string{"calibrate", "--dry-run", "--bin-dir", built, "--kube-version", "1.x"}, exitUsage,
			[]string{`"1.x" is not a Kubernetes version`}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			work := t.TempDir()
			args := append(tc.args, "--workdir", work)
			if tc.args[0] == "run" || tc.args[0] == "sweep" {
				args = append(args, "--run-id", "plan", "--output-dir", t.TempDir())
			}
			code, stdout, stderr := runCLI(t, args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, stdout, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stdout+stderr, w) {
					t.Errorf("output lacks %q:\nstdout: %s\nstderr: %s", w, stdout, stderr)
				}
			}
			for _, w := range tc.wantNot {
				if strings.Contains(stdout+stderr, w) {
					t.Errorf("output has %q:\nstdout: %s\nstderr: %s", w, stdout, stderr)
				}
			}
			// Nothing started: no cluster in the work directory.
			if names := cluster.ExistingClusters(work); len(names) > 0 {
				t.Errorf("clusters %v exist after exit %d", names, code)
			}
		})
	}
}

func TestCheckServerVersion(t *testing.T) {
	for _, tc := range []struct {
		v                kubeversion.Version
		reported         string
		embedded, asked  bool
		wantErr, wantHas string
	}{
		{v: kubeversion.V1_37, reported: "v1.37.2", embedded: true},
		{v: kubeversion.V1_37, reported: "v1.36.3", embedded: true, wantErr: "usage", wantHas: "make components KUBE_VERSION=v1.37.2"},
		// On a cluster of its own nothing is checked unless asked, and
		// then only the minor release.
		{v: kubeversion.Default, reported: "v1.33.1"},
		{v: kubeversion.V1_35, reported: "v1.35.0-eks.1", asked: true},
		{v: kubeversion.V1_35, reported: "v1.34.4", asked: true, wantErr: "usage", wantHas: `the cluster runs Kubernetes "v1.34.4", not 1.35`},
	} {
		err := checkServerVersion(tc.v, tc.reported, tc.embedded, tc.asked)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%+v: %v", tc, err)
		case tc.wantErr != "" && (err == nil || !isUsage(err) || !strings.Contains(err.Error(), tc.wantHas)):
			t.Errorf("%+v: %v; want a usage error with %q", tc, err, tc.wantHas)
		}
	}
}
