package compare

import (
	"fmt"
	"slices"
	"strings"

	"github.com/stormbench/stormbench/bench/kubelet"
	"github.com/stormbench/stormbench/bench/measure"
	"github.com/stormbench/stormbench/bench/result"
)

// Metric is a headline figure read from one VariantRun. Every key metric is
// a cost: lower is better.
type Metric struct {
	// ID is the stable name used by gates (--max-regression ID=10%, a
	// profile's gates.maxRegression) and in JSON output:
	// "<measurement>.<figure>".
	ID string `json:"id"`
	// Label names the figure for people.
	Label string `json:"label"`
	// Unit is the figure's unit (result.UnitRequests, result.UnitSeconds ...).
	Unit string `json:"unit"`
	// Extract returns the figure and whether the run measured it.
	Extract func(v *result.VariantRun) (float64, bool) `json:"-"`
}

// Metric IDs used by the absolute SLO gates and the capacity sweep.
const (
	MetricRequestRatePeak = "apiserver.requests_per_second_peak"
	MetricThrottled       = "apiserver.throttled_requests"
	MetricMutatingP99     = "apiserver.mutating_p99"
	MetricListP99         = "apiserver.list_p99"
	MetricOutageSeconds   = "endpointSlices.outage_seconds"
	MetricNodeReadyP99    = "recovery.node_ready_p99"
)

// KeyMetrics returns the fixed list of figures that compare, gate and the
// report show, in display order. The definitions of the underlying figures
// are constants of the measurements that emit them (bench/measure/*_figures.go).
func KeyMetrics() []Metric {
	return []Metric{
		{"apiserver.requests", "API requests (storm)", result.UnitRequests, apiValue(measure.APIRequests)},
		{MetricRequestRatePeak, "API peak request rate", result.UnitRequestsPerSecond, apiValue(measure.APIRequestRatePeak)},
		{"apiserver.excess_requests_per_restart", "API excess requests per restart", result.UnitRequests, apiValue(measure.APIExcessPerRestart)},
		{"apiserver.burst_seconds", "API burst seconds", result.UnitSeconds, apiValue(measure.APIBurstSeconds)},
		{MetricThrottled, "API 429 responses", result.UnitRequests, apiValue(measure.APIThrottled)},
		{"apiserver.apf_rejected_requests", "APF rejected requests", result.UnitRequests, sumValues(measure.MeasurementAPIServer, measure.APIFlowRejected)},
		{"apiserver.apf_inqueue_requests_max", "APF queued requests peak", result.UnitCount, maxValues(measure.MeasurementAPIServer, measure.APIFlowInqueueMax)},
		{"apiserver.inflight_mutating_max", "API in-flight mutating peak", result.UnitCount, apiValue(measure.APIInflightMax, result.LabelRequestKind, "mutating")},
		{MetricMutatingP99, "API p99 mutating (storm)", result.UnitSeconds, requestP99(measure.ClassMutating)},
		{MetricListP99, "API p99 LIST (storm)", result.UnitSeconds, requestP99(measure.ClassList)},
		{"apiserver.apiserver_cpu_seconds", "kube-apiserver CPU seconds", result.UnitSeconds, apiValue(measure.APICPUSeconds, result.LabelComponent, "kube-apiserver")},
		{"apiserver.etcd_cpu_seconds", "etcd CPU seconds", result.UnitSeconds, apiValue(measure.APICPUSeconds, result.LabelComponent, "etcd")},
		{"apiserver.kcm_cpu_seconds", "kube-controller-manager CPU seconds", result.UnitSeconds, apiValue(measure.APICPUSeconds, result.LabelComponent, "kube-controller-manager")},
		{"endpointSlices.slice_writes", "EndpointSlice writes", result.UnitCount, sliceValue(measure.SliceWrites)},
		{"endpointSlices.fanout_events_estimate", "EndpointSlice watch fan-out events (est.)", result.UnitEvents, sliceValue(measure.SliceFanOutEvents)},
		{"endpointSlices.ready_flips", "Endpoint ready→not-ready flips", result.UnitCount, sliceValue(measure.SliceReadyFlips, result.LabelDirection, measure.DirectionReadyToNot)},
		{"endpointSlices.not_ready_endpoints_peak", "Not-ready endpoints peak", result.UnitCount, sliceValue(measure.SliceNotReadyPeak)},
		{"endpointSlices.not_ready_endpoint_seconds", "Not-ready endpoint-seconds", result.UnitEndpointSeconds, sliceValue(measure.SliceNotReadySeconds)},
		{MetricOutageSeconds, "Service outage seconds", result.UnitSeconds, sliceValue(measure.SliceOutageSeconds)},
		{"recovery.node_ready_p50", "Node recovery p50", result.UnitSeconds, recoveryQuantile(measure.RecoveryNode, 50)},
		{MetricNodeReadyP99, "Node recovery p99", result.UnitSeconds, recoveryQuantile(measure.RecoveryNode, 99)},
		{"recovery.pod_ready_p50", "Pod recovery p50", result.UnitSeconds, recoveryQuantile(measure.RecoveryPod, 50)},
		{"recovery.pod_ready_p99", "Pod recovery p99", result.UnitSeconds, recoveryQuantile(measure.RecoveryPod, 99)},
		{"recovery.service_ready_p50", "Service recovery p50", result.UnitSeconds, recoveryQuantile(measure.RecoveryService, 50)},
		{"recovery.service_ready_p99", "Service recovery p99", result.UnitSeconds, recoveryQuantile(measure.RecoveryService, 99)},
		{"recovery.fleet_recovered", "Fleet recovered after", result.UnitSeconds, recoveryQuantile(measure.RecoveryStorm, 100)},
		{"storm.podStatusPatches", "Pod status patches (simulator)", result.UnitCount, stormValue(kubelet.CounterPodStatusPatches)},
		{"storm.readyFlipsDown", "Pod ready flips down (simulator)", result.UnitCount, stormValue(kubelet.CounterReadyFlipsDown)},
		{"storm.stormbenchCPUSeconds", "stormbench CPU seconds", result.UnitSeconds, stormValue(measure.StormCPUSeconds)},
	}
}

// LookupMetrics returns the key metrics with the given IDs, in the given
// order, or an error naming every unknown ID and listing the known ones.
func LookupMetrics(ids ...string) ([]Metric, error) {
	all := KeyMetrics()
	var out []Metric
	var unknown []string
	for _, id := range ids {
		i := slices.IndexFunc(all, func(m Metric) bool { return m.ID == id })
		if i < 0 {
			unknown = append(unknown, id)
			continue
		}
		out = append(out, all[i])
	}
	if len(unknown) > 0 {
		return nil, fmt.Errorf("unknown metric %s (known: %s)", strings.Join(quoteAll(unknown), ", "), strings.Join(MetricIDs(), ", "))
	}
	return out, nil
}

// MetricIDs lists the IDs of the key metrics in display order.
func MetricIDs() []string {
	var ids []string
	for _, m := range KeyMetrics() {
		ids = append(ids, m.ID)
	}
	return ids
}

func quoteAll(s []string) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = fmt.Sprintf("%q", x)
	}
	return out
}

func apiValue(name string, labels ...string) func(*result.VariantRun) (float64, bool) {
	return func(v *result.VariantRun) (float64, bool) {
		return v.Measurement(measure.MeasurementAPIServer).Value(name, result.WindowStorm, labels...)
	}
}

func sliceValue(name string, labels ...string) func(*result.VariantRun) (float64, bool) {
	return func(v *result.VariantRun) (float64, bool) {
		return v.Measurement(measure.MeasurementEndpointSlices).Value(name, result.WindowStorm, labels...)
	}
}

func stormValue(name string) func(*result.VariantRun) (float64, bool) {
	return func(v *result.VariantRun) (float64, bool) {
		return v.Measurement(measure.MeasurementStorm).Value(name, result.WindowStorm)
	}
}

// sumValues adds up every storm-window figure of the name, whatever its
// labels (for example APF rejections per flow schema).
func sumValues(measurement, name string) func(*result.VariantRun) (float64, bool) {
	return func(v *result.VariantRun) (float64, bool) {
		m := v.Measurement(measurement)
		if m == nil {
			return 0, false
		}
		sum, ok := 0.0, false
		for _, x := range m.Values {
			if x.Name == name && x.Window == result.WindowStorm {
				sum, ok = sum+x.Value, true
			}
		}
		return sum, ok
	}
}

// maxValues returns the highest storm-window figure of the name across its
// labels (for example the APF queue peak of the busiest priority level).
func maxValues(measurement, name string) func(*result.VariantRun) (float64, bool) {
	return func(v *result.VariantRun) (float64, bool) {
		m := v.Measurement(measurement)
		if m == nil {
			return 0, false
		}
		best, ok := 0.0, false
		for _, x := range m.Values {
			if x.Name == name && x.Window == result.WindowStorm && (!ok || x.Value > best) {
				best, ok = x.Value, true
			}
		}
		return best, ok
	}
}

// requestP99 is the storm-window p99 of apiserver_request_duration_seconds
// for a verb class, interpolated within buckets as histogram_quantile does.
// A class with no requests has no p99.
func requestP99(class string) func(*result.VariantRun) (float64, bool) {
	return func(v *result.VariantRun) (float64, bool) {
		h := v.Measurement(measure.MeasurementAPIServer).Histogram(measure.APIRequestDuration, result.WindowStorm, result.LabelClass, class)
		if h == nil || h.Summary.Count == 0 {
			return 0, false
		}
		return h.Summary.P99, true
	}
}

// recoveryQuantile reads a recovery histogram's percentile (100 = max).
// A histogram with no samples (nothing went not-ready) has no percentile.
func recoveryQuantile(name string, q float64) func(*result.VariantRun) (float64, bool) {
	return func(v *result.VariantRun) (float64, bool) {
		h := v.Measurement(measure.MeasurementRecovery).Histogram(name, result.WindowStorm)
		if h == nil || h.Summary.Count == 0 {
			return 0, false
		}
		switch q {
		case 50:
			return h.Summary.P50, true
		case 90:
			return h.Summary.P90, true
		case 99:
			return h.Summary.P99, true
		case 100:
			return h.Summary.Max, true
		}
		return 0, false
	}
}
