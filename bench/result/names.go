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
