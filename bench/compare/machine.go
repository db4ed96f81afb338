package compare

import (
	"fmt"

	"github.com/stormbench/stormbench/bench/result"
)

// MachineMismatches lists the inputs that ran on another machine than the
// first (result.Machine.Same: CPU model, CPU count, memory, kernel, cgroup
// version), or whose machine is not recorded when the first's is, or the
// other way round. On the embedded cluster the control plane shares
// stormbench's machine, so a difference between such runs is partly the
// machines'. These are warnings: the comparison is still made.
func MachineMismatches(inputs []Input) []string {
	if len(inputs) < 2 {
		return nil
	}
	first := inputs[0].Result.Run.Machine
	var out []string
	for _, in := range inputs[1:] {
		m := in.Result.Run.Machine
		if first.Same(m) {
			continue
		}
		out = append(out, fmt.Sprintf("different machines: %s ran on %s; %s on %s", inputs[0].Name, machineText(first), in.Name, machineText(m)))
	}
	return out
}

// machineText is m for a sentence: its description, or "a machine it does
// not record" for a file written before the machine was recorded.
func machineText(m *result.Machine) string {
	if m == nil {
		return "a machine it does not record"
	}
	return m.String()
}
