package result

// The schema's shared vocabulary: window names, units and label keys. The
// names of figures and measurements are constants of their owners
// (bench/measure, and bench/kubelet for the simulator's counters).

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
)
