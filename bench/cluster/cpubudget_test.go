package cluster

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/procfs"
)

func TestCPUQuota(t *testing.T) {
	for _, tc := range []struct {
		cpus  float64
		quota int64
	}{
		{1.5, 150_000},
		{1, 100_000},
		{0.25, 25_000},
		{0.01, 1_000}, // the kernel's smallest quota
		{2.333333, 233_333},
		{16, 1_600_000},
	} {
		q, p := CPUQuota(tc.cpus)
		if q != tc.quota || p != 100_000 {
			t.Errorf("CPUQuota(%v) = %d / %d, want %d / 100000", tc.cpus, q, p, tc.quota)
		}
	}
}

const mountinfoV1 = `22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw
30 22 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
31 30 0:28 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct
33 30 0:30 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset
40 30 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
`

const mountinfoV2 = `22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw
30 22 0:27 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate
`

func TestFindCPUCgroupRoot(t *testing.T) {
	controllers := func(m map[string]string) func(string) ([]byte, error) {
		return func(p string) ([]byte, error) {
			if c, ok := m[p]; ok {
				return []byte(c), nil
			}
			return nil, os.ErrNotExist
		}
	}
	for _, tc := range []struct {
		name, mountinfo string
		files           map[string]string
		want            CPUCgroupRoot
		wantErr         string
	}{
		{name: "v1 beside a v2 without cpu", mountinfo: mountinfoV1, files: map[string]string{"/sys/fs/cgroup/unified/cgroup.controllers": ""},
			want: CPUCgroupRoot{Dir: "/sys/fs/cgroup/cpu,cpuacct", Version: CgroupV1}},
		{name: "v1 cpuset only is not cpu", mountinfo: "33 30 0:30 / /sys/fs/cgroup/cpuset rw - cgroup cgroup rw,cpuset\n", wantErr: "no cgroup hierarchy"},
		{name: "v2", mountinfo: mountinfoV2, files: map[string]string{"/sys/fs/cgroup/cgroup.controllers": "cpuset cpu io memory pids"},
			want: CPUCgroupRoot{Dir: "/sys/fs/cgroup", Version: CgroupV2}},
		{name: "v2 without cpu", mountinfo: mountinfoV2, files: map[string]string{"/sys/fs/cgroup/cgroup.controllers": "memory pids"}, wantErr: "does not offer it"},
		{name: "escaped mount point", mountinfo: `31 30 0:28 / /mnt/my\040cgroups rw - cgroup cgroup rw,cpu` + "\n",
			want: CPUCgroupRoot{Dir: "/mnt/my cgroups", Version: CgroupV1}},
		{name: "nothing", mountinfo: "", wantErr: "no cgroup hierarchy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := FindCPUCgroupRoot(mountsOf(t, tc.mountinfo), controllers(tc.files))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

// mountsOf parses a mountinfo text as the kernel's, with procfs.
func mountsOf(t *testing.T, mountinfo string) []*procfs.MountInfo {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "self"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "self", "mountinfo"), []byte(mountinfo), 0o644); err != nil {
		t.Fatal(err)
	}
	fs, err := procfs.NewFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	mounts, err := fs.GetMounts()
	if err != nil {
		t.Fatal(err)
	}
	return mounts
}

// fakeCgroupRoot makes a cgroup directory with the control files the kernel
// would create in it.
func fakeCgroupRoot(t *testing.T, v CgroupVersion, name string) CPUCgroupRoot {
	root := t.TempDir()
	files := map[CgroupVersion][]string{CgroupV1: {"cpu.cfs_period_us", "cpu.cfs_quota_us", "cgroup.procs", "tasks"}, CgroupV2: {"cpu.max", "cgroup.procs"}}[v]
	if err := os.Mkdir(filepath.Join(root, name), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{root, filepath.Join(root, name)} {
		for _, f := range files {
			if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return CPUCgroupRoot{Dir: root, Version: v}
}

func TestCPUBudgetFiles(t *testing.T) {
	for _, tc := range []struct {
		v    CgroupVersion
		want map[string]string
	}{
		{CgroupV1, map[string]string{"cpu.cfs_period_us": "100000", "cpu.cfs_quota_us": "150000", "cgroup.procs": "4242"}},
		{CgroupV2, map[string]string{"cpu.max": "150000 100000", "cgroup.procs": "4242"}},
	} {
		t.Run(fmt.Sprintf("v%d", tc.v), func(t *testing.T) {
			root := fakeCgroupRoot(t, tc.v, "stormbench-x")
			b, err := NewCPUBudget(root, BudgetCgroupName("x"), 1.5)
			if err != nil {
				t.Fatal(err)
			}
			if err := b.Add(4242); err != nil {
				t.Fatal(err)
			}
			for f, want := range tc.want {
				got, err := os.ReadFile(filepath.Join(root.Dir, "stormbench-x", f))
				if err != nil || string(got) != want {
					t.Errorf("%s = %q (%v), want %q", f, got, err, want)
				}
			}
			procs, err := b.Procs()
			if err != nil || !slices.Equal(procs, []int{4242}) {
				t.Errorf("Procs = %v, %v", procs, err)
			}
			// Remove moves the process back to the root: rmdir of a real
			// cgroup would fail with it inside. Here the fake directory
			// still holds its files, so only the move is checked.
			_ = b.Remove()
			if got, _ := os.ReadFile(filepath.Join(root.Dir, "cgroup.procs")); string(got) != "4242" {
				t.Errorf("root cgroup.procs = %q, want the process moved back", got)
			}
		})
	}
}

func TestNewCPUBudgetRefuses(t *testing.T) {
	root := fakeCgroupRoot(t, CgroupV1, "ok")
	for _, tc := range []struct {
		name    string
		cpus    float64
		wantErr string
	}{
		{"ok", 0, "between 0.01 and 1024"},
		{"ok", 2000, "between 0.01 and 1024"},
		{"../etc", 1, "not a cgroup name"},
		{"", 1, "not a cgroup name"},
		// A directory without the kernel's files is no cgroup.
		{"missing-files", 1, "setting the CPU budget of 1 cores"},
	} {
		if _, err := NewCPUBudget(root, tc.name, tc.cpus); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("NewCPUBudget(%q, %v) = %v, want %q", tc.name, tc.cpus, err, tc.wantErr)
		}
	}
}

// TestCPUBudgetCgroupV1 puts a real process under a budget, when run as root
// on a machine with the cgroup v1 cpu controller: the quota is in
// cpu.cfs_quota_us and the process in tasks; the cgroup, under a name of
// its own, is removed at the end.
func TestCPUBudgetCgroupV1(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	root, err := HostCPUCgroupRoot()
	if err != nil || root.Version != CgroupV1 {
		t.Skipf("no cgroup v1 cpu controller (%+v, %v)", root, err)
	}
	name := fmt.Sprintf("stormbench-test-%d-%d", os.Getpid(), time.Now().UnixNano())
	b, err := NewCPUBudget(root, name, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := b.Remove(); err != nil {
			t.Error(err)
		}
		if _, err := os.Stat(b.Dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s still exists after Remove (%v)", b.Dir, err)
		}
	})
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	if err := b.Add(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	quota, _ := os.ReadFile(filepath.Join(b.Dir, "cpu.cfs_quota_us"))
	if strings.TrimSpace(string(quota)) != "50000" {
		t.Errorf("cpu.cfs_quota_us = %q, want 50000", quota)
	}
	tasks, _ := os.ReadFile(filepath.Join(b.Dir, "tasks"))
	if !slices.Contains(strings.Fields(string(tasks)), strconv.Itoa(cmd.Process.Pid)) {
		t.Errorf("tasks = %q, want pid %d", tasks, cmd.Process.Pid)
	}
	self, _ := os.ReadFile(filepath.Join(b.Dir, "cgroup.procs"))
	if slices.Contains(strings.Fields(string(self)), strconv.Itoa(os.Getpid())) {
		t.Error("the test process itself went into the budget")
	}
}
