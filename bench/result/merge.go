package result

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// measurementStorm is the name of the simulator's own measurement
// (bench.MeasurementStorm), which this package cannot import.
const measurementStorm = "storm"

// The marker Merge leaves in Run.Cluster.Settings.Flags: stormbench is the
// component, and the flag holds how many shard results were merged. It lives
// there because the schema has no field for it and every reader already
// accepts arbitrary flags.
const (
	mergeComponent  = "stormbench"
	mergeFlagShards = "merged-shards"
)

// MergeNotePrefix starts every warning Merge adds to a measurement, so that
// merge caveats can be told apart from the shards' own warnings.
const MergeNotePrefix = "merge: "

// stormStartTolerance is how far apart the shards' storms may start before
// Merge warns that cluster-wide figures, which come from one shard's window,
// may miss part of another shard's storm.
const stormStartTolerance = time.Second

// Merge combines the result documents of the shards of one sharded run
// (`stormbench run --shard i/n`, one document per shard, all against the
// same cluster and fleet) into one document, as if one process had
// restarted every node. The inputs are not modified. Shards are named in
// warnings and errors by their position among the arguments ("shard 0" is
// the first), since a result does not record its shard index.
//
// The shards must be of the same run: the same run id, seed, resolved
// profile, tool version and revision, fleet and cluster versions, and the
// same variant runs (variant and repetition) in the same order. A shard that
// stopped early may hold fewer variant runs: the variant runs every shard
// holds are merged, the rest are left out with a run error, and the merged
// document is incomplete. Anything else is an error naming every mismatch.
//
// The merged document keeps the run id, takes the earliest start and the
// latest end, is complete only if every shard is, and carries every shard's
// errors prefixed with the shard. It is marked as merged in
// Run.Cluster.Settings.Flags["stormbench"]["merged-shards"] (see
// MergedShards). Per variant run: Start and StormStart are the earliest,
// End the latest, Restarts the sum, Complete the conjunction, and
// FeatureGates must agree.
//
// Measurements fall in two kinds, and a measurement's windows follow from
// its kind:
//
// Per-shard measurements count what each process did, so figures add up and
// windows span the earliest start to the latest end:
//   - clientLatency: every count (requests, errors, 429s, retries, clamped
//     samples) is summed per label set, and the latency HdrHistograms merge
//     exactly. The kubelet counts of the merged run equal those of an
//     unsharded run; the harness counts do not, since every shard waits for
//     the whole fleet to be Ready.
//   - storm (the simulator's counters): every counter is summed, and so are
//     stormbench's CPU seconds and RSS figures (start, peak, process peak):
//     the shards are separate processes, so the sum is the tool's total cost
//     (an upper bound for the peaks, which need not coincide). podsLost is a
//     fleet-wide count every shard observed, so the maximum is kept.
//     stormbenchRSSGrowthPerRestartBytes is recomputed as (Σ peak − Σ start)
//     ÷ merged restarts.
//   - recovery: each shard matches what it observed with its own Down
//     events, so node_ready, pod_ready and pod_running samples are disjoint
//     and their HdrHistograms merge exactly; unrecovered (node, pod,
//     pod_running) and node_ready_from_events add up. service_ready merges
//     too, but a Service degraded by restarts of several shards is counted
//     once per shard, each from that shard's earliest restart (a warning
//     says so when it can happen); unrecovered{kind=service} therefore keeps
//     the maximum. fleet_recovered (first Down → last recovery) is
//     recomputed from each shard's first Down (the start of its
//     unrecovered_nodes series) and recovery time, and is empty if any
//     shard had not recovered. unattributed is dropped with a warning:
//     every shard counts the other shards' restarts as unattributed. The
//     unrecovered_nodes series are summed on a common time axis.
//
// Cluster-wide measurements observe the shared control plane, which every
// shard watched or scraped in full; summing them would count the cluster n
// times. They are taken whole (figures, histograms, series and windows)
// from one reference shard: the one without a measurement error whose storm
// window ends last, since it covers the most of the union of the shards'
// storms given a shared start (--start-at). A warning names the shard.
//   - apiserver: every figure comes from the reference shard. They include
//     every shard's own scrapes and harness requests, which an unsharded run
//     sends once. excess_requests_per_restart, a ratio to the reference
//     shard's own restarts, is recomputed over the merged restarts: the
//     unlabelled figure as excess_requests ÷ restarts, the per-kind figures
//     scaled by the reference's restarts ÷ merged restarts.
//   - endpointSlices: every figure comes from the reference shard, except
//     extra_watcher_events and extra_watcher_restarts, which count each
//     shard's own extra watches and are summed.
//   - a measurement Merge does not know is treated as cluster-wide, with a
//     warning.
//
// When the shards' storms started more than a second apart, the
// cluster-wide measurements warn that one shard's window may miss part of
// another's storm.
func Merge(shards ...*Result) (*Result, error) {
	if len(shards) == 0 {
		return nil, errors.New("merging shard results: none given")
	}
	for i, s := range shards {
		if s == nil {
			return nil, fmt.Errorf("merging shard results: shard %d is nil", i)
		}
	}
	common, errs := checkShards(shards)
	if len(errs) > 0 {
		return nil, fmt.Errorf("merging shard results: %w", errors.Join(errs...))
	}
	first := shards[0]
	out := &Result{
		SchemaVersion: SchemaVersion,
		Complete:      true,
		Run:           cloneRun(first.Run),
	}
	for i, s := range shards {
		if s.Run.Start.Before(out.Run.Start) {
			out.Run.Start = s.Run.Start
		}
		if s.Run.End.After(out.Run.End) {
			out.Run.End = s.Run.End
		}
		out.Complete = out.Complete && s.Complete
		for _, e := range s.Errors {
			out.Errors = append(out.Errors, fmt.Sprintf("shard %d: %s", i, e))
		}
	}
	if out.Run.Cluster.Settings.Flags == nil {
		out.Run.Cluster.Settings.Flags = map[string]map[string]string{}
	}
	flags := maps.Clone(out.Run.Cluster.Settings.Flags[mergeComponent])
	if flags == nil {
		flags = map[string]string{}
	}
	flags[mergeFlagShards] = strconv.Itoa(len(shards))
	out.Run.Cluster.Settings.Flags[mergeComponent] = flags

	for k := 0; k < common; k++ {
		vrs := make([]*VariantRun, len(shards))
		for i, s := range shards {
			vrs[i] = &s.Variants[k]
		}
		v, err := mergeVariant(vrs)
		if err != nil {
			return nil, fmt.Errorf("merging shard results: variant %s repetition %d: %w", vrs[0].Variant, vrs[0].Repetition, err)
		}
		out.Variants = append(out.Variants, v)
	}
	for i, s := range shards {
		for _, v := range s.Variants[common:] {
			out.Complete = false
			out.Errors = append(out.Errors, fmt.Sprintf("variant %s repetition %d ran in shard %d but not in every shard (a shard stopped early): left out of the merge", v.Variant, v.Repetition, i))
		}
	}
	if out.Complete && out.Run.End.IsZero() {
		out.Complete = false
	}
	return out, nil
}

// MergedShards returns how many shard results r was merged from, or 0 if r
// is not the result of Merge.
func MergedShards(r *Result) int {
	n, err := strconv.Atoi(r.Run.Cluster.Settings.Flags[mergeComponent][mergeFlagShards])
	if err != nil {
		return 0
	}
	return n
}

// MergeNotes returns the distinct caveats Merge added to r's measurements,
// each as "variant#repetition measurement: note" without MergeNotePrefix.
func MergeNotes(r *Result) []string {
	var out []string
	seen := map[string]bool{}
	for _, v := range r.Variants {
		for _, m := range v.Measurements {
			for _, w := range m.Warnings {
				note, ok := strings.CutPrefix(w, MergeNotePrefix)
				if !ok {
					continue
				}
				s := fmt.Sprintf("%s#%d %s: %s", v.Variant, v.Repetition, m.Name, note)
				if !seen[s] {
					seen[s] = true
					out = append(out, s)
				}
			}
		}
	}
	return out
}

// checkShards reports every way the shards are not of one run, and returns
// the number of leading variant runs they all hold.
func checkShards(shards []*Result) (int, []error) {
	var errs []error
	a := shards[0]
	for i, b := range shards[1:] {
		i++
		diff := func(what string, x, y any) {
			errs = append(errs, fmt.Errorf("shard %d is not of the same run as shard 0: %s %v, want %v", i, what, y, x))
		}
		if a.Run.ID != b.Run.ID {
			diff("run id", a.Run.ID, b.Run.ID)
		}
		if a.Run.Seed != b.Run.Seed {
			diff("seed", a.Run.Seed, b.Run.Seed)
		}
		if a.Run.ToolVersion != b.Run.ToolVersion {
			diff("tool version", a.Run.ToolVersion, b.Run.ToolVersion)
		}
		if a.Run.GitRevision != b.Run.GitRevision {
			diff("git revision", a.Run.GitRevision, b.Run.GitRevision)
		}
		if a.Run.Fleet != b.Run.Fleet {
			diff("fleet", fmt.Sprintf("%+v", a.Run.Fleet), fmt.Sprintf("%+v", b.Run.Fleet))
		}
		if a.Run.Cluster.Embedded != b.Run.Cluster.Embedded || !maps.Equal(a.Run.Cluster.Versions, b.Run.Cluster.Versions) {
			diff("cluster", fmt.Sprintf("embedded=%t %v", a.Run.Cluster.Embedded, a.Run.Cluster.Versions),
				fmt.Sprintf("embedded=%t %v", b.Run.Cluster.Embedded, b.Run.Cluster.Versions))
		}
		if !maps.Equal(a.Run.FeatureGates, b.Run.FeatureGates) {
			diff("feature gates", a.Run.FeatureGates, b.Run.FeatureGates)
		}
		if !sameJSON(a.Run.Profile, b.Run.Profile) {
			errs = append(errs, fmt.Errorf("shard %d is not of the same run as shard 0: the resolved profiles differ", i))
		}
	}
	for i, s := range shards {
		if n := MergedShards(s); n > 0 {
			errs = append(errs, fmt.Errorf("shard %d is already merged from %d shards: merge the shard results themselves", i, n))
		}
	}
	for i := range shards {
		for j := range i {
			if shards[i].Run.Start.Equal(shards[j].Run.Start) {
				errs = append(errs, fmt.Errorf("shards %d and %d started at the same instant (%s): the same result given twice?", j, i, shards[i].Run.Start.Format(time.RFC3339Nano)))
			}
		}
	}
	common := len(a.Variants)
	for _, s := range shards {
		common = min(common, len(s.Variants))
	}
	for i, s := range shards[1:] {
		i++
		for k := range common {
			x, y := a.Variants[k], s.Variants[k]
			if x.Variant != y.Variant || x.Repetition != y.Repetition {
				errs = append(errs, fmt.Errorf("shard %d is not of the same run as shard 0: variant run %d is %s#%d, want %s#%d", i, k, y.Variant, y.Repetition, x.Variant, x.Repetition))
				continue
			}
			if !maps.Equal(x.FeatureGates, y.FeatureGates) {
				errs = append(errs, fmt.Errorf("shard %d is not of the same run as shard 0: variant %s#%d ran with feature gates %v, want %v", i, y.Variant, y.Repetition, y.FeatureGates, x.FeatureGates))
			}
		}
	}
	// A shard with fewer variant runs than another must have stopped
	// early; if it is complete, the shards ran different profiles.
	if j := slices.IndexFunc(shards, func(r *Result) bool { return len(r.Variants) == common && r.Complete }); j >= 0 {
		for i, s := range shards {
			if len(s.Variants) > common {
				errs = append(errs, fmt.Errorf("shard %d has %d variant runs but shard %d, which is complete, has %d", i, len(s.Variants), j, common))
			}
		}
	}
	return common, errs
}

// sameJSON reports whether a and b encode the same JSON value.
func sameJSON(a, b json.RawMessage) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return string(a) == string(b)
	}
	return reflect.DeepEqual(x, y)
}

func cloneRun(r Run) Run {
	r.Cluster.Versions = maps.Clone(r.Cluster.Versions)
	if r.Cluster.Settings.Flags != nil {
		flags := make(map[string]map[string]string, len(r.Cluster.Settings.Flags))
		for k, v := range r.Cluster.Settings.Flags {
			flags[k] = maps.Clone(v)
		}
		r.Cluster.Settings.Flags = flags
	}
	r.FeatureGates = maps.Clone(r.FeatureGates)
	r.Profile = slices.Clone(r.Profile)
	return r
}

// mergeVariant merges one variant run of every shard.
func mergeVariant(vrs []*VariantRun) (VariantRun, error) {
	first := vrs[0]
	out := VariantRun{
		Variant:      first.Variant,
		Repetition:   first.Repetition,
		FeatureGates: maps.Clone(first.FeatureGates),
		Start:        first.Start,
		Complete:     true,
	}
	var earliestStorm, latestStorm time.Time
	for i, v := range vrs {
		if v.Start.Before(out.Start) {
			out.Start = v.Start
		}
		if !v.StormStart.IsZero() {
			if earliestStorm.IsZero() || v.StormStart.Before(earliestStorm) {
				earliestStorm = v.StormStart
			}
			if v.StormStart.After(latestStorm) {
				latestStorm = v.StormStart
			}
		}
		if v.End.After(out.End) {
			out.End = v.End
		}
		out.Restarts += v.Restarts
		out.Complete = out.Complete && v.Complete
		for _, e := range v.Errors {
			out.Errors = append(out.Errors, fmt.Sprintf("shard %d: %s", i, e))
		}
	}
	out.StormStart = earliestStorm
	spread := latestStorm.Sub(earliestStorm)

	var names []string
	for _, v := range vrs {
		for _, m := range v.Measurements {
			if !slices.Contains(names, m.Name) {
				names = append(names, m.Name)
			}
		}
	}
	for _, name := range names {
		ms := make([]*Measurement, len(vrs))
		for i, v := range vrs {
			ms[i] = v.Measurement(name)
		}
		mc := mergeContext{name: name, ms: ms, vrs: vrs, restarts: out.Restarts, stormSpread: spread}
		m, err := mc.merge()
		if err != nil {
			return out, fmt.Errorf("measurement %s: %w", name, err)
		}
		out.Measurements = append(out.Measurements, m)
	}
	return out, nil
}

// mergeContext is one measurement of one variant run, in every shard.
type mergeContext struct {
	name string
	// ms holds the measurement per shard; nil where a shard lacks it.
	ms []*Measurement
	// vrs are the shards' variant runs.
	vrs []*VariantRun
	// restarts is the merged number of restarts.
	restarts int
	// stormSpread is how far apart the shards' storms started.
	stormSpread time.Duration
	notes       []string
}

func (c *mergeContext) note(format string, a ...any) {
	c.notes = append(c.notes, MergeNotePrefix+fmt.Sprintf(format, a...))
}

func (c *mergeContext) merge() (Measurement, error) {
	var (
		m   Measurement
		err error
	)
	switch c.name {
	case MeasurementClientLatency:
		m, err = c.perShard(nil)
	case measurementStorm:
		m, err = c.perShard(map[string]valueRule{
			"podsLost":                           ruleMax,
			"stormbenchRSSGrowthPerRestartBytes": ruleDrop,
		})
		if err == nil {
			c.recomputeRSSGrowth(&m)
		}
	case MeasurementRecovery:
		m, err = c.recovery()
	case MeasurementAPIServer:
		m = c.clusterWide(nil)
		c.recomputeExcessPerRestart(&m)
	case MeasurementEndpointSlices:
		m = c.clusterWide(map[string]bool{SliceWatcherEvents: true, SliceWatcherRestarts: true})
	default:
		m = c.clusterWide(nil)
		c.note("measurement %s is unknown to merge: treated as cluster-wide and taken from one shard", c.name)
	}
	if err != nil {
		return Measurement{}, err
	}
	for i, x := range c.ms {
		if x == nil {
			c.note("shard %d has no %s measurement", i, c.name)
		}
	}
	m.Warnings = append(m.Warnings, c.notes...)
	m.Sort()
	return m, nil
}

// valueRule says how the shards' values of one figure become one value.
type valueRule int

const (
	// ruleSum adds the shards' values: per-shard work.
	ruleSum valueRule = iota
	// ruleMax keeps the largest: a fleet-wide level every shard observed.
	ruleMax
	// ruleDrop leaves the figure out; the caller recomputes it or notes why.
	ruleDrop
)

// valueKey identifies a figure within a measurement.
type valueKey struct{ name, window, labels string }

func keyOf(name, window string, labels map[string]string) valueKey {
	return valueKey{name, window, labelString(labels)}
}

// perShard merges a measurement of per-shard figures: values by rule (sum
// unless rules say otherwise; a shard lacking a figure contributes
// nothing), histograms merged, series summed on a common time axis, windows
// spanning every shard's.
func (c *mergeContext) perShard(rules map[string]valueRule) (Measurement, error) {
	out := Measurement{Name: c.name}
	var errs []string
	for i, m := range c.ms {
		if m != nil && m.Error != "" {
			errs = append(errs, fmt.Sprintf("shard %d: %s", i, m.Error))
		}
	}
	out.Error = strings.Join(errs, "; ")
	out.Windows = unionWindows(c.ms)
	out.Warnings = shardWarnings(c.ms)

	var order []valueKey
	values := map[valueKey]*Value{}
	for _, m := range c.ms {
		if m == nil {
			continue
		}
		for _, v := range m.Values {
			rule := rules[v.Name]
			if rule == ruleDrop {
				continue
			}
			k := keyOf(v.Name, v.Window, v.Labels)
			acc, ok := values[k]
			if !ok {
				cp := v
				cp.Labels = maps.Clone(v.Labels)
				values[k] = &cp
				order = append(order, k)
				continue
			}
			switch rule {
			case ruleMax:
				acc.Value = max(acc.Value, v.Value)
			default:
				acc.Value += v.Value
			}
		}
	}
	for _, k := range order {
		out.Values = append(out.Values, *values[k])
	}

	hists, err := mergeHistogramGroups(c.ms, nil)
	if err != nil {
		return out, err
	}
	out.Histograms = hists
	out.Series = sumSeriesGroups(c.ms)
	return out, nil
}

// recomputeRSSGrowth sets the storm measurement's RSS growth per restart
// from the summed RSS figures and the merged restarts.
func (c *mergeContext) recomputeRSSGrowth(m *Measurement) {
	peak, okPeak := m.Value("stormbenchRSSPeakBytes", WindowStorm)
	start, okStart := m.Value("stormbenchRSSStartBytes", WindowStorm)
	had := false
	for _, x := range c.ms {
		if _, ok := x.Value("stormbenchRSSGrowthPerRestartBytes", WindowStorm); ok {
			had = true
		}
	}
	if !had || !okPeak || !okStart || c.restarts == 0 {
		return
	}
	m.Values = append(m.Values, Value{Name: "stormbenchRSSGrowthPerRestartBytes", Window: WindowStorm, Unit: UnitBytes,
		Value: (peak - start) / float64(c.restarts)})
}

// recovery merges the recovery measurement (see Merge).
func (c *mergeContext) recovery() (Measurement, error) {
	present := 0
	for _, m := range c.ms {
		if m != nil {
			present++
		}
	}
	rules := map[string]valueRule{}
	if present > 1 {
		rules[RecoveryUnattributed] = ruleDrop
	}
	out, err := c.perShard(rules)
	if err != nil {
		return out, err
	}
	// unrecovered{kind=service}: a degradation spanning shards is counted
	// by each of them.
	for i := range out.Values {
		v := &out.Values[i]
		if v.Name != RecoveryUnrecovered || v.Labels[LabelKind] != "service" {
			continue
		}
		v.Value = 0
		for _, m := range c.ms {
			if x, ok := m.Value(RecoveryUnrecovered, v.Window, LabelKind, "service"); ok {
				v.Value = max(v.Value, x)
			}
		}
	}
	for _, m := range c.ms {
		if m == nil || present < 2 {
			continue
		}
		if slices.ContainsFunc(m.Values, func(v Value) bool { return v.Name == RecoveryUnattributed && v.Value > 0 }) {
			c.note("%s dropped: each shard counts the other shards' restarts as unattributed, since its event log holds only its own Down events", RecoveryUnattributed)
			break
		}
	}
	withSamples := 0
	for _, m := range c.ms {
		if h := m.Histogram(RecoveryService, WindowStorm); h != nil && h.Summary.Count > 0 {
			withSamples++
		}
	}
	if withSamples > 1 {
		c.note("%s: a Service degraded by restarts of several shards is counted once per shard, from that shard's earliest restart", RecoveryService)
	}
	// fleet_recovered: recomputed instead of merged.
	for i := range out.Histograms {
		h := &out.Histograms[i]
		if h.Name != RecoveryStorm {
			continue
		}
		fr, err := c.fleetRecovered(h)
		if err != nil {
			return out, err
		}
		*h = fr
	}
	return out, nil
}

// fleetRecovered recomputes the storm's recovery time, first Down of any
// shard → last recovery of any shard, from each shard's first Down (the
// start of its unrecovered_nodes series) and its own recovery time. The
// merged histogram (template h) is empty if a shard that restarted nodes had
// not recovered.
func (c *mergeContext) fleetRecovered(h *Histogram) (Histogram, error) {
	var firstDown, lastRecovered time.Time
	slowest := time.Duration(0)
	aligned := true
	var tmpl *Histogram
	for i, m := range c.ms {
		x := m.Histogram(h.Name, h.Window, flatLabels(h.Labels)...)
		if x == nil || x.HDR == "" {
			continue
		}
		if tmpl == nil {
			tmpl = x
		}
		if x.Summary.Count == 0 {
			if c.vrs[i].Restarts > 0 {
				// Not recovered by the gather: so is the fleet.
				return cloneHistogram(*x), nil
			}
			continue
		}
		d, err := DecodeHDR(x.HDR)
		if err != nil {
			return Histogram{}, fmt.Errorf("shard %d: %s: %w", i, x.Name, err)
		}
		took := time.Duration(d.Max()) * time.Microsecond
		slowest = max(slowest, took)
		s := seriesOf(m, SeriesUnrecoveredNodes)
		if s == nil || s.Start.IsZero() {
			aligned = false
			continue
		}
		if firstDown.IsZero() || s.Start.Before(firstDown) {
			firstDown = s.Start
		}
		if end := s.Start.Add(took); end.After(lastRecovered) {
			lastRecovered = end
		}
	}
	if tmpl == nil {
		return *h, nil
	}
	d, err := DecodeHDR(tmpl.HDR)
	if err != nil {
		return Histogram{}, fmt.Errorf("%s: %w", tmpl.Name, err)
	}
	d.Reset()
	took := slowest
	if aligned && !firstDown.IsZero() {
		took = lastRecovered.Sub(firstDown)
	} else {
		c.note("%s is the slowest shard's: without their %s series the shards' first restarts cannot be aligned", RecoveryStorm, SeriesUnrecoveredNodes)
	}
	us := min(max(took.Microseconds(), 0), d.HighestTrackableValue())
	if err := d.RecordValue(us); err != nil {
		return Histogram{}, fmt.Errorf("%s: %w", tmpl.Name, err)
	}
	out, err := FromHDR(tmpl.Name, tmpl.Window, maps.Clone(tmpl.Labels), d)
	if err != nil {
		return Histogram{}, err
	}
	out.Unit = tmpl.Unit
	out.HDRUnit = tmpl.HDRUnit
	return out, nil
}

// clusterWide takes the measurement from the reference shard (see Merge),
// except the figures named in sum, which are summed over the shards.
func (c *mergeContext) clusterWide(sum map[string]bool) Measurement {
	ref := c.reference()
	if ref < 0 {
		return Measurement{Name: c.name}
	}
	out := cloneMeasurement(*c.ms[ref])
	present := 0
	for _, m := range c.ms {
		if m != nil {
			present++
		}
	}
	if present > 1 {
		c.note("cluster-wide figures taken from shard %d, whose window ends last, not summed: every shard observed the same control plane", ref)
		if c.stormSpread > stormStartTolerance {
			c.note("the shards' storms started up to %s apart (no shared --start-at?): shard %d's window may miss part of another shard's storm", c.stormSpread.Round(time.Millisecond), ref)
		}
	}
	for i := range out.Values {
		v := &out.Values[i]
		if !sum[v.Name] {
			continue
		}
		total := 0.0
		for _, m := range c.ms {
			if x, ok := m.Value(v.Name, v.Window, flatLabels(v.Labels)...); ok {
				total += x
			}
		}
		v.Value = total
	}
	return out
}

// reference picks the shard whose measurement the cluster-wide figures come
// from: one without a measurement error if possible, then the one whose
// storm window (else any window, else the variant run) ends last, then the
// first.
func (c *mergeContext) reference() int {
	best := -1
	for i, m := range c.ms {
		if m == nil {
			continue
		}
		if best < 0 {
			best = i
			continue
		}
		b := c.ms[best]
		if (m.Error == "") != (b.Error == "") {
			if m.Error == "" {
				best = i
			}
			continue
		}
		if coverEnd(m, c.vrs[i]).After(coverEnd(b, c.vrs[best])) {
			best = i
		}
	}
	return best
}

func coverEnd(m *Measurement, v *VariantRun) time.Time {
	if w, ok := m.Window(WindowStorm); ok {
		return w.End
	}
	end := v.End
	for _, w := range m.Windows {
		if w.End.After(end) {
			end = w.End
		}
	}
	return end
}

// recomputeExcessPerRestart turns the reference shard's per-restart excess
// requests into per merged restart (see Merge).
func (c *mergeContext) recomputeExcessPerRestart(m *Measurement) {
	ref := c.reference()
	if ref < 0 {
		return
	}
	refRestarts := c.vrs[ref].Restarts
	excess, hasExcess := m.Value(APIExcessRequests, WindowStorm)
	kept := m.Values[:0]
	dropped := 0
	for _, v := range m.Values {
		if v.Name != APIExcessPerRestart {
			kept = append(kept, v)
			continue
		}
		switch {
		case c.restarts == 0:
			dropped++
			continue
		case len(v.Labels) == 0 && hasExcess && v.Window == WindowStorm:
			v.Value = excess / float64(c.restarts)
		case refRestarts > 0:
			v.Value = v.Value * float64(refRestarts) / float64(c.restarts)
		default:
			dropped++
			continue
		}
		kept = append(kept, v)
	}
	m.Values = kept
	if dropped > 0 {
		c.note("%d %s figures dropped: the reference shard restarted no node, so they cannot be rescaled", dropped, APIExcessPerRestart)
	} else if refRestarts != c.restarts && slices.ContainsFunc(m.Values, func(v Value) bool { return v.Name == APIExcessPerRestart }) {
		c.note("%s recomputed over the %d restarts of all shards (shard %d restarted %d)", APIExcessPerRestart, c.restarts, ref, refRestarts)
	}
}

// unionWindows returns, per window name in order of appearance, the
// earliest start and the latest end over the shards.
func unionWindows(ms []*Measurement) []Window {
	var out []Window
	for _, m := range ms {
		if m == nil {
			continue
		}
		for _, w := range m.Windows {
			i := slices.IndexFunc(out, func(x Window) bool { return x.Name == w.Name })
			if i < 0 {
				out = append(out, w)
				continue
			}
			if w.Start.Before(out[i].Start) {
				out[i].Start = w.Start
			}
			if w.End.After(out[i].End) {
				out[i].End = w.End
			}
		}
	}
	return out
}

// shardWarnings returns the shards' warnings, each once, prefixed with the
// shards that gave it.
func shardWarnings(ms []*Measurement) []string {
	var order []string
	by := map[string][]string{}
	for i, m := range ms {
		if m == nil {
			continue
		}
		for _, w := range m.Warnings {
			if _, ok := by[w]; !ok {
				order = append(order, w)
			}
			if s := strconv.Itoa(i); !slices.Contains(by[w], s) {
				by[w] = append(by[w], s)
			}
		}
	}
	var out []string
	for _, w := range order {
		who := "shard " + by[w][0]
		if len(by[w]) > 1 {
			who = "shards " + strings.Join(by[w], ", ")
		}
		out = append(out, who+": "+w)
	}
	return out
}

// mergeHistogramGroups merges the shards' histograms with the same name,
// window and labels, in order of first appearance.
func mergeHistogramGroups(ms []*Measurement, skip map[string]bool) ([]Histogram, error) {
	var order []valueKey
	groups := map[valueKey][]*Histogram{}
	for _, m := range ms {
		if m == nil {
			continue
		}
		for i := range m.Histograms {
			h := &m.Histograms[i]
			if skip[h.Name] {
				continue
			}
			k := keyOf(h.Name, h.Window, h.Labels)
			if _, ok := groups[k]; !ok {
				order = append(order, k)
			}
			groups[k] = append(groups[k], h)
		}
	}
	var out []Histogram
	for _, k := range order {
		g := groups[k]
		if len(g) == 1 {
			out = append(out, cloneHistogram(*g[0]))
			continue
		}
		h, err := MergeHistograms(g...)
		if err != nil {
			return nil, err
		}
		h.Labels = maps.Clone(h.Labels)
		out = append(out, h)
	}
	return out, nil
}

// sumSeriesGroups sums the shards' series with the same name and labels.
func sumSeriesGroups(ms []*Measurement) []Series {
	var order []valueKey
	groups := map[valueKey][]*Series{}
	for _, m := range ms {
		if m == nil {
			continue
		}
		for i := range m.Series {
			s := &m.Series[i]
			k := keyOf(s.Name, "", s.Labels)
			if _, ok := groups[k]; !ok {
				order = append(order, k)
			}
			groups[k] = append(groups[k], s)
		}
	}
	var out []Series
	for _, k := range order {
		out = append(out, sumSeries(groups[k]...))
	}
	return out
}

// sumSeries adds level series of several shards on a common time axis. The
// result starts at the earliest start and has one point every step (the
// smallest spacing between consecutive points of any input, 1 s if none
// has two) until a point at or after the latest point of any input. Each input contributes, at
// each merged point, its latest point at or before that time: nothing
// before its first point, and its last value after its last point (a level
// holds until it changes; a series that has ended reports its final level).
// Name, labels and unit come from the first series.
func sumSeries(ss ...*Series) Series {
	if len(ss) == 0 {
		return Series{}
	}
	first := ss[0]
	out := Series{Name: first.Name, Labels: maps.Clone(first.Labels), Unit: first.Unit, Start: first.Start}
	step := math.Inf(1)
	var end time.Time
	for _, s := range ss {
		if s.Start.Before(out.Start) {
			out.Start = s.Start
		}
		for j := 1; j < len(s.Points); j++ {
			if d := s.Points[j].T - s.Points[j-1].T; d > 0 {
				step = min(step, d)
			}
		}
		if n := len(s.Points); n > 0 {
			if e := s.Start.Add(seconds(s.Points[n-1].T)); e.After(end) {
				end = e
			}
		}
	}
	if end.IsZero() {
		return out
	}
	if math.IsInf(step, 1) {
		step = 1
	}
	// The axis: the earliest first point, then every step.
	origin := math.Inf(1)
	for _, s := range ss {
		if len(s.Points) > 0 {
			origin = min(origin, s.Start.Sub(out.Start).Seconds()+s.Points[0].T)
		}
	}
	origin = roundMillis(origin)
	last := roundMillis(end.Sub(out.Start).Seconds())
	cursor := make([]int, len(ss))
	for k := 0; ; k++ {
		t := roundMillis(origin + float64(k)*step)
		if k > 0 && roundMillis(origin+float64(k-1)*step) >= last-1e-9 {
			// The previous point already covered the latest input point.
			break
		}
		at := out.Start.Add(seconds(t))
		sum := 0.0
		for i, s := range ss {
			for cursor[i] < len(s.Points) && !s.Start.Add(seconds(s.Points[cursor[i]].T)).After(at) {
				cursor[i]++
			}
			if cursor[i] > 0 {
				sum += s.Points[cursor[i]-1].V
			}
		}
		out.Points = append(out.Points, Point{T: t, V: sum})
	}
	return out
}

func seconds(f float64) time.Duration { return time.Duration(math.Round(f * float64(time.Second))) }

func roundMillis(f float64) float64 { return math.Round(f*1000) / 1000 }

func seriesOf(m *Measurement, name string) *Series {
	if m == nil {
		return nil
	}
	for i := range m.Series {
		if m.Series[i].Name == name && len(m.Series[i].Labels) == 0 {
			return &m.Series[i]
		}
	}
	return nil
}

// flatLabels turns a label map into alternating keys and values.
func flatLabels(l map[string]string) []string {
	out := make([]string, 0, 2*len(l))
	for _, k := range slices.Sorted(maps.Keys(l)) {
		out = append(out, k, l[k])
	}
	return out
}

func cloneMeasurement(m Measurement) Measurement {
	m.Windows = slices.Clone(m.Windows)
	m.Values = slices.Clone(m.Values)
	for i := range m.Values {
		m.Values[i].Labels = maps.Clone(m.Values[i].Labels)
	}
	m.Histograms = slices.Clone(m.Histograms)
	for i := range m.Histograms {
		m.Histograms[i] = cloneHistogram(m.Histograms[i])
	}
	m.Series = slices.Clone(m.Series)
	for i := range m.Series {
		m.Series[i].Labels = maps.Clone(m.Series[i].Labels)
		m.Series[i].Points = slices.Clone(m.Series[i].Points)
	}
	m.Warnings = slices.Clone(m.Warnings)
	return m
}

func cloneHistogram(h Histogram) Histogram {
	h.Labels = maps.Clone(h.Labels)
	h.Buckets = slices.Clone(h.Buckets)
	return h
}
