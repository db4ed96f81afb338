package result

import (
	"fmt"
	"regexp"
	"strings"
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

// Figure names are snake_case (requests_per_second_peak, fleet_recovered,
// pod_status_patches). Before schema version 4 the storm, host and
// steadyWatches measurements named theirs in camelCase; FigureAliases
// maps those names, by measurement, to today's. Decode renames them in a
// document of an older schema, so committed baselines still read and
// compare against new results, and the gates' metric IDs accept them
// (CanonicalMetricID).
var FigureAliases = map[string]map[string]string{
	"storm": {
		"podStatusPatches":                   "pod_status_patches",
		"readyFlipsDown":                     "ready_flips_down",
		"readyFlipsUp":                       "ready_flips_up",
		"readyFlipsCoalesced":                "ready_flips_coalesced",
		"statusUpdatesCoalesced":             "status_updates_coalesced",
		"tokenRequests":                      "token_requests",
		"objectWatches":                      "object_watches",
		"containerRestarts":                  "container_restarts",
		"memoryEmptyDirsLost":                "memory_empty_dirs_lost",
		"podsRejected":                       "pods_rejected",
		"podsDeleted":                        "pods_deleted",
		"podsDrained":                        "pods_drained",
		"eventsDropped":                      "events_dropped",
		"statusSyncsDropped":                 "status_syncs_dropped",
		"stormbenchCPUSeconds":               "stormbench_cpu_seconds",
		"stormbenchPeakRSSBytes":             "stormbench_peak_rss_bytes",
		"stormbenchRSSStartBytes":            "stormbench_rss_start_bytes",
		"stormbenchRSSPeakBytes":             "stormbench_rss_peak_bytes",
		"stormbenchRSSGrowthPerRestartBytes": "stormbench_rss_growth_per_restart_bytes",
		"podsLost":                           "pods_lost",
		"staleReadinessFixed":                "stale_readiness_fixed",
	},
	"host": {
		"busyP50":           "busy_p50",
		"busyMax":           "busy_max",
		"busyMean":          "busy_mean",
		"iowaitMean":        "iowait_mean",
		"stealMean":         "steal_mean",
		"saturatedSeconds":  "saturated_seconds",
		"saturatedFraction": "saturated_fraction",
		"coreSeconds":       "core_seconds",
		"busyCoreSeconds":   "busy_core_seconds",
		"processCPUSeconds": "process_cpu_seconds",
		"processCPUShare":   "process_cpu_share",
	},
	"steadyWatches": {
		"watchersOpenAtStormStart": "watchers_open_at_storm_start",
		"watchesRenewed":           "watches_renewed",
	},
}

// CanonicalFigure is a figure's name today: its alias's target in
// FigureAliases, or name itself.
func CanonicalFigure(measurement, name string) string {
	if to, ok := FigureAliases[measurement][name]; ok {
		return to
	}
	return name
}

// CanonicalMetricID is a key metric's ID ("measurement.figure", as
// bench/compare names them) with its figure's name today:
// "storm.podStatusPatches" is "storm.pod_status_patches". Any other ID is
// returned as it is.
func CanonicalMetricID(id string) string {
	m, f, ok := strings.Cut(id, ".")
	if !ok {
		return id
	}
	return m + "." + CanonicalFigure(m, f)
}

// renameFigures gives the figures of a document of an older schema their
// names today (FigureAliases): its values, histograms and series.
func renameFigures(r *Result, version int) {
	if version >= 4 {
		return
	}
	for i := range r.Variants {
		for j := range r.Variants[i].Measurements {
			m := &r.Variants[i].Measurements[j]
			for k := range m.Values {
				m.Values[k].Name = CanonicalFigure(m.Name, m.Values[k].Name)
			}
			for k := range m.Histograms {
				m.Histograms[k].Name = CanonicalFigure(m.Name, m.Histograms[k].Name)
			}
			for k := range m.Series {
				m.Series[k].Name = CanonicalFigure(m.Name, m.Series[k].Name)
			}
		}
	}
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
