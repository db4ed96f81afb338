package profiles

import "testing"

// TestCheckGateMetricFlow: a flow's metric ("excess.<flow>") may carry a
// regression threshold; an ID of another shape under excess. is refused.
func TestCheckGateMetricFlow(t *testing.T) {
	for _, tt := range []struct {
		id string
		ok bool
	}{
		{"excess.kubelet", true},
		{"excess.endpointslice-controller", true},
		{"excess.", false},
		{"excess.Kubelet", false},
		{"excess.kubelet-", false},
		{"excess.a.b", false},
	} {
		if err := CheckGateMetric(tt.id); (err == nil) != tt.ok {
			t.Errorf("CheckGateMetric(%q) = %v, want ok %t", tt.id, err, tt.ok)
		}
	}
}
