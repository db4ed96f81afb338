package cluster

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/procfs"

	"github.com/stormbench/stormbench/bench/poll"
)

// BudgetedComponents are the embedded components a CPU budget
// (controlPlane.cpus) holds: the control plane proper. kube-controller-
// manager, kube-scheduler, the KWOK controller and stormbench stay outside,
// so that the simulation's cost does not eat the budget.
var BudgetedComponents = []string{"kube-apiserver", "etcd"}

// CFSPeriodMicros is the CFS period of a CPU budget: 100 ms, the kernel's
// default (Documentation/scheduler/sched-bwc.rst).
const CFSPeriodMicros = 100_000

// MinBudgetCPUs and MaxBudgetCPUs bound controlPlane.cpus: the kernel
// refuses a quota below 1 ms per period, and a budget above the machine's
// cores limits nothing.
const (
	MinBudgetCPUs = 0.01
	MaxBudgetCPUs = 1024
)

// CPUQuota returns the CFS quota and period, in microseconds, that hold a
// cgroup to cpus cores: quota = cpus × period.
func CPUQuota(cpus float64) (quotaMicros, periodMicros int64) {
	return int64(math.Round(cpus * CFSPeriodMicros)), CFSPeriodMicros
}

// CgroupVersion is the version of the cgroup hierarchy holding the cpu
// controller.
type CgroupVersion int

// The cgroup versions.
const (
	CgroupV1 CgroupVersion = 1
	CgroupV2 CgroupVersion = 2
)

// CPUCgroupRoot is where the cpu controller is mounted.
type CPUCgroupRoot struct {
	// Dir is the mount point (/sys/fs/cgroup/cpu,cpuacct for v1,
	// /sys/fs/cgroup for v2).
	Dir string
	// Version is the hierarchy's version.
	Version CgroupVersion
}

// FindCPUCgroupRoot returns the cpu controller's mount from the mounts of
// /proc/self/mountinfo (procfs): a cgroup (v1) mount whose superblock
// options name cpu, else a cgroup2 mount whose cgroup.controllers, read
// with readFile, lists cpu. A v1 cpu controller wins: on a hybrid system
// the v2 hierarchy does not get the controllers v1 has.
func FindCPUCgroupRoot(mounts []*procfs.MountInfo, readFile func(string) ([]byte, error)) (CPUCgroupRoot, error) {
	var v2 []string
	for _, m := range mounts {
		// 31 30 0:28 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
		mountPoint := UnescapeMount(m.MountPoint)
		switch m.FSType {
		case "cgroup":
			if _, ok := m.SuperOptions["cpu"]; ok {
				return CPUCgroupRoot{Dir: mountPoint, Version: CgroupV1}, nil
			}
		case "cgroup2":
			v2 = append(v2, mountPoint)
		}
	}
	for _, dir := range v2 {
		b, err := readFile(filepath.Join(dir, "cgroup.controllers"))
		if err == nil && slices.Contains(strings.Fields(string(b)), "cpu") {
			return CPUCgroupRoot{Dir: dir, Version: CgroupV2}, nil
		}
	}
	if len(v2) > 0 {
		return CPUCgroupRoot{}, fmt.Errorf("no cpu controller: the cgroup2 hierarchy at %s does not offer it (cgroup.controllers) and no cgroup v1 hierarchy has it", strings.Join(v2, ", "))
	}
	return CPUCgroupRoot{}, errors.New("no cgroup hierarchy with the cpu controller is mounted")
}

// UnescapeMount undoes the octal escapes of a mount point in mountinfo,
// which procfs leaves: the kernel escapes space, tab, newline and
// backslash (\040 for a space; fs/proc_namespace.c show_mountinfo).
func UnescapeMount(s string) string { return mountUnescaper.Replace(s) }

var mountUnescaper = strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`)

// HostCPUCgroupRoot finds the cpu controller of this machine
// (FindCPUCgroupRoot on /proc/self/mountinfo's mounts).
func HostCPUCgroupRoot() (CPUCgroupRoot, error) {
	mounts, err := procfs.GetMounts()
	if err != nil {
		return CPUCgroupRoot{}, fmt.Errorf("finding the cpu cgroup controller: %w", err)
	}
	return FindCPUCgroupRoot(mounts, os.ReadFile)
}

// CheckCPUBudget says why a CPU budget of cpus cores cannot be set up on
// this machine: it needs root (a cgroup is created) and a mounted cpu
// controller. nil when it can.
func CheckCPUBudget(cpus float64) error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("controlPlane.cpus %g puts kube-apiserver and etcd under a CPU quota in a cgroup, which needs root: run stormbench as root, or remove controlPlane.cpus from the profile", cpus)
	}
	root, err := HostCPUCgroupRoot()
	if err != nil {
		return fmt.Errorf("controlPlane.cpus %g: %w", cpus, err)
	}
	if root.Version == CgroupV2 {
		b, err := os.ReadFile(filepath.Join(root.Dir, "cgroup.subtree_control"))
		if err != nil || !slices.Contains(strings.Fields(string(b)), "cpu") {
			return fmt.Errorf("controlPlane.cpus %g: the cpu controller is not enabled for child cgroups of %s (cgroup.subtree_control); enable it with `echo +cpu > %s`", cpus, root.Dir, filepath.Join(root.Dir, "cgroup.subtree_control"))
		}
	}
	return nil
}

// CPUBudget is a cgroup that holds the processes in it to a CPU quota.
type CPUBudget struct {
	// Dir is the cgroup's directory.
	Dir string
	// Version is its hierarchy's version.
	Version CgroupVersion
	// CPUs is the quota in cores.
	CPUs float64
}

// BudgetCgroupName is the cgroup of an embedded cluster's CPU budget,
// directly under the cpu controller's root: stormbench-<cluster name>. Under
// cgroup v2 a cgroup with processes of its own cannot give controllers to
// its children, so stormbench's own cgroup will not do.
func BudgetCgroupName(cluster string) string { return "stormbench-" + cluster }

// NewCPUBudget creates (or takes over) the cgroup name under root and sets
// its quota to cpus cores.
func NewCPUBudget(root CPUCgroupRoot, name string, cpus float64) (*CPUBudget, error) {
	if cpus < MinBudgetCPUs || cpus > MaxBudgetCPUs || math.IsNaN(cpus) {
		return nil, fmt.Errorf("CPU budget %g: must be between %g and %g cores", cpus, MinBudgetCPUs, float64(MaxBudgetCPUs))
	}
	if name == "" || strings.ContainsAny(name, "/\x00") || name == "." || name == ".." {
		return nil, fmt.Errorf("CPU budget: %q is not a cgroup name", name)
	}
	b := &CPUBudget{Dir: filepath.Join(root.Dir, name), Version: root.Version, CPUs: cpus}
	if err := os.Mkdir(b.Dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("creating the CPU budget's cgroup: %w", err)
	}
	if err := b.setQuota(); err != nil {
		return nil, err
	}
	return b, nil
}

// setQuota writes the quota: cpu.cfs_period_us then cpu.cfs_quota_us (v1),
// or cpu.max "quota period" (v2).
func (b *CPUBudget) setQuota() error {
	quota, period := CPUQuota(b.CPUs)
	var err error
	switch b.Version {
	case CgroupV1:
		if err = writeCgroup(b.Dir, "cpu.cfs_period_us", strconv.FormatInt(period, 10)); err == nil {
			err = writeCgroup(b.Dir, "cpu.cfs_quota_us", strconv.FormatInt(quota, 10))
		}
	case CgroupV2:
		err = writeCgroup(b.Dir, "cpu.max", fmt.Sprintf("%d %d", quota, period))
	default:
		err = fmt.Errorf("unknown cgroup version %d", b.Version)
	}
	if err != nil {
		return fmt.Errorf("setting the CPU budget of %g cores: %w", b.CPUs, err)
	}
	return nil
}

// Add moves a process, every thread of it, into the budget (cgroup.procs
// in both versions; v1's tasks would move one thread).
func (b *CPUBudget) Add(pid int) error {
	if err := writeCgroup(b.Dir, "cgroup.procs", strconv.Itoa(pid)); err != nil {
		return fmt.Errorf("putting process %d under the CPU budget: %w", pid, err)
	}
	return nil
}

// Procs returns the processes in the budget.
func (b *CPUBudget) Procs() ([]int, error) { return ReadPIDs(filepath.Join(b.Dir, "cgroup.procs")) }

// ReadPIDs reads the process ids of a pid file or of a cgroup's
// cgroup.procs, separated by white space.
func ReadPIDs(path string) ([]int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []int
	for _, f := range strings.Fields(string(data)) {
		if pid, err := strconv.Atoi(f); err == nil {
			out = append(out, pid)
		}
	}
	return out, nil
}

// Remove removes the budget's cgroup, moving any process still in it back
// to the root first (a cgroup with processes cannot be removed). A cgroup
// that is gone already is not an error.
func (b *CPUBudget) Remove() error {
	if _, err := os.Stat(b.Dir); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	// A process that has just been killed stays in the cgroup until it
	// has fully exited, and the cgroup cannot be removed before (EBUSY,
	// seen after `cluster down`): move what is left, and retry a while.
	var err error
	w := poll.Wait{Interval: 100 * time.Millisecond, Timeout: 5 * time.Second}
	werr := w.Until(context.Background(), func(context.Context) (bool, string, error) {
		procs, _ := b.Procs()
		for _, pid := range procs {
			_ = writeCgroup(filepath.Dir(b.Dir), "cgroup.procs", strconv.Itoa(pid))
		}
		err = os.Remove(b.Dir)
		if err == nil || errors.Is(err, os.ErrNotExist) {
			return true, "", nil
		}
		if !errors.Is(err, syscall.EBUSY) {
			return false, "", err
		}
		return false, "", nil
	})
	if werr == nil {
		return nil
	}
	return fmt.Errorf("removing the CPU budget's cgroup: %w", err)
}

// writeCgroup writes one value to a cgroup control file, which exists
// already (the kernel creates them): O_CREATE is not given.
func writeCgroup(dir, file, value string) error {
	f, err := os.OpenFile(filepath.Join(dir, file), os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(value); err != nil {
		f.Close()
		return fmt.Errorf("writing %q to %s: %w", value, f.Name(), err)
	}
	return f.Close()
}

// CPUBudget is the CPU quota, in cores, kube-apiserver and etcd of this
// cluster run under (the profile's controlPlane.cpus); 0 for none.
func (e *Embedded) CPUBudget() float64 { return max(e.opts.ControlPlane.CPUs, 0) }

// applyCPUBudget puts kube-apiserver and etcd under the cluster's CPU
// budget, creating its cgroup if need be. kwokctl starts the components
// (create, start after a crash or a snapshot), so it runs after each:
// children inherit their parent's cgroup, and the parent is kwokctl, which
// also starts the components that must stay outside.
func (e *Embedded) applyCPUBudget() error {
	cpus := e.CPUBudget()
	if cpus == 0 {
		return nil
	}
	root, err := HostCPUCgroupRoot()
	if err != nil {
		return fmt.Errorf("controlPlane.cpus: %w", err)
	}
	b, err := NewCPUBudget(root, BudgetCgroupName(e.opts.Name), cpus)
	if err != nil {
		return fmt.Errorf("controlPlane.cpus: %w", err)
	}
	pids := e.PIDs()
	for _, c := range BudgetedComponents {
		pid, ok := pids[c]
		if !ok || !ProcessAlive(pid) {
			return fmt.Errorf("controlPlane.cpus: %s is not running (log: %s)", c, e.LogPath(c))
		}
		if err := b.Add(pid); err != nil {
			return fmt.Errorf("controlPlane.cpus: %s: %w", c, err)
		}
	}
	return nil
}

// removeCPUBudget removes the cluster's CPU budget cgroup, if there is one:
// it is named after the cluster, so `cluster down` finds it without the
// profile.
func (e *Embedded) removeCPUBudget() error {
	root, err := HostCPUCgroupRoot()
	if err != nil {
		return nil // no cpu controller: no budget was made
	}
	b := &CPUBudget{Dir: filepath.Join(root.Dir, BudgetCgroupName(e.opts.Name)), Version: root.Version}
	return b.Remove()
}
