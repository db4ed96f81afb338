package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stormbench/stormbench/bench/compare"
	"github.com/stormbench/stormbench/bench/result"
	"github.com/stormbench/stormbench/profiles"
)

// TestProvenance pins the machine line the summary and the report print:
// nothing for a file without a machine, else the machine, the commit, the
// control plane's CPU budget and how many storms were host-bound.
func TestProvenance(t *testing.T) {
	m := &result.Machine{CPUModel: "Intel(R) Xeon(R) Processor", CPUs: 2, MemoryBytes: 24 << 30, Kernel: "6.18.44", CgroupVersion: 1, GoVersion: "go1.26.0", OS: "linux", Arch: "amd64"}
	tests := []struct {
		name string
		edit func(r *result.Result)
		want string
	}{
		{"not recorded", func(r *result.Result) { r.Run.Machine = nil }, ""},
		{"machine only", func(r *result.Result) { r.Run.Machine, r.Run.GitRevision = m, "unknown" },
			"Intel(R) Xeon(R) Processor ×2, 24.0 GiB, kernel 6.18.44, cgroup v1, go1.26.0 linux/amd64"},
		{"commit, budget, host-bound", func(r *result.Result) {
			r.Run.Machine, r.Run.GitRevision, r.Run.Cluster.ControlPlaneCPUs = m, "0f2d1fb", 1.5
			r.Variants[1].HostBound = true
		}, "Intel(R) Xeon(R) Processor ×2, 24.0 GiB, kernel 6.18.44, cgroup v1, go1.26.0 linux/amd64; stormbench 0f2d1fb; control plane 1.5 cores (controlPlane.cpus); host-bound in 1 of 2 storms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := summaryFixture(t)
			tt.edit(r)
			if got := provenance(r); got != tt.want {
				t.Errorf("provenance:\n got %q\nwant %q", got, tt.want)
			}
			var buf bytes.Buffer
			if err := WriteSummary(&buf, r); err != nil {
				t.Fatal(err)
			}
			line := "machine: " + tt.want + "\n"
			if has := strings.Contains(buf.String(), line); has != (tt.want != "") {
				t.Errorf("summary has the machine line: %v, want %v:\n%s", has, tt.want != "", buf.String())
			}
			meta := runMeta(compare.Input{Name: "r.json", Result: r}, &profiles.Profile{})
			found := ""
			for _, it := range meta {
				if it.Label == "Machine" {
					found = it.Value
				}
			}
			if found != tt.want {
				t.Errorf("report's Machine item = %q, want %q", found, tt.want)
			}
		})
	}
}
