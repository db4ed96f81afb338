package compare

import (
	"fmt"
	"strconv"
)

// BudgetMismatches lists the inputs whose control-plane CPU budget
// (result.Cluster.ControlPlaneCPUs, the profile's controlPlane.cpus) differs
// from the first's. Runs on budgets of different sizes measure different
// control planes, so their difference is not the change under test.
func BudgetMismatches(inputs []Input) []string {
	if len(inputs) < 2 {
		return nil
	}
	first := inputs[0].Result.Run.Cluster.ControlPlaneCPUs
	var out []string
	for _, in := range inputs[1:] {
		if b := in.Result.Run.Cluster.ControlPlaneCPUs; b != first {
			out = append(out, fmt.Sprintf("control-plane CPU budget: %s has %s, %s has %s", inputs[0].Name, FormatBudget(first), in.Name, FormatBudget(b)))
		}
	}
	return out
}

// FormatBudget renders a control-plane CPU budget: "1.5 cores", or "none".
func FormatBudget(cpus float64) string {
	if cpus <= 0 {
		return "none"
	}
	return strconv.FormatFloat(cpus, 'g', -1, 64) + " cores"
}
