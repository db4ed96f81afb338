package compare

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/stormbench/stormbench/bench/kubelet"
	"github.com/stormbench/stormbench/bench/measure/apiserver"
	"github.com/stormbench/stormbench/bench/measure/registry"
	"github.com/stormbench/stormbench/bench/measure/self"
	"github.com/stormbench/stormbench/bench/result"
	"github.com/stormbench/stormbench/bench/watchers"
)

// TestKeyMetricsReadKnownFigures checks every key metric against the
// measurements' vocabulary: the key metrics are result.KeyMetricIDs in
// order, an ID is under its measurement's name (and is
// "<measurement>.<figure>" for a figure read as emitted), its figure is one
// the measurement emits (a figure of its merge rule, or a simulator counter
// for the storm measurement), and its extractor reads exactly that figure
// from a run that holds only it.
func TestKeyMetricsReadKnownFigures(t *testing.T) {
	rules := registry.MergeRules()
	counters := (&kubelet.Counters{}).Snapshot()
	var ids []string
	for _, m := range KeyMetrics() {
		ids = append(ids, m.ID)
		s := m.source
		rule, ok := rules[s.measurement]
		if !ok {
			t.Errorf("%s: unknown measurement %q", m.ID, s.measurement)
			continue
		}
		if !strings.HasPrefix(m.ID, s.measurement+".") {
			t.Errorf("%s: ID not under its measurement %q", m.ID, s.measurement)
		}
		if s.labels == nil && s.fold == nil && !s.histogram && m.ID != s.measurement+"."+s.figure {
			t.Errorf("%s: reads %s.%s as emitted, so that is its ID", m.ID, s.measurement, s.figure)
		}
		_, known := rule.Figures[s.figure]
		if _, counter := counters[s.figure]; s.measurement == self.Name && counter {
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
	if !slices.Equal(ids, result.KeyMetricIDs) {
		t.Errorf("key metrics %v, want result.KeyMetricIDs %v", ids, result.KeyMetricIDs)
	}
}

// TestFigureNames: every figure a measurement's merge rule names, every
// simulator counter and every steadyWatches figure (merged by its scope's
// default, so named by no rule) is snake_case, and a former camelCase ID
// is an unknown metric.
func TestFigureNames(t *testing.T) {
	figures := map[string][]string{watchers.Name: {watchers.FigureWatchers, watchers.FigureOpenAtStormStart, watchers.FigureEvents,
		watchers.FigureBookmarks, watchers.FigureBytes, watchers.FigureRenewed, watchers.FigureReconnects, watchers.FigureResyncs}}
	for m, rule := range registry.MergeRules() {
		figures[m] = slices.AppendSeq(figures[m], maps.Keys(rule.Figures))
	}
	figures[self.Name] = slices.AppendSeq(figures[self.Name], maps.Keys((&kubelet.Counters{}).Snapshot()))
	for m, names := range figures {
		for _, n := range names {
			if strings.ToLower(n) != n {
				t.Errorf("%s figure %q is not snake_case", m, n)
			}
		}
	}
	if _, err := LookupMetrics("storm.podStatusPatches"); err == nil || !strings.Contains(err.Error(), `unknown metric "storm.podStatusPatches"`) {
		t.Errorf("LookupMetrics of a former name: %v, want unknown metric", err)
	}
}

// TestFlowMetrics: "excess.<flow>" names a flow's excess per restart for
// compare and gate; a flow the run did not send reads 0 when the run
// measured flows, and an unknown flow is refused.
func TestFlowMetrics(t *testing.T) {
	ms, err := LookupMetrics("excess.kubelet", result.MetricExcessPerRestart, "excess.endpointslice-controller")
	if err != nil {
		t.Fatal(err)
	}
	if ms[0].ID != "excess.kubelet" || ms[1].ID != result.MetricExcessPerRestart || ms[2].ID != "excess.endpointslice-controller" {
		t.Errorf("looked up %s, %s, %s", ms[0].ID, ms[1].ID, ms[2].ID)
	}
	if _, err := LookupMetrics("excess.kubelets"); err == nil || !strings.Contains(err.Error(), "excess.<flow>") {
		t.Errorf("an unknown flow: %v, want an error listing the flows", err)
	}
	flowValue := func(flow string, x float64) result.Value {
		return result.Value{Name: apiserver.ExcessPerRestart, Window: result.WindowStorm, Value: x, Labels: result.Labels(result.LabelFlow, flow)}
	}
	withFlows := &result.VariantRun{Measurements: []result.Measurement{{Name: apiserver.Name, Values: []result.Value{
		{Name: apiserver.ExcessPerRestart, Window: result.WindowStorm, Value: 50}, flowValue("kubelet", 42)}}}}
	withoutFlows := &result.VariantRun{Measurements: []result.Measurement{{Name: apiserver.Name, Values: []result.Value{
		{Name: apiserver.ExcessPerRestart, Window: result.WindowStorm, Value: 50}}}}}
	for _, tt := range []struct {
		name   string
		m      Metric
		v      *result.VariantRun
		want   float64
		wantOK bool
	}{
		{"a flow measured", ms[0], withFlows, 42, true},
		{"a flow that sent nothing", ms[2], withFlows, 0, true},
		{"a run without flows", ms[0], withoutFlows, 0, false},
	} {
		if got, ok := tt.m.Extract(tt.v); got != tt.want || ok != tt.wantOK {
			t.Errorf("%s: %v, %t; want %v, %t", tt.name, got, ok, tt.want, tt.wantOK)
		}
	}
}
