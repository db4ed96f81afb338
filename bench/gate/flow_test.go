package gate

import (
	"strings"
	"testing"

	"github.com/stormbench/stormbench/bench/result"
)

// TestRegressionFlowMetric: a threshold on a flow's excess
// ("excess.<flow>") is gated, beside the key metrics; an unknown flow is
// refused; a threshold on every metric does not reach the flows.
func TestRegressionFlowMetric(t *testing.T) {
	got, err := regressionMetrics(map[string]float64{"excess.kubelet": 0.1, "excess.endpointslice-controller": 0.2, result.MetricExcessPerRestart: 0.3})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]float64{}
	for _, rm := range got {
		if !rm.explicit {
			t.Errorf("%s: not explicit", rm.ID)
		}
		ids[rm.ID] = rm.max
	}
	if len(ids) != 3 || ids["excess.kubelet"] != 0.1 || ids["excess.endpointslice-controller"] != 0.2 || ids[result.MetricExcessPerRestart] != 0.3 {
		t.Errorf("gated %v, want the two flows and the key excess", ids)
	}
	if _, err := regressionMetrics(map[string]float64{"excess.kubeletz": 0.1}); err == nil {
		t.Error("an unknown flow was accepted")
	}
	all, err := regressionMetrics(map[string]float64{AllMetrics: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	for _, rm := range all {
		if strings.HasPrefix(rm.ID, result.FlowMetricPrefix) {
			t.Errorf("every-metric threshold reached flow %s", rm.ID)
		}
	}
}
