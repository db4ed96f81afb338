package compare

import (
	"strings"
	"testing"

	"github.com/stormbench/stormbench/bench/kubelet"
	"github.com/stormbench/stormbench/bench/measure"
	"github.com/stormbench/stormbench/bench/result"
)

// TestKeyMetricsReadKnownFigures checks every key metric against the
// measurements' vocabulary: its ID is under its measurement's name, its
// figure is one the measurement emits (a figure of its merge rule, or a
// simulator counter for the storm measurement), and its extractor reads
// exactly that figure from a run that holds only it.
func TestKeyMetricsReadKnownFigures(t *testing.T) {
	rules := measure.MergeRules()
	counters := (&kubelet.Counters{}).Snapshot()
	for _, m := range KeyMetrics() {
		s := m.source
		rule, ok := rules[s.measurement]
		if !ok {
			t.Errorf("%s: unknown measurement %q", m.ID, s.measurement)
			continue
		}
		if !strings.HasPrefix(m.ID, s.measurement+".") {
			t.Errorf("%s: ID not under its measurement %q", m.ID, s.measurement)
		}
		_, known := rule.Figures[s.figure]
		if _, counter := counters[s.figure]; s.measurement == measure.MeasurementStorm && counter {
			known = true
		}
		if !known {
			t.Errorf("%s: %s emits no figure %q", m.ID, s.measurement, s.figure)
		}
		if _, ok := m.Extract(&result.VariantRun{}); ok {
			t.Errorf("%s: extracted from a run without the figure", m.ID)
		}
		const x = 7.5
		meas := result.Measurement{Name: s.measurement}
		labels := map[string]string{}
		for i := 0; i+1 < len(s.labels); i += 2 {
			labels[s.labels[i]] = s.labels[i+1]
		}
		if len(labels) == 0 {
			labels = nil
		}
		if s.histogram {
			meas.Histograms = []result.Histogram{{Name: s.figure, Window: result.WindowStorm, Labels: labels, Unit: m.Unit,
				Summary: result.Summary{Count: 1, Min: x, Mean: x, P50: x, P90: x, P99: x, P999: x, Max: x}}}
		} else {
			meas.Values = []result.Value{{Name: s.figure, Window: result.WindowStorm, Labels: labels, Unit: m.Unit, Value: x}}
		}
		if got, ok := m.Extract(&result.VariantRun{Measurements: []result.Measurement{meas}}); !ok || got != x {
			t.Errorf("%s: extracted %v, %v from a run holding only %s/%s %v; want %v", m.ID, got, ok, s.measurement, s.figure, s.labels, x)
		}
	}
}
