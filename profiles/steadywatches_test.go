package profiles

import (
	"strings"
	"testing"
)

// TestSteadyWatchesValidation: fleet.steadyWatches is off by default, takes
// either component or both, and is refused with its field path when it
// enables nothing, names an unknown field or has no KWOK node to watch for.
func TestSteadyWatchesValidation(t *testing.T) {
	const head = "apiVersion: stormbench.io/v1alpha1\nkind: StormProfile\nmetadata: {name: t}\n"
	for _, tc := range []struct {
		name  string
		fleet string
		want  *SteadyWatches
		err   string // a substring of the error; empty: valid
	}{
		{"off by default", "fleet: {nodes: 3, podsPerNode: 2}", nil, ""},
		{"both", "fleet: {nodes: 3, podsPerNode: 2, steadyWatches: {kubelet: true, kubeProxy: true}}", &SteadyWatches{Kubelet: true, KubeProxy: true}, ""},
		{"kubelet only", "fleet: {nodes: 3, podsPerNode: 2, steadyWatches: {kubelet: true}}", &SteadyWatches{Kubelet: true}, ""},
		{"kube-proxy only", "fleet: {nodes: 3, podsPerNode: 2, steadyWatches: {kubeProxy: true}}", &SteadyWatches{KubeProxy: true}, ""},
		{"some real kubelets", "fleet: {nodes: 3, podsPerNode: 2, realKubelets: 1, workloads: [{template: web-exec, share: 1}], steadyWatches: {kubelet: true}}", &SteadyWatches{Kubelet: true}, ""},
		{"nothing enabled", "fleet: {nodes: 3, podsPerNode: 2, steadyWatches: {}}", nil, "fleet.steadyWatches: Required value: set kubelet, kubeProxy or both"},
		{"both false", "fleet: {nodes: 3, podsPerNode: 2, steadyWatches: {kubelet: false, kubeProxy: false}}", nil, "fleet.steadyWatches: Required value"},
		{"only real kubelets", "fleet: {nodes: 2, podsPerNode: 2, realKubelets: 2, workloads: [{template: web-exec, share: 1}], steadyWatches: {kubelet: true}}", nil, "fleet.steadyWatches: Invalid value: \"set\": every node is a real kubelet"},
		{"unknown field", "fleet: {nodes: 3, podsPerNode: 2, steadyWatches: {kubeproxy: true}}", nil, "kubeproxy"},
		{"not a bool", "fleet: {nodes: 3, podsPerNode: 2, steadyWatches: {kubelet: yes-please}}", nil, "fleet.steadyWatches.kubelet"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse("t.yaml", []byte(head+tc.fleet+"\n"))
			if tc.err != "" {
				if err == nil {
					t.Fatalf("accepted, want an error with %q", tc.err)
				}
				if !IsValidation(err) || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want a validation error with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := p.Fleet.SteadyWatches
			if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
				t.Errorf("steadyWatches = %+v, want %+v", got, tc.want)
			}
		})
	}
}
