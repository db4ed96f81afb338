package compare

import (
	"reflect"
	"testing"

	"github.com/stormbench/stormbench/bench/result"
)

// TestMachineMismatches warns about a document from another machine, or
// one that does not record its machine, and about nothing else.
func TestMachineMismatches(t *testing.T) {
	xeon := &result.Machine{CPUModel: "Intel(R) Xeon(R) Processor", CPUs: 2, MemoryBytes: 1 << 34, Kernel: "6.1", CgroupVersion: 1, GoVersion: "go1.26.0", OS: "linux", Arch: "amd64"}
	epyc := *xeon
	epyc.CPUModel = "AMD EPYC 7B13"
	newerGo := *xeon
	newerGo.GoVersion = "go1.26.1"
	in := func(name string, m *result.Machine) Input {
		return Input{Name: name, Result: &result.Result{Run: result.Run{Machine: m}}}
	}
	tests := []struct {
		name   string
		inputs []Input
		want   []string
	}{
		{"one document", []Input{in("a.json", xeon)}, nil},
		{"same machine", []Input{in("a.json", xeon), in("b.json", xeon)}, nil},
		{"another Go build is the same machine", []Input{in("a.json", xeon), in("b.json", &newerGo)}, nil},
		{"neither recorded", []Input{in("a.json", nil), in("b.json", nil)}, nil},
		{"another CPU", []Input{in("a.json", xeon), in("b.json", &epyc)}, []string{
			"different machines: a.json ran on Intel(R) Xeon(R) Processor ×2, 16.0 GiB, kernel 6.1, cgroup v1, go1.26.0 linux/amd64; b.json on AMD EPYC 7B13 ×2, 16.0 GiB, kernel 6.1, cgroup v1, go1.26.0 linux/amd64"}},
		{"one not recorded", []Input{in("a.json", xeon), in("b.json", nil), in("c.json", xeon)}, []string{
			"different machines: a.json ran on Intel(R) Xeon(R) Processor ×2, 16.0 GiB, kernel 6.1, cgroup v1, go1.26.0 linux/amd64; b.json on a machine it does not record"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := MachineMismatches(tt.inputs); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("MachineMismatches:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}
