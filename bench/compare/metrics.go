package compare

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/stormbench/stormbench/bench/cluster"
	"github.com/stormbench/stormbench/bench/measure"
	"github.com/stormbench/stormbench/bench/measure/apiserver"
	"github.com/stormbench/stormbench/bench/measure/churn"
	"github.com/stormbench/stormbench/bench/measure/recovery"
	"github.com/stormbench/stormbench/bench/measure/self"
	"github.com/stormbench/stormbench/bench/result"
)

// Metric is a headline figure read from one VariantRun. Every key metric is
// a cost: lower is better.
type Metric struct {
	// ID is the stable name used by gates (--max-regression ID=10%, a
	// profile's gates.maxRegression) and in JSON output:
	// "<measurement>.<figure>" (see result.KeyMetricIDs).
	ID string `json:"id"`
	// Label names the figure for people.
	Label string `json:"label"`
	// Unit is the figure's unit (result.UnitRequests, result.UnitSeconds ...).
	Unit string `json:"unit"`
	// Extract returns the figure and whether the run measured it.
	Extract func(v *result.VariantRun) (float64, bool) `json:"-"`

	// source is the figure Extract reads, so that a test can check it
	// against the measurements' vocabulary.
	source source
}

// SelfCostMetrics are stormbench's own CPU split in two: not key metrics
// (a key metric adds a test to every comparison's multiplicity and a row to
// every table); compare takes them by ID.
func SelfCostMetrics() []Metric {
	standing := source{measurement: self.Name, figure: self.StandingCPU, window: result.WindowBaseline}
	return []Metric{
		metric(result.MetricStandingCPU, "stormbench standing CPU per 1,000 nodes", result.UnitCores, standing),
		metric(result.MetricMarginalCPUPerRestart, "stormbench marginal CPU per restart", result.UnitSeconds, value(self.Name, self.MarginalCPUPerRestart)),
	}
}

// KeyMetrics returns the fixed list of figures that compare, gate and the
// report show, in display order (result.KeyMetricIDs). The definitions of the underlying figures
// are constants of the measurements that emit them (bench/measure/*_figures.go).
func KeyMetrics() []Metric {
	api, slices, rec := apiserver.Name, churn.Name, recovery.Name
	return []Metric{
		metric(result.MetricRequests, "API requests (storm)", result.UnitRequests, value(api, apiserver.Requests)),
		metric(result.MetricRequestRatePeak, "API peak request rate", result.UnitRequestsPerSecond, value(api, apiserver.RequestRatePeak)),
		// The excess the storm caused: the simulation's own flows (KWOK's,
		// the harness's) taken out (METRICS.md); FlowMetric splits it.
		metric(result.MetricExcessPerRestart, "API excess requests per restart", result.UnitRequests, value(api, apiserver.ExcessPerRestart)),
		metric(result.MetricBurstSeconds, "API burst seconds", result.UnitSeconds, value(api, apiserver.BurstSeconds)),
		metric(result.MetricThrottled, "API 429 responses", result.UnitRequests, value(api, apiserver.Throttled)),
		metric(result.MetricFlowRejected, "APF rejected requests", result.UnitRequests, sumValues(api, apiserver.FlowRejected)),
		metric(result.MetricFlowInqueueMax, "APF queued requests peak", result.UnitCount, maxValues(api, apiserver.FlowInqueueMax)),
		metric(result.MetricInflightMutatingMax, "API in-flight mutating peak", result.UnitCount, value(api, apiserver.InflightMax, result.LabelRequestKind, apiserver.RequestKindMutating)),
		metric(result.MetricMutatingP99, "API p99 mutating (storm)", result.UnitSeconds, quantile(api, apiserver.RequestDuration, 99, result.LabelClass, apiserver.ClassMutating)),
		metric(result.MetricListP99, "API p99 LIST (storm)", result.UnitSeconds, quantile(api, apiserver.RequestDuration, 99, result.LabelClass, apiserver.ClassList)),
		metric(result.MetricAPIServerCPUSeconds, "kube-apiserver CPU seconds", result.UnitSeconds, value(api, apiserver.CPUSeconds, result.LabelComponent, measure.ComponentAPIServer)),
		metric(result.MetricEtcdCPUSeconds, "etcd CPU seconds", result.UnitSeconds, value(api, apiserver.CPUSeconds, result.LabelComponent, measure.ComponentEtcd)),
		metric(result.MetricKCMCPUSeconds, "kube-controller-manager CPU seconds", result.UnitSeconds, value(api, apiserver.CPUSeconds, result.LabelComponent, measure.ComponentControllerManager)),
		metric(result.MetricSliceWrites, "EndpointSlice writes", result.UnitCount, value(slices, churn.SliceWrites)),
		metric(result.MetricFanOutEvents, "EndpointSlice watch fan-out events (est.)", result.UnitEvents, value(slices, churn.SliceFanOutEvents)),
		metric(result.MetricReadyFlips, "Endpoint ready→not-ready flips", result.UnitCount, value(slices, churn.SliceReadyFlips, result.LabelDirection, churn.DirectionReadyToNot)),
		metric(result.MetricNotReadyPeak, "Not-ready endpoints peak", result.UnitCount, value(slices, churn.SliceNotReadyPeak)),
		metric(result.MetricNotReadySeconds, "Not-ready endpoint-seconds", result.UnitEndpointSeconds, value(slices, churn.SliceNotReadySeconds)),
		metric(result.MetricOutageSeconds, "Service outage seconds", result.UnitSeconds, value(slices, churn.SliceOutageSeconds)),
		metric(result.MetricNodeReadyP50, "Node recovery p50", result.UnitSeconds, quantile(rec, recovery.Node, 50)),
		metric(result.MetricNodeReadyP99, "Node recovery p99", result.UnitSeconds, quantile(rec, recovery.Node, 99)),
		metric(result.MetricPodReadyP50, "Pod recovery p50", result.UnitSeconds, quantile(rec, recovery.Pod, 50)),
		metric(result.MetricPodReadyP99, "Pod recovery p99", result.UnitSeconds, quantile(rec, recovery.Pod, 99)),
		metric(result.MetricServiceReadyP50, "Service recovery p50", result.UnitSeconds, quantile(rec, recovery.Service, 50)),
		metric(result.MetricServiceReadyP99, "Service recovery p99", result.UnitSeconds, quantile(rec, recovery.Service, 99)),
		metric(result.MetricFleetRecovered, "Fleet recovered after", result.UnitSeconds, quantile(rec, recovery.FleetRecovered, 100)),
		metric(result.MetricPodStatusPatches, "Pod status patches (simulator)", result.UnitCount, value(self.Name, self.PodStatusPatches)),
		metric(result.MetricReadyFlipsDown, "Pod ready flips down (simulator)", result.UnitCount, value(self.Name, self.ReadyFlipsDown)),
		metric(result.MetricStormCPUSeconds, "stormbench CPU seconds", result.UnitSeconds, value(self.Name, self.CPUSeconds)),
	}
}

func metric(id, label, unit string, s source) Metric {
	return Metric{ID: id, Label: label, Unit: unit, Extract: s.read, source: s}
}

// source is the figure a key metric reads: a value or a histogram of a
// measurement in a window (the storm's unless set), with exactly the given
// labels (alternating keys and values) unless fold aggregates every label
// set.
type source struct {
	measurement, figure string
	labels              []string
	window              string
	// histogram is set when the figure is a histogram, read at quantile.
	histogram bool
	quantile  float64
	// fold, when set, folds every value of the figure, whatever its
	// labels, into one.
	fold func(acc, x float64) float64
}

// read returns v's figure and whether v measured it.
func (s source) read(v *result.VariantRun) (float64, bool) {
	m, window := v.Measurement(s.measurement), cmp.Or(s.window, result.WindowStorm)
	switch {
	case s.histogram:
		h := m.Histogram(s.figure, window, s.labels...)
		if h == nil || h.Summary.Count == 0 {
			return 0, false
		}
		x, ok := map[float64]float64{50: h.Summary.P50, 90: h.Summary.P90, 99: h.Summary.P99, 100: h.Summary.Max}[s.quantile]
		return x, ok
	case s.fold != nil:
		if m == nil {
			return 0, false
		}
		acc, ok := 0.0, false
		for _, x := range m.Values {
			switch {
			case x.Name != s.figure || x.Window != window:
			case ok:
				acc = s.fold(acc, x.Value)
			default:
				acc, ok = x.Value, true
			}
		}
		return acc, ok
	}
	return m.Value(s.figure, window, s.labels...)
}

// LookupMetrics returns the key metrics and SelfCostMetrics with the given
// IDs, in the given order, or an error naming every unknown ID and listing
// the known ones. "excess.<flow>" names a flow's metric (FlowMetric).
func LookupMetrics(ids ...string) ([]Metric, error) {
	all := append(KeyMetrics(), SelfCostMetrics()...)
	var out []Metric
	var unknown []string
	for _, id := range ids {
		i := slices.IndexFunc(all, func(m Metric) bool { return m.ID == id })
		flow, isFlow := strings.CutPrefix(id, result.FlowMetricPrefix)
		switch {
		case i >= 0:
			out = append(out, all[i])
		case isFlow && slices.Contains(cluster.Flows(), flow):
			out = append(out, FlowMetric(flow))
		default:
			unknown = append(unknown, id)
		}
	}
	if len(unknown) > 0 {
		return nil, fmt.Errorf("unknown metric %s (known: %s; and %s<flow> for a flow: %s)", strings.Join(quoteAll(unknown), ", "),
			strings.Join(result.KeyMetricIDs, ", "), result.FlowMetricPrefix, strings.Join(cluster.Flows(), ", "))
	}
	return out, nil
}

// FlowMetric is one flow's share of the key excess: the storm's API
// excess requests per restart sent by the flow (cluster.Flows;
// apiserver.ExcessPerRestart labelled flow). It is not a key metric (a
// table of every flow would be long); compare and gate take it by ID. A
// run that measured flows but none of this one reads 0.
func FlowMetric(flow string) Metric {
	s := source{measurement: apiserver.Name, figure: apiserver.ExcessPerRestart, labels: []string{result.LabelFlow, flow}}
	fm := metric(result.FlowMetricPrefix+flow, "API excess requests per restart: "+flow, result.UnitRequests, s)
	fm.Extract = func(v *result.VariantRun) (float64, bool) {
		if x, ok := s.read(v); ok {
			return x, true
		}
		m := v.Measurement(apiserver.Name)
		return 0, m != nil && slices.ContainsFunc(m.Values, func(x result.Value) bool {
			return x.Name == apiserver.ExcessPerRestart && x.Window == result.WindowStorm && x.Labels[result.LabelFlow] != ""
		})
	}
	return fm
}

func quoteAll(s []string) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = fmt.Sprintf("%q", x)
	}
	return out
}

// value reads a storm-window value.
func value(measurement, name string, labels ...string) source {
	return source{measurement: measurement, figure: name, labels: labels}
}

// sumValues adds up every storm-window figure of the name, whatever its
// labels (for example APF rejections per flow schema).
func sumValues(measurement, name string) source {
	return source{measurement: measurement, figure: name, fold: func(acc, x float64) float64 { return acc + x }}
}

// maxValues returns the highest storm-window figure of the name across its
// labels (for example the APF queue peak of the busiest priority level).
func maxValues(measurement, name string) source {
	return source{measurement: measurement, figure: name, fold: func(acc, x float64) float64 { return max(acc, x) }}
}

// quantile reads a storm-window histogram's percentile (50, 90, 99, or 100
// for the maximum). A histogram with no samples (no request of the verb
// class, nothing went not-ready) has no percentile. Bucket histograms such
// as apiserver_request_duration_seconds' are interpolated within buckets as
// histogram_quantile does, when the histogram is built (result.Summary).
func quantile(measurement, name string, q float64, labels ...string) source {
	return source{measurement: measurement, figure: name, labels: labels, histogram: true, quantile: q}
}
