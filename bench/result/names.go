package result

import (
	"fmt"
	"regexp"
)

// The schema's shared vocabulary: window names, units and label keys. The
// names of figures and measurements are constants of their owners
// (bench/measure, the simulator's counters too).

// Window names.
const (
	// WindowBaseline is the window measured before the storm starts.
	WindowBaseline = "baseline"
	// WindowStorm runs from the storm's start to the gather after recovery.
	WindowStorm = "storm"
)

// Units.
const (
	UnitRequests          = "requests"
	UnitRequestsPerSecond = "requests/s"
	UnitSeconds           = "seconds"
	UnitBytes             = "bytes"
	UnitCount             = "count"
	UnitCores             = "cores"
	UnitEvents            = "events"
	UnitEndpointSeconds   = "endpoint-seconds"
	UnitMicroseconds      = "microseconds"
	UnitRatio             = "ratio"
)

// Label keys.
const (
	LabelVerb          = "verb"
	LabelResource      = "resource"
	LabelSubresource   = "subresource"
	LabelCode          = "code"
	LabelClass         = "class"
	LabelComponent     = "component"
	LabelPriorityLevel = "priority_level"
	LabelFlowSchema    = "flow_schema"
	LabelReason        = "reason"
	LabelRequestKind   = "request_kind"
	LabelOperation     = "operation"
	LabelSource        = "source"
	LabelService       = "service"
	LabelDirection     = "direction"
	// LabelKind qualifies recovery values: node, pod, service.
	LabelKind = "kind"
	// LabelFlow names who sent requests: a flow of the API server's APF
	// classification (cluster.FlowOf: kubelet, endpointslice-controller,
	// kwok, harness, ...).
	LabelFlow = "flow"
)

// The IDs of the metrics bench/compare reads (compare.KeyMetrics,
// compare.SelfCostMetrics), "<measurement>.<name>": when a metric is one
// figure as emitted, name is the figure's name; when it is a histogram's
// percentile or one label value of a figure, name is compare's own, built
// on the figure's or the label value's name. The IDs are stable: profiles,
// --max-regression flags, committed baselines and perfdash files name them
// (the gate's perfdash golden and the resolved quick profile pin them).
const (
	MetricRequests         = "apiserver.requests"
	MetricRequestRatePeak  = "apiserver.requests_per_second_peak"
	MetricExcessPerRestart = "apiserver.excess_requests_per_restart"
	MetricBurstSeconds     = "apiserver.burst_seconds"
	MetricThrottled        = "apiserver.throttled_requests"
	// MetricFlowRejected sums the figure over its flow schemas and
	// priority levels.
	MetricFlowRejected = "apiserver.apf_rejected_requests"
	// MetricFlowInqueueMax is the figure of the busiest priority level.
	MetricFlowInqueueMax = "apiserver.apf_inqueue_requests_max"
	// MetricInflightMutatingMax is apiserver.InflightMax of the mutating
	// requests.
	MetricInflightMutatingMax = "apiserver.inflight_mutating_max"
	// MetricMutatingP99 and MetricListP99 are the p99 of
	// apiserver.RequestDuration of a verb class.
	MetricMutatingP99 = "apiserver.mutating_p99"
	MetricListP99     = "apiserver.list_p99"
	// MetricAPIServerCPUSeconds, MetricEtcdCPUSeconds and
	// MetricKCMCPUSeconds are apiserver.CPUSeconds of one component.
	MetricAPIServerCPUSeconds = "apiserver.apiserver_cpu_seconds"
	MetricEtcdCPUSeconds      = "apiserver.etcd_cpu_seconds"
	MetricKCMCPUSeconds       = "apiserver.kcm_cpu_seconds"

	MetricSliceWrites     = "endpointSlices.slice_writes"
	MetricFanOutEvents    = "endpointSlices.fanout_events_estimate"
	MetricReadyFlips      = "endpointSlices.ready_flips" // ready → not-ready only
	MetricNotReadyPeak    = "endpointSlices.not_ready_endpoints_peak"
	MetricNotReadySeconds = "endpointSlices.not_ready_endpoint_seconds"
	MetricOutageSeconds   = "endpointSlices.outage_seconds"
	MetricNodeReadyP50    = "recovery.node_ready_p50"
	MetricNodeReadyP99    = "recovery.node_ready_p99"
	MetricPodReadyP50     = "recovery.pod_ready_p50"
	MetricPodReadyP99     = "recovery.pod_ready_p99"
	MetricServiceReadyP50 = "recovery.service_ready_p50"
	MetricServiceReadyP99 = "recovery.service_ready_p99"
	// MetricFleetRecovered is the maximum of recovery.FleetRecovered.
	MetricFleetRecovered = "recovery.fleet_recovered"

	MetricPodStatusPatches = "storm.pod_status_patches"
	MetricReadyFlipsDown   = "storm.ready_flips_down"
	MetricStormCPUSeconds  = "storm.stormbench_cpu_seconds"
	// MetricStandingCPU and MetricMarginalCPUPerRestart split
	// MetricStormCPUSeconds into stormbench's standing cost (baseline
	// window) and its marginal cost per restart (compare.SelfCostMetrics).
	MetricStandingCPU           = "storm.stormbench_standing_cpu_per_1k_nodes"
	MetricMarginalCPUPerRestart = "storm.stormbench_marginal_cpu_seconds_per_restart"

	// FlowMetricPrefix starts the ID of a flow's metric
	// (compare.FlowMetric): "excess.kubelet",
	// "excess.endpointslice-controller".
	FlowMetricPrefix = "excess."
)

// KeyMetricIDs are the IDs of the key metrics, in display order: compare
// defines each (compare.KeyMetrics, in this order), and profiles checks a
// gate's metric against them before a run.
var KeyMetricIDs = []string{
	MetricRequests, MetricRequestRatePeak, MetricExcessPerRestart, MetricBurstSeconds, MetricThrottled,
	MetricFlowRejected, MetricFlowInqueueMax, MetricInflightMutatingMax, MetricMutatingP99, MetricListP99,
	MetricAPIServerCPUSeconds, MetricEtcdCPUSeconds, MetricKCMCPUSeconds,
	MetricSliceWrites, MetricFanOutEvents, MetricReadyFlips, MetricNotReadyPeak, MetricNotReadySeconds, MetricOutageSeconds,
	MetricNodeReadyP50, MetricNodeReadyP99, MetricPodReadyP50, MetricPodReadyP99, MetricServiceReadyP50, MetricServiceReadyP99,
	MetricFleetRecovered, MetricPodStatusPatches, MetricReadyFlipsDown, MetricStormCPUSeconds,
}

// VariantNamePattern is what a variant's name may be: it names the variant
// in results and in the benchfmt export (BenchmarkStorm/variant=NAME), where
// a space, a '/' or an '=' would break the line or its keys. A sweep step's
// runs add "/wave=<size>" to it (SweepVariantName).
const VariantNamePattern = `^[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$`

var variantNameRE = regexp.MustCompile(VariantNamePattern)

// CheckVariantName checks a variant's name against VariantNamePattern.
func CheckVariantName(name string) error {
	if !variantNameRE.MatchString(name) {
		return fmt.Errorf("must be 1 to 63 letters, digits, '.', '_' or '-', starting and ending with a letter or digit (%s)", VariantNamePattern)
	}
	return nil
}

// checkRunName checks a variant run's name: a variant's name, or a sweep
// step's, the variant's name and "/wave=<size>".
func checkRunName(v *VariantRun) error {
	name := v.Variant
	if step, ok := v.SweepOf(); ok && name == SweepVariantName(step.Variant, step.WaveSize) {
		name = step.Variant
	}
	return CheckVariantName(name)
}
