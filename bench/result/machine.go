package result

import (
	"cmp"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// Machine describes the host stormbench ran on. On the embedded cluster
// the control plane shares it, so its figures (CPU seconds, latencies,
// whether the storm was host-bound) are this machine's; against a cluster
// reached through --kubeconfig it is only the load generator's host.
// Results from two different machines measure the machines as much as the
// code: compare says so (compare.MachineMismatches).
type Machine struct {
	// CPUModel is the processor's model name (/proc/cpuinfo "model name");
	// empty when the kernel does not say.
	CPUModel string `json:"cpuModel,omitempty"`
	// CPUs is the number of logical CPUs the stormbench process could run
	// on (runtime.NumCPU: the CPU affinity mask, not the machine's total).
	CPUs int `json:"cpus"`
	// MemoryBytes is the machine's total memory (/proc/meminfo MemTotal).
	MemoryBytes int64 `json:"memoryBytes,omitempty"`
	// Kernel is the kernel release (/proc/sys/kernel/osrelease).
	Kernel string `json:"kernel,omitempty"`
	// CgroupVersion is 2 when /sys/fs/cgroup is the unified (cgroup2)
	// hierarchy, 1 when it holds the v1 controllers, 0 when unknown.
	CgroupVersion int `json:"cgroupVersion,omitempty"`
	// GoVersion is the Go toolchain stormbench was built with.
	GoVersion string `json:"goVersion"`
	// OS and Arch are runtime.GOOS and runtime.GOARCH.
	OS   string `json:"os"`
	Arch string `json:"arch"`
}

// LocalMachine describes the machine this process runs on, read from the
// host's /proc and /sys. A file it cannot read leaves its field empty.
func LocalMachine() *Machine { return ReadMachine(os.DirFS("/")) }

// ReadMachine describes the machine whose root file system is root (a
// test gives an fstest.MapFS), with this process's Go version, CPU count,
// OS and architecture.
func ReadMachine(root fs.FS) *Machine {
	m := &Machine{
		CPUs:      runtime.NumCPU(),
		GoVersion: runtime.Version(),
		OS:        runtime.GOOS,
		Arch:      runtime.GOARCH,
	}
	if b, err := fs.ReadFile(root, "proc/cpuinfo"); err == nil {
		m.CPUModel = firstField(b, "model name")
	}
	if b, err := fs.ReadFile(root, "proc/meminfo"); err == nil {
		// "MemTotal:       16303412 kB"
		if f := strings.Fields(firstField(b, "MemTotal")); len(f) == 2 && f[1] == "kB" {
			if kb, err := strconv.ParseInt(f[0], 10, 64); err == nil {
				m.MemoryBytes = kb * 1024
			}
		}
	}
	if b, err := fs.ReadFile(root, "proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	// The unified hierarchy has cgroup.controllers at its root (as runc's
	// and the kubelet's cgroups.IsCgroup2UnifiedMode see it, by the
	// mount's magic number); a v1 or hybrid host has one directory per
	// controller there instead.
	if _, err := fs.Stat(root, "sys/fs/cgroup/cgroup.controllers"); err == nil {
		m.CgroupVersion = 2
	} else if _, err := fs.Stat(root, "sys/fs/cgroup/cpu"); err == nil {
		m.CgroupVersion = 1
	}
	return m
}

// firstField returns the value of the first "key: value" line of b whose
// key is key (spaces and tabs around both trimmed).
func firstField(b []byte, key string) string {
	for line := range strings.Lines(string(b)) {
		k, v, ok := strings.Cut(line, ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// String describes the machine in one line: "Intel(R) Xeon(R) ... ×2,
// 7.8 GiB, Linux 6.1.0, cgroup v1, go1.26.0 linux/amd64". Unknown parts
// are left out.
func (m *Machine) String() string {
	if m == nil {
		return "not recorded"
	}
	parts := []string{fmt.Sprintf("%s ×%d", cmp.Or(m.CPUModel, "CPU"), m.CPUs)}
	if m.MemoryBytes > 0 {
		parts = append(parts, fmt.Sprintf("%.1f GiB", float64(m.MemoryBytes)/(1<<30)))
	}
	if m.Kernel != "" {
		parts = append(parts, "kernel "+m.Kernel)
	}
	if m.CgroupVersion > 0 {
		parts = append(parts, fmt.Sprintf("cgroup v%d", m.CgroupVersion))
	}
	parts = append(parts, strings.TrimSpace(m.GoVersion+" "+m.OS+"/"+m.Arch))
	return strings.Join(parts, ", ")
}

// Same reports whether two machines are alike for benchmarking: the same
// CPU model, CPU count, memory, kernel and cgroup version. The Go version
// is not compared: it is stormbench's build, not the machine.
func (m *Machine) Same(o *Machine) bool {
	if m == nil || o == nil {
		return m == o
	}
	return m.CPUModel == o.CPUModel && m.CPUs == o.CPUs && m.MemoryBytes == o.MemoryBytes &&
		m.Kernel == o.Kernel && m.CgroupVersion == o.CgroupVersion
}
