package realnode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/procfs"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/stormbench/stormbench/bench/cluster"
	"github.com/stormbench/stormbench/bench/poll"
)

// What a containerd-backed node leaves on the host, and taking it away: containers, cgroups, mounts.

// cgroupHierarchies lists the cgroup v1 hierarchies (or the v2 one).
func cgroupHierarchies() []string {
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		return []string{"/sys/fs/cgroup"}
	}
	entries, _ := os.ReadDir("/sys/fs/cgroup")
	var out []string
	for _, e := range entries {
		p := filepath.Join("/sys/fs/cgroup", e.Name())
		if fi, err := os.Lstat(p); err == nil && fi.IsDir() && e.Name() != "unified" {
			out = append(out, p)
		}
	}
	return out
}

// killContainers kills the node's shims (by the containerd address they
// serve) and every process in the node's cgroups.
func (n *ContainerdNode) killContainers() {
	for _, pid := range shimPIDs(n.socket()) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	// Until the cgroups are empty, for up to 5 s.
	w := poll.Wait{Interval: 100 * time.Millisecond, Timeout: 5 * time.Second}
	_ = w.Until(context.Background(), func(context.Context) (bool, string, error) {
		pids := cgroupPIDs(n.cgroupRoot())
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		return len(pids) == 0, "", nil
	})
}

// shimPIDs are the containerd-shim processes started for the containerd
// at address (their command line carries -address <address>).
func shimPIDs(address string) []int {
	var out []int
	procs, _ := procfs.AllProcs()
	for _, p := range procs {
		args, err := p.CmdLine()
		if err != nil || len(args) == 0 || !strings.Contains(filepath.Base(args[0]), "containerd-shim") {
			continue
		}
		for i := 0; i+1 < len(args); i++ {
			if args[i] == "-address" && args[i+1] == address {
				out = append(out, p.PID)
			}
		}
	}
	return out
}

// cgroupPIDs lists the processes in root and below, in any hierarchy.
func cgroupPIDs(root string) []int {
	seen := sets.New[int]()
	for _, h := range cgroupHierarchies() {
		_ = filepath.WalkDir(filepath.Join(h, root), func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || d.Name() != "cgroup.procs" {
				return nil
			}
			pids, _ := cluster.ReadPIDs(p)
			seen.Insert(pids...)
			return nil
		})
	}
	return sets.List(seen)
}

// cleanHost removes the node's mounts (kubelet volumes, container rootfs,
// network namespaces under containerd's state), its bridge and its
// cgroups.
func (n *ContainerdNode) cleanHost() error {
	var errs []error
	if err := unmountUnder(n.opts.Dir); err != nil {
		errs = append(errs, err)
	}
	if _, err := os.Stat("/sys/class/net/" + n.Bridge()); err == nil {
		if out, err := exec.Command(mustLook("ip"), "link", "del", n.Bridge()).CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("deleting bridge %s: %w: %s", n.Bridge(), err, out))
		}
	}
	for _, h := range cgroupHierarchies() {
		if err := removeCgroupTree(filepath.Join(h, n.cgroupRoot())); err != nil {
			errs = append(errs, err)
		}
	}
	// The state directory holds nothing worth keeping once unmounted.
	_ = os.RemoveAll(filepath.Join(n.opts.Dir, "ctd/state"))
	return errors.Join(errs...)
}

// removeCgroupTree removes a cgroup directory and its children, deepest
// first (cgroup directories are removed with rmdir, not unlink).
func removeCgroupTree(root string) error {
	if _, err := os.Stat(root); err != nil {
		return nil
	}
	var dirs []string
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	var last error
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := syscall.Rmdir(dirs[i]); err != nil && !errors.Is(err, syscall.ENOENT) {
			last = fmt.Errorf("removing cgroup %s: %w", dirs[i], err)
		}
	}
	return last
}

// Mounts lists the mount points under dir (from /proc/self/mountinfo),
// deepest first.
func Mounts(dir string) []string {
	mounts, err := procfs.GetMounts()
	if err != nil {
		return nil
	}
	var out []string
	for _, m := range mounts {
		mp := cluster.UnescapeMount(m.MountPoint)
		if mp == dir || strings.HasPrefix(mp, dir+"/") {
			out = append(out, mp)
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// unmountUnder unmounts every mount point under dir, deepest first,
// detaching busy ones.
func unmountUnder(dir string) error {
	var errs []error
	for round := 0; round < 3; round++ {
		mps := Mounts(dir)
		if len(mps) == 0 {
			return nil
		}
		for _, mp := range mps {
			if err := syscall.Unmount(mp, 0); err != nil {
				if err := syscall.Unmount(mp, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT) {
					errs = append(errs, fmt.Errorf("unmounting %s: %w", mp, err))
				}
			}
		}
	}
	if left := Mounts(dir); len(left) > 0 {
		return errors.Join(append(errs, fmt.Errorf("still mounted under %s: %v", dir, left))...)
	}
	return nil
}

// cleanDeadContainerdNode removes what a containerd node in dir left on the
// machine, after its kubelet and containerd were killed by pid.
func cleanDeadContainerdNode(dir string) {
	b, err := os.ReadFile(filepath.Join(dir, "node.json"))
	if err != nil {
		return // not a containerd node
	}
	var st nodeState
	if json.Unmarshal(b, &st) != nil || st.Name == "" {
		return
	}
	n := &ContainerdNode{procs: procs{what: "containerd node " + st.Name, opts: Options{Dir: dir, Name: st.Name}}}
	n.killContainers()
	_ = n.cleanHost()
}
