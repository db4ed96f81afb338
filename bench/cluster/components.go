package cluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
	// BinHollowKubelet is the real v1.36.3 kubelet code with kubemark's stub
	// container manager and fake cAdvisor (scripts/components/cmd/hollow-kubelet).
	BinHollowKubelet = "hollow-kubelet"
	// BinFakeCRI is a fake CRI runtime that persists its containers across
	// its own restarts (scripts/components/cmd/fake-cri).
	BinFakeCRI = "fake-cri"
	// BinKubelet is the v1.36.3 kubelet itself (k8s.io/kubernetes/cmd/kubelet),
	// for containerd-backed real nodes.
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

// CheckRealNodes reports whether the real-node binaries are in c.Dir, with
// an error naming `make components` when one is missing.
func (c Components) CheckRealNodes() error {
	var missing []string
	for _, b := range RealNodeBinaries {
		if st, err := os.Stat(c.Path(b)); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			missing = append(missing, b)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("real kubelet nodes need %s in %s: run `make components` to build them", strings.Join(missing, " and "), c.Dir)
	}
	return nil
}

// AllBinaries lists every binary the embedded cluster needs.
var AllBinaries = []string{BinKubeApiserver, BinKubeControllerManager, BinKubeScheduler, BinEtcd, BinKwok, BinKwokctl, BinKubectl}

// ErrComponentsMissing is returned when bin/ lacks a component binary.
var ErrComponentsMissing = errors.New("control-plane components are missing: run `make components` to build them into bin/")

// Components locates the component binaries.
type Components struct {
	// Dir is the directory holding the binaries.
	Dir string
}

// Path returns the absolute path of a binary.
func (c Components) Path(name string) string { return filepath.Join(c.Dir, name) }

// FindComponents looks for the binaries in dir, or when dir is empty in
// $STORMBENCH_BIN_DIR, ./bin and the bin/ of every parent directory, and next
// to the running executable. It returns an error wrapping
// ErrComponentsMissing that names what is missing and where it looked.
func FindComponents(dir string) (Components, error) {
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
	var firstMissing []string
	for i, d := range candidates {
		abs, err := filepath.Abs(d)
		if err != nil {
			continue
		}
		var missing []string
		for _, b := range AllBinaries {
			if st, err := os.Stat(filepath.Join(abs, b)); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
				missing = append(missing, b)
			}
		}
		if len(missing) == 0 {
			return Components{Dir: abs}, nil
		}
		if i == 0 {
			firstMissing = missing
		}
	}
	where := strings.Join(candidates, ", ")
	if len(candidates) > 3 {
		where = strings.Join(candidates[:3], ", ") + ", ..."
	}
	return Components{}, fmt.Errorf("%w (missing %s; looked in %s; or pass --bin-dir)", ErrComponentsMissing, strings.Join(firstMissing, ", "), where)
}
