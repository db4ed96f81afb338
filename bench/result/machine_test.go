package result_test

import (
	"bytes"
	"runtime"
	"testing"
	"testing/fstest"

	"github.com/stormbench/stormbench/bench/result"
)

// TestReadMachine reads a machine from a fake root: the CPU model, memory,
// kernel and cgroup version from the files the kernel gives them in, and
// nothing from files that are missing.
func TestReadMachine(t *testing.T) {
	tests := []struct {
		name string
		root fstest.MapFS
		want result.Machine
	}{
		{
			name: "cgroup v1",
			root: fstest.MapFS{
				"proc/cpuinfo":                 {Data: []byte("processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Processor\n\nprocessor\t: 1\nmodel name\t: Intel(R) Xeon(R) Processor\n")},
				"proc/meminfo":                 {Data: []byte("MemTotal:       24683792 kB\nMemFree:         1000 kB\n")},
				"proc/sys/kernel/osrelease":    {Data: []byte("6.18.44-fc\n")},
				"sys/fs/cgroup/cpu/cpu.shares": {Data: []byte("1024\n")},
			},
			want: result.Machine{CPUModel: "Intel(R) Xeon(R) Processor", MemoryBytes: 24683792 * 1024, Kernel: "6.18.44-fc", CgroupVersion: 1},
		},
		{
			name: "cgroup v2",
			root: fstest.MapFS{
				"proc/cpuinfo":                     {Data: []byte("model name : AMD EPYC 7B13\n")},
				"sys/fs/cgroup/cgroup.controllers": {Data: []byte("cpu memory\n")},
			},
			want: result.Machine{CPUModel: "AMD EPYC 7B13", CgroupVersion: 2},
		},
		{name: "nothing readable", root: fstest.MapFS{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := result.ReadMachine(tt.root)
			tt.want.CPUs, tt.want.GoVersion, tt.want.OS, tt.want.Arch = runtime.NumCPU(), runtime.Version(), runtime.GOOS, runtime.GOARCH
			if *got != tt.want {
				t.Errorf("ReadMachine:\n got %+v\nwant %+v", *got, tt.want)
			}
		})
	}
}

// TestMachineString pins the one-line description reports print, and
// TestMachineSame what counts as another machine.
func TestMachineString(t *testing.T) {
	tests := []struct {
		m    *result.Machine
		want string
	}{
		{nil, "not recorded"},
		{&result.Machine{CPUModel: "Intel(R) Xeon(R) Processor", CPUs: 2, MemoryBytes: 24683792 * 1024, Kernel: "6.18.44", CgroupVersion: 1, GoVersion: "go1.26.0", OS: "linux", Arch: "amd64"},
			"Intel(R) Xeon(R) Processor ×2, 23.5 GiB, kernel 6.18.44, cgroup v1, go1.26.0 linux/amd64"},
		{&result.Machine{CPUs: 4, GoVersion: "go1.26.0", OS: "linux", Arch: "arm64"}, "CPU ×4, go1.26.0 linux/arm64"},
	}
	for _, tt := range tests {
		if got := tt.m.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}

func TestMachineSame(t *testing.T) {
	a := &result.Machine{CPUModel: "Intel(R) Xeon(R) Processor", CPUs: 2, MemoryBytes: 1 << 34, Kernel: "6.1", CgroupVersion: 1, GoVersion: "go1.26.0"}
	goOnly := *a
	goOnly.GoVersion = "go1.26.1"
	cpu := *a
	cpu.CPUModel = "AMD EPYC 7B13"
	cores := *a
	cores.CPUs = 4
	tests := []struct {
		name string
		x, y *result.Machine
		want bool
	}{
		{"itself", a, a, true},
		{"another Go build", a, &goOnly, true},
		{"another CPU", a, &cpu, false},
		{"more cores", a, &cores, false},
		{"one not recorded", a, nil, false},
		{"neither recorded", nil, nil, true},
	}
	for _, tt := range tests {
		if got := tt.x.Same(tt.y); got != tt.want {
			t.Errorf("%s: Same = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestMachineRoundTrip writes a result with its machine and reads it back.
func TestMachineRoundTrip(t *testing.T) {
	r := fixture(t)
	r.Run.Machine = &result.Machine{CPUModel: "Intel(R) Xeon(R) Processor", CPUs: 2, MemoryBytes: 1 << 34, Kernel: "6.1", CgroupVersion: 1, GoVersion: "go1.26.0", OS: "linux", Arch: "amd64"}
	var b bytes.Buffer
	if err := result.Encode(&b, r); err != nil {
		t.Fatal(err)
	}
	got, err := result.Decode(&b)
	if err != nil {
		t.Fatal(err)
	}
	if got.Run.Machine == nil || *got.Run.Machine != *r.Run.Machine {
		t.Errorf("machine read back as %+v, want %+v", got.Run.Machine, r.Run.Machine)
	}
}
