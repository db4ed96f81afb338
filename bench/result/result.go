package result

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// SchemaVersion is the version of the result document this package writes
// and the only one Decode reads.
const SchemaVersion = 4

// Result is one run's result document.
type Result struct {
	// SchemaVersion is always SchemaVersion when written by this package.
	SchemaVersion int `json:"schemaVersion"`
	// Complete is false for a run that stopped early (an error, Ctrl-C):
	// the document then holds whatever was gathered up to that point.
	Complete bool `json:"complete"`
	// Run describes the run: tool, cluster, fleet, profile, seed.
	Run Run `json:"run"`
	// Variants holds one entry per variant and repetition, in run order.
	Variants []VariantRun `json:"variants"`
	// Errors are run-level failures (cluster, fleet), in order.
	Errors []string `json:"errors,omitempty"`
}

// Run is the run metadata.
type Run struct {
	// ID is the run identifier; it is also the value of the run label on
	// every object the run created.
	ID string `json:"id"`
	// ToolVersion is stormbench's version.
	ToolVersion string `json:"toolVersion"`
	// GitRevision is the VCS revision stormbench was built from, if known.
	GitRevision string `json:"gitRevision,omitempty"`
	// Start is when the run started.
	Start time.Time `json:"start"`
	// End is when the run ended; zero while it is still going.
	End time.Time `json:"end,omitzero"`
	// Cluster describes the control plane the run drove.
	Cluster Cluster `json:"cluster"`
	// Fleet is the size of the simulated fleet.
	Fleet Fleet `json:"fleet"`
	// Seed is the seed every random choice was drawn from.
	Seed int64 `json:"seed"`
	// FeatureGates are the storm's base feature gates; each VariantRun
	// carries the resolved gates it ran with.
	FeatureGates map[string]bool `json:"featureGates,omitempty"`
	// Profile is the resolved storm profile (defaults applied), as JSON. It is
	// kept opaque here so that this package does not depend on the profile
	// types; it includes the profile's CI gates.
	Profile json.RawMessage `json:"profile,omitempty"`
	// MergedFrom names the shard results this document was merged from
	// (see Merge), in merge order; empty for a run's own result.
	MergedFrom []string `json:"mergedFrom,omitempty"`
	// Shard is this document's share of a sharded run (run --shard i/n),
	// which Merge checks to refuse a shard given twice and to report the
	// missing ones. It is nil for a run without --shard, for a merged
	// document, and in files written before it was recorded.
	Shard *Shard `json:"shard,omitempty"`
	// Order is the order the storms ran in: one block per repetition,
	// every variant once per block, shuffled per block from the seed
	// (repetitions: N). Empty in files written before it was recorded.
	Order [][]string `json:"order,omitempty"`
	// Seeds says which schedule the blocks of Order played: one, the
	// seed's, in every block (the intervals then cover run-to-run noise
	// only), or each block its own. Nil in files written before it was
	// recorded, which all replayed one schedule.
	Seeds *Seeds `json:"seeds,omitempty"`
	// Isolation says how the storms were kept from inheriting each other's
	// state: IsolationRestored or IsolationNone; empty for a single storm
	// and in files written before it was recorded.
	Isolation string `json:"isolation,omitempty"`
	// GoRuntime is the Go runtime's garbage-collector settings the
	// stormbench process ran with; nil in files written before it was
	// recorded.
	GoRuntime *GoRuntime `json:"goRuntime,omitempty"`
	// Machine is the host stormbench ran on (see Machine); nil in files
	// written before it was recorded. The run's other provenance is in
	// GitRevision, Cluster.Versions, Cluster.ControlPlaneCPUs and each
	// VariantRun's HostBound.
	Machine *Machine `json:"machine,omitempty"`
}

// GoRuntime records the garbage-collector settings of the stormbench
// process: they move its CPU per restart, which the control plane shares
// the machine with.
type GoRuntime struct {
	// GOGC is the GC percent (debug.SetGCPercent); -1 when off.
	GOGC int `json:"gogc"`
	// MemoryLimitBytes is the soft memory limit (debug.SetMemoryLimit);
	// 0 when none (math.MaxInt64 in the runtime).
	MemoryLimitBytes int64 `json:"memoryLimitBytes,omitempty"`
	// GOMAXPROCS is the number of CPUs Go code ran on at once.
	GOMAXPROCS int `json:"gomaxprocs"`
}

// Seeds is how the blocks of a run's repetitions chose their schedules
// (the profile's repetitions.seeds).
type Seeds struct {
	// Mode is "fixed" (every block replayed the run's seed) or "vary" (each
	// block drew its own schedule).
	Mode string `json:"mode"`
	// Blocks are the seeds of the blocks, in order, with Mode "vary".
	Blocks []int64 `json:"blocks,omitempty"`
}

// Vary reports whether each block of s drew its own schedule; false for
// nil (files written before it was recorded).
func (s *Seeds) Vary() bool { return s != nil && s.Mode == "vary" }

// Shard is one share of a sharded run: the restarts of the run's schedule
// that storm.Schedule.Shard gives shard Index of Count.
type Shard struct {
	// Index is the shard's index, from 0 to Count-1.
	Index int `json:"index"`
	// Count is the number of shards the run was split into.
	Count int `json:"count"`
}

// String returns the shard as run --shard spells it: "i/n".
func (s Shard) String() string { return strconv.Itoa(s.Index) + "/" + strconv.Itoa(s.Count) }

// Isolations of a run's storms.
const (
	// IsolationRestored: the fleet snapshot taken after provisioning (or
	// given with run --from-snapshot) was restored before every storm.
	IsolationRestored = "restored"
	// IsolationNone: every storm started from the state the previous one
	// left (an existing cluster, run --no-restore, real kubelets).
	IsolationNone = "none"
)

// Cluster describes the control plane.
type Cluster struct {
	// Embedded is true for stormbench's own kwokctl cluster and false for a
	// cluster reached through --kubeconfig.
	Embedded bool `json:"embedded"`
	// Versions maps a component (kube-apiserver, kube-controller-manager,
	// etcd, kwok) to its version.
	Versions map[string]string `json:"versions,omitempty"`
	// KubernetesVersion is the Kubernetes version the run was of (the
	// profile's kubernetes.version or --kube-version, default v1.36.3):
	// the embedded control plane's, whose API server reported exactly it
	// (Versions["kube-apiserver"]), the real kubelets' and the simulated
	// kubelets' (their feature-gate defaults). On a cluster of its own
	// (--kubeconfig) it is the simulated kubelets' version, and the
	// cluster's minor release was checked against it when the profile or
	// the flag named one. Empty in files written before it was recorded.
	KubernetesVersion string `json:"kubernetesVersion,omitempty"`
	// Settings are the component settings that shape a restart storm.
	Settings Settings `json:"settings"`
	// ControlPlaneCPUs is the CPU quota, in cores, kube-apiserver and etcd
	// of the embedded cluster ran under (the profile's controlPlane.cpus);
	// 0 for none.
	ControlPlaneCPUs float64 `json:"controlPlaneCPUs,omitempty"`
}

// Settings are the component flags that matter to a restart storm. A zero
// duration means "not known" unless the field says otherwise.
type Settings struct {
	// NodeMonitorGracePeriod is the KCM's --node-monitor-grace-period.
	NodeMonitorGracePeriod Duration `json:"nodeMonitorGracePeriod"`
	// NodeLeaseDuration is the node lease duration (KWOK's, or the
	// kubelet's nodeLeaseDurationSeconds).
	NodeLeaseDuration Duration `json:"nodeLeaseDuration"`
	// NodeStatusUpdateFrequency is how often node status is refreshed.
	NodeStatusUpdateFrequency Duration `json:"nodeStatusUpdateFrequency"`
	// EndpointSliceUpdatesBatchPeriod is the KCM's
	// --endpointslice-updates-batch-period; zero is the default (no batching).
	EndpointSliceUpdatesBatchPeriod Duration `json:"endpointSliceUpdatesBatchPeriod"`
	// HeartbeatFactor is the profile's timing.heartbeatFactor: above 1,
	// leases, status updates and the grace period are that many times a
	// kubelet's (relaxed heartbeats); 0 in files written before it existed.
	HeartbeatFactor float64 `json:"heartbeatFactor,omitempty"`
	// APF is how the components met API Priority and Fairness on the
	// embedded cluster: "realistic" (identities of their own, classified
	// as in a kubeadm cluster) or "exempt" (all system:masters); empty for
	// a cluster reached through --kubeconfig, and in files written before
	// it existed (those ran exempt).
	APF string `json:"apf,omitempty"`
	// Flags holds any other component flags, by component then flag name.
	Flags map[string]map[string]string `json:"flags,omitempty"`
}

// Fleet is the size of the simulated fleet.
type Fleet struct {
	// Nodes is the number of KWOK nodes.
	Nodes int `json:"nodes"`
	// Pods is the number of workload pods.
	Pods int `json:"pods"`
	// Services is the number of Services in the run namespace.
	Services int `json:"services"`
}

// String describes the fleet in words ("1000 nodes, 20000 pods, 300
// services"), as messages show it, rather than as a Go struct.
func (f Fleet) String() string {
	return fmt.Sprintf("%d nodes, %d pods, %d services", f.Nodes, f.Pods, f.Services)
}

// VariantRun is one repetition of one variant.
type VariantRun struct {
	// Variant is the variant's name.
	Variant string `json:"variant"`
	// Repetition is the 0-based repetition index.
	Repetition int `json:"repetition"`
	// FeatureGates are the resolved feature gates this repetition ran with.
	FeatureGates map[string]bool `json:"featureGates,omitempty"`
	// KubernetesVersion is the Kubernetes version the storm ran on, when it
	// is not the run's (Cluster.KubernetesVersion): a variant of its own
	// version (an upgrade's comparison), restored into that version's
	// control plane.
	KubernetesVersion string `json:"kubernetesVersion,omitempty"`
	// WatchesClosedAfterSync says the simulated kubelets closed their
	// watches after their initial sync instead of holding them.
	WatchesClosedAfterSync bool `json:"watchesClosedAfterSync,omitempty"`
	// Start is when measurements started (before the baseline window).
	Start time.Time `json:"start"`
	// StormStart is when the first restart began.
	StormStart time.Time `json:"stormStart,omitzero"`
	// End is when measurements were gathered, after the recovery wait.
	End time.Time `json:"end,omitzero"`
	// Restarts is the number of node restarts (storm.Restarts: the
	// restarts that took their node down).
	Restarts int `json:"restarts"`
	// WaveStarts are the offsets in seconds from StormStart at which the
	// schedule's waves started, the first wave (0) included. Files written
	// before it was recorded lack it.
	WaveStarts []float64 `json:"waveStarts,omitempty"`
	// Complete is false if this repetition stopped early.
	Complete bool `json:"complete"`
	// ResetSeconds is how long bringing the cluster back to the fleet's
	// starting state took before this storm (run --restore-each: the
	// snapshot restore and the wait until the fleet was Ready and the
	// request rate steady); 0 when there was none.
	ResetSeconds float64 `json:"resetSeconds,omitempty"`
	// Sweep is the capacity sweep step this run played (stormbench sweep):
	// its base variant and wave size. Nil outside a sweep, and in files
	// written before it was recorded, whose sweep variants SweepOf reads
	// from the name.
	Sweep *SweepStep `json:"sweep,omitempty"`
	// HostBound says the machine, not only the control plane, was the
	// limit: the host was at least 90 % busy for more than 10 % of the storm
	// window (host.IsBound, from the "host" measurement).
	HostBound bool `json:"hostBound,omitempty"`
	// Measurements are the gathered measurements, sorted by name.
	Measurements []Measurement `json:"measurements"`
	// Errors are this repetition's failures outside any one measurement.
	Errors []string `json:"errors,omitempty"`
}

// SweepStep is one step of a capacity sweep: a base variant's storm with
// every restart in one wave of WaveSize nodes. The run's variant is named
// SweepVariantName(Variant, WaveSize).
type SweepStep struct {
	// Variant is the profile's variant the step played.
	Variant string `json:"variant"`
	// WaveSize is the number of nodes restarted at once.
	WaveSize int `json:"waveSize"`
}

// SweepVariantName names a sweep step's variant runs: "<variant>/wave=<size>".
func SweepVariantName(variant string, waveSize int) string {
	return fmt.Sprintf("%s%s%d", variant, sweepMarker, waveSize)
}

const sweepMarker = "/wave="

// SweepOf returns the sweep step v played: v.Sweep, or for a file written
// before it was recorded, the step its name says ("<variant>/wave=<size>").
// ok is false outside a sweep.
func (v *VariantRun) SweepOf() (SweepStep, bool) {
	if v.Sweep != nil {
		return *v.Sweep, true
	}
	base, size, ok := strings.Cut(v.Variant, sweepMarker)
	if !ok {
		return SweepStep{}, false
	}
	n, err := strconv.Atoi(size)
	if err != nil || n < 1 {
		return SweepStep{}, false
	}
	return SweepStep{Variant: base, WaveSize: n}, true
}

// Measurement is what one measurement gathered. Figures are tagged with a
// window name (WindowBaseline, WindowStorm, or empty for the whole
// measurement) and labels.
type Measurement struct {
	// Name is the measurement's registered name (apiserver.Name, ...).
	Name string `json:"name"`
	// Error is set when the measurement failed; figures gathered before the
	// failure are kept.
	Error string `json:"error,omitempty"`
	// Windows are the time windows its figures refer to.
	Windows []Window `json:"windows,omitempty"`
	// Values are scalar figures.
	Values []Value `json:"values,omitempty"`
	// Histograms are latency distributions.
	Histograms []Histogram `json:"histograms,omitempty"`
	// Series are time series, one point per scrape or per second.
	Series []Series `json:"series,omitempty"`
	// Warnings are caveats about the figures (a failed scrape, a watch that
	// had to relist), as data rather than log lines.
	Warnings []string `json:"warnings,omitempty"`
}

// Window is a named time interval.
type Window struct {
	// Name is WindowBaseline or WindowStorm.
	Name string `json:"name"`
	// Start is the window's start.
	Start time.Time `json:"start"`
	// End is the window's end.
	End time.Time `json:"end"`
}

// Duration returns the window's length.
func (w Window) Duration() time.Duration { return w.End.Sub(w.Start) }

// Value is one scalar figure.
type Value struct {
	// Name is the figure's name, a constant of the measurement that
	// emits it (bench/measure); see METRICS.md.
	Name string `json:"name"`
	// Window is the window the figure covers; empty for the whole measurement.
	Window string `json:"window,omitempty"`
	// Labels qualify the figure (verb, resource, component ...).
	Labels map[string]string `json:"labels,omitempty"`
	// Unit is the figure's unit (UnitRequests, UnitSeconds, ...).
	Unit string `json:"unit"`
	// Value is the figure. It is always finite.
	Value float64 `json:"value"`
}

// Series is a time series.
type Series struct {
	// Name is the series' name.
	Name string `json:"name"`
	// Labels qualify the series.
	Labels map[string]string `json:"labels,omitempty"`
	// Unit is the unit of the values.
	Unit string `json:"unit"`
	// Start is the time origin of the points.
	Start time.Time `json:"start"`
	// Points are (seconds since Start, value) pairs in time order. A missing
	// point is a gap (for example a failed scrape), not a zero.
	Points []Point `json:"points"`
	// Sparse says the file leaves out the series' zero points at the
	// timestamps of its reference, the unlabelled series of the same name.
	// ReadFile and Decode put them back: a series in memory is never sparse.
	Sparse bool `json:"sparse,omitempty"`
}

// Point is one time-series sample. It is encoded as a two-element JSON
// array [t, v], as in Prometheus' query API; a series' points go 10 to a
// line of the file, t rounded to the millisecond and v to 6 significant
// digits (writeCompact).
type Point struct {
	// T is the offset from the series start, in seconds.
	T float64
	// V is the value.
	V float64
}

// MarshalJSON encodes p as [t, v].
func (p Point) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 32)
	b = append(b, '[')
	b = strconv.AppendFloat(b, p.T, 'f', -1, 64)
	b = append(b, ',')
	b = strconv.AppendFloat(b, p.V, 'g', -1, 64)
	return append(b, ']'), nil
}

// UnmarshalJSON decodes [t, v].
func (p *Point) UnmarshalJSON(b []byte) error {
	var a []float64
	if err := json.Unmarshal(b, &a); err != nil {
		return fmt.Errorf("decoding point: %w", err)
	}
	if len(a) != 2 {
		return fmt.Errorf("decoding point: want [t, v], got %d elements", len(a))
	}
	p.T, p.V = a[0], a[1]
	return nil
}

// Duration is a time.Duration encoded as a Go duration string ("50s").
type Duration time.Duration

// MarshalJSON encodes d as a duration string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// UnmarshalJSON decodes a duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("decoding duration: %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("decoding duration: %w", err)
	}
	*d = Duration(v)
	return nil
}

// Measurement returns the measurement with the given name, or nil.
func (v *VariantRun) Measurement(name string) *Measurement {
	return find(v.Measurements, func(m *Measurement) bool { return m.Name == name })
}

// find returns the first element of xs that match accepts, or nil.
func find[T any](xs []T, match func(*T) bool) *T {
	for i := range xs {
		if match(&xs[i]) {
			return &xs[i]
		}
	}
	return nil
}

// Value returns the value of the figure with the given name, window and
// exactly the given labels (alternating keys and values), and whether it
// exists. A nil Measurement has no figures.
func (m *Measurement) Value(name, window string, labels ...string) (float64, bool) {
	v := find(m.figures().Values, func(v *Value) bool { return v.Name == name && v.Window == window && LabelsEqual(v.Labels, labels) })
	return cmp.Or(v, &Value{}).Value, v != nil
}

// Histogram returns the histogram with the given name, window and exactly
// the given labels (alternating keys and values), or nil.
func (m *Measurement) Histogram(name, window string, labels ...string) *Histogram {
	return find(m.figures().Histograms, func(h *Histogram) bool { return h.Name == name && h.Window == window && LabelsEqual(h.Labels, labels) })
}

// SeriesNamed returns the series with the given name and exactly the given
// labels (alternating keys and values), or nil.
func (m *Measurement) SeriesNamed(name string, labels ...string) *Series {
	return find(m.figures().Series, func(s *Series) bool { return s.Name == name && LabelsEqual(s.Labels, labels) })
}

// Window returns the window with the given name and whether it exists.
func (m *Measurement) Window(name string) (Window, bool) {
	w := find(m.figures().Windows, func(w *Window) bool { return w.Name == name })
	return *cmp.Or(w, &Window{}), w != nil
}

// figures is m, or for a nil m a measurement without figures.
func (m *Measurement) figures() *Measurement {
	if m == nil {
		return &Measurement{}
	}
	return m
}

// Labels builds a label map from alternating keys and values; it returns
// nil for no labels, so that unlabelled figures omit the field.
func Labels(kv ...string) map[string]string {
	if len(kv) == 0 {
		return nil
	}
	m := make(map[string]string, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// LabelPairs turns a label map into alternating keys and values, sorted by
// key: the inverse of Labels, for Value, Histogram and SeriesNamed.
func LabelPairs(l map[string]string) []string {
	out := make([]string, 0, 2*len(l))
	for _, k := range slices.Sorted(maps.Keys(l)) {
		out = append(out, k, l[k])
	}
	return out
}

// LabelsEqual reports whether m holds exactly the label pairs kv
// (alternating keys and values).
func LabelsEqual(m map[string]string, kv []string) bool { return maps.Equal(m, Labels(kv...)) }

// Sort puts a measurement's figures in a deterministic order (name, window,
// labels), so that documents diff cleanly and golden files are stable.
func (m *Measurement) Sort() {
	slices.SortStableFunc(m.Values, func(a, b Value) int { return a.key().compare(b.key()) })
	slices.SortStableFunc(m.Histograms, func(a, b Histogram) int { return a.key().compare(b.key()) })
	slices.SortStableFunc(m.Series, func(a, b Series) int { return a.key().compare(b.key()) })
}

// figureKey identifies a figure within a measurement.
type figureKey struct{ name, window, labels string }

func (v *Value) key() figureKey     { return figureKey{v.Name, v.Window, labelString(v.Labels)} }
func (h *Histogram) key() figureKey { return figureKey{h.Name, h.Window, labelString(h.Labels)} }
func (s *Series) key() figureKey    { return figureKey{s.Name, "", labelString(s.Labels)} }

func (a figureKey) compare(b figureKey) int {
	return cmp.Or(cmp.Compare(a.name, b.name), cmp.Compare(a.window, b.window), cmp.Compare(a.labels, b.labels))
}

// labelString renders labels as {k="v",...} with sorted keys.
func labelString(l map[string]string) string {
	if len(l) == 0 {
		return ""
	}
	b := []byte{'{'}
	for i, k := range slices.Sorted(maps.Keys(l)) {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, k...)
		b = append(b, '=')
		b = strconv.AppendQuote(b, l[k])
	}
	return string(append(b, '}'))
}

// RelaxedHeartbeats says whether the run's heartbeats were slower than a
// kubelet's, and a sentence saying so for summaries and reports.
func (s Settings) RelaxedHeartbeats() (string, bool) {
	if s.HeartbeatFactor <= 1 {
		return "", false
	}
	return fmt.Sprintf("relaxed heartbeats: heartbeatFactor %g (%s leases, status every %s, %s grace period); not a fleet at kubelet timing",
		s.HeartbeatFactor, time.Duration(s.NodeLeaseDuration), time.Duration(s.NodeStatusUpdateFrequency), time.Duration(s.NodeMonitorGracePeriod)), true
}
