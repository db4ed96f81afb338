package compare

import (
	"slices"
	"testing"

	"github.com/stormbench/stormbench/bench/result"
)

func TestBudgetMismatches(t *testing.T) {
	in := func(name string, cpus float64) Input {
		return Input{Name: name, Result: &result.Result{Run: result.Run{Cluster: result.Cluster{ControlPlaneCPUs: cpus}}}}
	}
	for _, tc := range []struct {
		name   string
		inputs []Input
		want   []string
	}{
		{"one input", []Input{in("a", 1.5)}, nil},
		{"same budget", []Input{in("a", 1.5), in("b", 1.5)}, nil},
		{"both none", []Input{in("a", 0), in("b", 0)}, nil},
		{"different", []Input{in("a", 1.5), in("b", 2), in("c", 1.5)}, []string{"control-plane CPU budget: a has 1.5 cores, b has 2 cores"}},
		{"budget against none", []Input{in("a", 0), in("b", 1.5)}, []string{"control-plane CPU budget: a has none, b has 1.5 cores"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := BudgetMismatches(tc.inputs); !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
