package report

import (
	"fmt"
	"strings"

	"github.com/stormbench/stormbench/bench/compare"
	"github.com/stormbench/stormbench/bench/result"
)

// provenance says where a run was made: the machine (result.Machine), the
// stormbench commit, and the control plane's CPU budget when it had one.
// It is empty for a file written before the machine was recorded, whose
// summary and report are left as they were.
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
	if n := hostBoundRuns(r); n > 0 {
		parts = append(parts, fmt.Sprintf("host-bound in %d of %d storms", n, len(r.Variants)))
	}
	return strings.Join(parts, "; ")
}

// hostBoundRuns counts the variant runs the host, not only the control
// plane, limited (result.VariantRun.HostBound).
func hostBoundRuns(r *result.Result) int {
	n := 0
	for i := range r.Variants {
		if r.Variants[i].HostBound {
			n++
		}
	}
	return n
}

// writeProvenance writes the summary's machine line, if the run recorded
// its machine.
func writeProvenance(w *errWriter, r *result.Result) {
	if p := provenance(r); p != "" {
		w.printf("machine: %s\n", p)
	}
}

// machineMeta is the report's Machine item, if the run recorded its
// machine.
func machineMeta(r *result.Result) []MetaItem {
	if p := provenance(r); p != "" {
		return []MetaItem{{"Machine", p}}
	}
	return nil
}
