package cluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/stormbench/stormbench/bench/kubeversion"
)

// Component binaries that `make components` builds.
const (
	BinKubeApiserver         = "kube-apiserver"
	BinKubeControllerManager = "kube-controller-manager"
	BinKubeScheduler         = "kube-scheduler"
	BinEtcd                  = "etcd"
	BinKwok                  = "kwok"
	BinKwokctl               = "kwokctl"
	BinKubectl               = "kubectl"
	// BinHollowKubelet is the real kubelet code of the version with
	// kubemark's stub container manager and fake cAdvisor
	// (scripts/components/cmd/hollow-kubelet).
	BinHollowKubelet = "hollow-kubelet"
	// BinFakeCRI is a fake CRI runtime that persists its containers across
	// its own restarts (scripts/components/cmd/fake-cri).
	BinFakeCRI = "fake-cri"
	// BinKubelet is the version's kubelet itself
	// (k8s.io/kubernetes/cmd/kubelet), for containerd-backed real nodes.
	BinKubelet = "kubelet"
	// BinPause is the multi-call binary the containerd nodes' image is
	// built from (cmd/stormbench-pause).
	BinPause = "stormbench-pause"
)

// RealNodesDir is the directory, inside an embedded cluster's own, where
// real kubelet nodes keep their files and pid files.
const RealNodesDir = "realnodes"

// RealNodeBinaries lists what real (hollow) kubelet nodes need beside the
// control plane.
var RealNodeBinaries = []string{BinHollowKubelet, BinFakeCRI}

// CheckRealNodes reports whether the real-node binaries are in the
// version's directory, with an error naming the make command that builds
// them when one is missing.
func (c Components) CheckRealNodes() error {
	if missing := c.missing(RealNodeBinaries...); len(missing) > 0 {
		return fmt.Errorf("real kubelet nodes need %s in %s: run `%s` to build them", strings.Join(missing, " and "), c.KubeDir(), c.KubeVersion().MakeTarget())
	}
	return nil
}

// AllBinaries lists every binary the embedded cluster needs.
func AllBinaries() []string {
	return []string{BinKubeApiserver, BinKubeControllerManager, BinKubeScheduler, BinEtcd, BinKwok, BinKwokctl, BinKubectl}
}

// versioned holds the binaries built once per Kubernetes version (`make
// components KUBE_VERSION=...`); the others (etcd, kwok, kwokctl,
// stormbench-pause) are shared by every version.
var versioned = map[string]bool{
	BinKubeApiserver: true, BinKubeControllerManager: true, BinKubeScheduler: true, BinKubectl: true,
	BinKubelet: true, BinHollowKubelet: true, BinFakeCRI: true,
}

// ErrComponentsMissing is returned when bin/ lacks a component binary.
var ErrComponentsMissing = errors.New("control-plane components are missing: run `make components` to build them into bin/")

// VersionNotBuiltError is a Kubernetes version other than the default
// whose control-plane binaries are not in its directory (bin/v1.37.2/):
// bad input, which its make command fixes. It wraps ErrComponentsMissing.
type VersionNotBuiltError struct {
	// Version is the version asked for.
	Version kubeversion.Version
	// Dir is the directory its binaries were looked for in.
	Dir string
	// Missing lists the binaries not there.
	Missing []string
}

func (e *VersionNotBuiltError) Error() string {
	return fmt.Sprintf("Kubernetes %s is not built: %s lacks %s; build it with `%s`", e.Version, e.Dir, strings.Join(e.Missing, ", "), e.Version.MakeTarget())
}

func (e *VersionNotBuiltError) Unwrap() error { return ErrComponentsMissing }

// IsVersionNotBuilt reports whether err is, or wraps, a VersionNotBuiltError.
func IsVersionNotBuilt(err error) bool {
	var nb *VersionNotBuiltError
	return errors.As(err, &nb)
}

// Components locates the component binaries of one Kubernetes version.
type Components struct {
	// Dir is the directory `make components` builds into (bin/): the
	// shared binaries, and the default version's.
	Dir string
	// Version is the Kubernetes version whose binaries Path gives; zero
	// for the default. Another version's are in Dir/VERSION (bin/v1.37.2/).
	Version kubeversion.Version
}

// KubeVersion is the components' Kubernetes version.
func (c Components) KubeVersion() kubeversion.Version { return c.Version.Or(kubeversion.Default) }

// KubeDir is the directory of the version's binaries: Dir for the
// default version, Dir/VERSION for another.
func (c Components) KubeDir() string {
	if c.KubeVersion().IsDefault() {
		return c.Dir
	}
	return filepath.Join(c.Dir, c.KubeVersion().String())
}

// Path returns the absolute path of a binary: the version's own, or a
// shared one.
func (c Components) Path(name string) string {
	if versioned[name] {
		return filepath.Join(c.KubeDir(), name)
	}
	return filepath.Join(c.Dir, name)
}

// missing lists the binaries of bins c lacks.
func (c Components) missing(bins ...string) []string {
	var out []string
	for _, b := range bins {
		if !executable(c.Path(b)) {
			out = append(out, b)
		}
	}
	return out
}

// executable reports whether path is an executable file.
func executable(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// FindComponentsFor looks for the binaries of Kubernetes version v (zero:
// the default) in dir, or when dir is empty in $STORMBENCH_BIN_DIR, ./bin and
// the bin/ of every parent directory, and next to the running executable:
// the shared ones in the directory, the version's in the directory itself
// (the default) or in its subdirectory VERSION. It returns an error
// wrapping ErrComponentsMissing that names what is missing and where it
// looked; for a version other than the default, a *VersionNotBuiltError
// naming the make command that builds it.
func FindComponentsFor(dir string, v kubeversion.Version) (Components, error) {
	var candidates []string
	if dir != "" {
		candidates = []string{dir}
	} else {
		if env := os.Getenv("STORMBENCH_BIN_DIR"); env != "" {
			candidates = append(candidates, env)
		}
		if wd, err := os.Getwd(); err == nil {
			for d := wd; ; d = filepath.Dir(d) {
				candidates = append(candidates, filepath.Join(d, "bin"))
				if filepath.Dir(d) == d {
					break
				}
			}
		}
		if exe, err := os.Executable(); err == nil {
			candidates = append(candidates, filepath.Dir(exe))
		}
	}
	var first Components
	var firstMissing []string
	for i, d := range candidates {
		abs, err := filepath.Abs(d)
		if err != nil {
			continue
		}
		c := Components{Dir: abs, Version: v}
		missing := c.missing(AllBinaries()...)
		if len(missing) == 0 {
			return c, nil
		}
		if i == 0 {
			first, firstMissing = c, missing
		}
	}
	where := strings.Join(candidates, ", ")
	if len(candidates) > 3 {
		where = strings.Join(candidates[:3], ", ") + ", ..."
	}
	if !v.IsDefault() && first.Dir != "" {
		return Components{}, &VersionNotBuiltError{Version: v, Dir: first.KubeDir(), Missing: firstMissing}
	}
	return Components{}, fmt.Errorf("%w (missing %s; looked in %s; or pass --bin-dir)", ErrComponentsMissing, strings.Join(firstMissing, ", "), where)
}
