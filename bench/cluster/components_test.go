package cluster_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/stormbench/stormbench/bench/cluster"
	"github.com/stormbench/stormbench/bench/kubeversion"
)

// fakeBinaries writes an executable file per name into dir.
func fakeBinaries(t *testing.T, dir string, names ...string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

var (
	sharedBins = []string{cluster.BinEtcd, cluster.BinKwok, cluster.BinKwokctl}
	kubeBins   = []string{cluster.BinKubeApiserver, cluster.BinKubeControllerManager, cluster.BinKubeScheduler, cluster.BinKubectl}
)

// TestFindComponentsVersions: the default version's binaries are in the
// bin directory itself, another version's in its subdirectory, the shared
// ones in the bin directory for every version; a version that is not
// built is a VersionNotBuiltError naming the make command that builds it.
func TestFindComponentsVersions(t *testing.T) {
	t.Setenv("STORMBENCH_BIN_DIR", "")
	bin := t.TempDir()
	fakeBinaries(t, bin, append(sharedBins, kubeBins...)...)
	// v1.35.4 is half built: no scheduler, no kubectl.
	fakeBinaries(t, filepath.Join(bin, "v1.35.4"), cluster.BinKubeApiserver, cluster.BinKubeControllerManager)
	fakeBinaries(t, filepath.Join(bin, "v1.37.2"), append(kubeBins, cluster.BinHollowKubelet, cluster.BinFakeCRI, cluster.BinKubelet)...)
	empty := t.TempDir()

	if c, err := cluster.FindComponentsFor(bin, kubeversion.Version{}); err != nil || c.KubeDir() != bin {
		t.Errorf("FindComponentsFor(%s, zero) = %+v, %v; want the default version in it", bin, c, err)
	}
	for _, tc := range []struct {
		name string
		dir  string
		v    kubeversion.Version
		// kubeDir is where the version's binaries are found; "" when
		// FindComponentsFor fails with errHas.
		kubeDir  string
		errHas   []string
		notBuilt bool
	}{
		{name: "default, zero", dir: bin, v: kubeversion.Version{}, kubeDir: bin},
		{name: "default, named", dir: bin, v: kubeversion.V1_36, kubeDir: bin},
		{name: "built", dir: bin, v: kubeversion.V1_37, kubeDir: filepath.Join(bin, "v1.37.2")},
		{name: "not built", dir: bin, v: kubeversion.V1_34, notBuilt: true,
			errHas: []string{"Kubernetes v1.34.4 is not built: " + filepath.Join(bin, "v1.34.4") + " lacks kube-apiserver, kube-controller-manager, kube-scheduler, kubectl", "`make components KUBE_VERSION=v1.34.4`"}},
		{name: "half built", dir: bin, v: kubeversion.V1_35, notBuilt: true,
			errHas: []string{"lacks kube-scheduler, kubectl;", "`make components KUBE_VERSION=v1.35.4`"}},
		{name: "nothing built, another version", dir: empty, v: kubeversion.V1_37, notBuilt: true,
			errHas: []string{"lacks kube-apiserver, kube-controller-manager, kube-scheduler, etcd, kwok, kwokctl, kubectl", "`make components KUBE_VERSION=v1.37.2`"}},
		{name: "nothing built, default", dir: empty, v: kubeversion.Version{},
			errHas: []string{"run `make components` to build them into bin/", "missing kube-apiserver"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := cluster.FindComponentsFor(tc.dir, tc.v)
			if tc.kubeDir != "" {
				if err != nil {
					t.Fatal(err)
				}
				if c.KubeDir() != tc.kubeDir || c.KubeVersion() != tc.v.Or(kubeversion.Default) {
					t.Errorf("KubeDir %s, version %v; want %s, %v", c.KubeDir(), c.KubeVersion(), tc.kubeDir, tc.v.Or(kubeversion.Default))
				}
				for _, b := range kubeBins {
					if got := c.Path(b); got != filepath.Join(tc.kubeDir, b) {
						t.Errorf("Path(%s) = %s, want it in %s", b, got, tc.kubeDir)
					}
				}
				for _, b := range append(sharedBins, cluster.BinPause) {
					if got := c.Path(b); got != filepath.Join(bin, b) {
						t.Errorf("Path(%s) = %s, want the shared one in %s", b, got, bin)
					}
				}
				return
			}
			if err == nil {
				t.Fatalf("FindComponentsFor(%s, %v) found %+v; want an error", tc.dir, tc.v, c)
			}
			if !errors.Is(err, cluster.ErrComponentsMissing) {
				t.Errorf("%v does not wrap ErrComponentsMissing", err)
			}
			if cluster.IsVersionNotBuilt(err) != tc.notBuilt {
				t.Errorf("IsVersionNotBuilt(%v) = %t, want %t", err, !tc.notBuilt, tc.notBuilt)
			}
			for _, s := range tc.errHas {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q lacks %q", err, s)
				}
			}
		})
	}
}

func TestCheckRealNodesVersion(t *testing.T) {
	bin := t.TempDir()
	fakeBinaries(t, filepath.Join(bin, "v1.37.2"), cluster.BinHollowKubelet, cluster.BinFakeCRI)
	if err := (cluster.Components{Dir: bin, Version: kubeversion.V1_37}).CheckRealNodes(); err != nil {
		t.Errorf("built: %v", err)
	}
	err := (cluster.Components{Dir: bin, Version: kubeversion.V1_34}).CheckRealNodes()
	if err == nil || !strings.Contains(err.Error(), "hollow-kubelet and fake-cri in "+filepath.Join(bin, "v1.34.4")) || !strings.Contains(err.Error(), "`make components KUBE_VERSION=v1.34.4`") {
		t.Errorf("not built: %v", err)
	}
	if err := (cluster.Components{Dir: bin}).CheckRealNodes(); err == nil || !strings.Contains(err.Error(), "run `make components` to build them") {
		t.Errorf("default not built: %v", err)
	}
}

// TestEmbeddedConfigVersion: kwokctl gets the version and the version's
// control-plane binaries, and the shared etcd and kwok.
func TestEmbeddedConfigVersion(t *testing.T) {
	for _, tc := range []struct {
		v       kubeversion.Version
		want    string
		kubeDir string
	}{
		{v: kubeversion.Version{}, want: "v1.36.3", kubeDir: "/opt/sb/bin"},
		{v: kubeversion.V1_37, want: "v1.37.2", kubeDir: "/opt/sb/bin/v1.37.2"},
		{v: kubeversion.V1_34, want: "v1.34.4", kubeDir: "/opt/sb/bin/v1.34.4"},
	} {
		e, err := cluster.NewEmbedded(cluster.EmbeddedOptions{Name: "x", WorkDir: t.TempDir(), Components: cluster.Components{Dir: "/opt/sb/bin", Version: tc.v}})
		if err != nil {
			t.Fatal(err)
		}
		if e.KubeVersion().String() != tc.want {
			t.Errorf("KubeVersion = %v, want %s", e.KubeVersion(), tc.want)
		}
		b, err := e.Config()
		if err != nil {
			t.Fatal(err)
		}
		doc, _, _ := strings.Cut(string(b), "\n---\n")
		var cfg struct {
			Options map[string]any `json:"options"`
		}
		if err := yaml.Unmarshal([]byte(doc), &cfg); err != nil {
			t.Fatal(err)
		}
		o := cfg.Options
		want := map[string]string{
			"kubeVersion":                 tc.want,
			"kubeApiserverBinary":         tc.kubeDir + "/kube-apiserver",
			"kubeControllerManagerBinary": tc.kubeDir + "/kube-controller-manager",
			"kubeSchedulerBinary":         tc.kubeDir + "/kube-scheduler",
			"kubectlBinary":               tc.kubeDir + "/kubectl",
			"etcdBinary":                  "/opt/sb/bin/etcd",
			"kwokControllerBinary":        "/opt/sb/bin/kwok",
		}
		for k, w := range want {
			if o[k] != w {
				t.Errorf("%v: options.%s = %v, want %s", tc.v, k, o[k], w)
			}
		}
	}
}
