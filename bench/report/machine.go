package report

import (
	"fmt"
	"strings"

	"github.com/stormbench/stormbench/bench/compare"
	"github.com/stormbench/stormbench/bench/result"
)

// provenance says where a run was made: the machine (result.Machine), the
// stormbench commit, and the control plane's CPU budget when it had one;
// the summary's "machine:" line and the report's Machine item. It is empty
// for a file written before the machine was recorded, whose summary and
// report are left as they were.
func provenance(r *result.Result) string {
	if r.Run.Machine == nil {
		return ""
	}
	parts := []string{r.Run.Machine.String()}
	if rev := r.Run.GitRevision; rev != "" && rev != "unknown" {
		parts = append(parts, "stormbench "+rev)
	}
	if cpus := r.Run.Cluster.ControlPlaneCPUs; cpus > 0 {
		parts = append(parts, "control plane "+compare.FormatBudget(cpus)+" (controlPlane.cpus)")
	}
	n := 0 // the runs the host, not only the control plane, limited (result.VariantRun.HostBound)
	for i := range r.Variants {
		if r.Variants[i].HostBound {
			n++
		}
	}
	if n > 0 {
		parts = append(parts, fmt.Sprintf("host-bound in %d of %d storms", n, len(r.Variants)))
	}
	return strings.Join(parts, "; ")
}
