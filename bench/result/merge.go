package result

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/sets"
)

// MergeNotePrefix starts every warning Merge adds to a measurement, so that
// merge caveats can be told apart from the shards' own warnings.
const MergeNotePrefix = "merge: "

// stormStartTolerance is how far apart the shards' storms may start before
// Merge warns that cluster-wide figures, which come from one shard's window,
// may miss part of another shard's storm.
const stormStartTolerance = time.Second

// Aggregation says how Merge combines the shards' copies of one figure (a
// value, histogram or series with the same name, window and labels).
type Aggregation int

const (
	// Sum adds the values, merges the histograms (HdrHistograms exactly)
	// and sums the series on a common time axis (see sumSeries): work each
	// shard did on its own.
	Sum Aggregation = iota + 1
	// Max keeps the largest value: a fleet-wide count every shard
	// observed. It applies to values only.
	Max
	// Reference takes the figure from the reference shard (see Merge): the
	// shared control plane, which every shard observed in full. A figure
	// the reference shard lacks is left out.
	Reference
	// Recompute leaves the figure out; the measurement's MergeRule.Finish
	// computes it from the shards.
	Recompute
	// LoneShard keeps the figure of a lone shard and leaves it out when
	// several shards have the measurement: a figure no combination of the
	// shards' own views gives.
	LoneShard
)

// Scope says where a measurement's windows, warnings, error and set of
// figures come from when Merge combines the shards' copies.
type Scope int

const (
	// PerShard is a measurement of what each process did: windows span the
	// earliest start to the latest end, every shard's warnings and errors
	// are kept (prefixed with the shards), and a figure any shard has is in
	// the merge. Figures aggregate by Sum unless the rule says otherwise.
	PerShard Scope = iota + 1
	// ClusterWide is a measurement of the shared control plane: windows,
	// warnings, error and the set of figures are the reference shard's,
	// and a warning names that shard. Figures aggregate by Reference unless
	// the rule says otherwise.
	ClusterWide
)

// MergeRule is how Merge combines one measurement of every shard. The
// measurement's owner builds it next to the measurement (see
// registry.MergeRules).
type MergeRule struct {
	// Scope is the measurement's kind; zero is PerShard.
	Scope Scope
	// Figures is the aggregation of each figure, by name; a figure it
	// does not name aggregates by the scope's default.
	Figures map[string]Aggregation
	// Finish, if set, runs after the generic merge, to recompute the
	// figures that are not a sum, maximum or reference (a ratio to the
	// merged restarts, say). It may add notes through s.Note.
	Finish func(s *MergeShards, m *Measurement) error
}

// aggregation returns the aggregation of the named figure.
func (r MergeRule) aggregation(name string) Aggregation {
	if a, ok := r.Figures[name]; ok {
		return a
	}
	if r.Scope == ClusterWide {
		return Reference
	}
	return Sum
}

// MergeRules are the merge rules of every known measurement, by name.
type MergeRules map[string]MergeRule

// MergeShards is one measurement of one variant run in every shard, as a
// MergeRule's Finish sees it.
type MergeShards struct {
	// Measurements holds the measurement per shard; nil where a shard
	// lacks it.
	Measurements []*Measurement
	// Variants are the shards' variant runs.
	Variants []*VariantRun
	// Restarts is the merged variant run's number of restarts.
	Restarts int
	// Reference is the reference shard (see Merge), or -1 if no shard has
	// the measurement.
	Reference int
	// stormSpread is how far apart the shards' storms started.
	stormSpread time.Duration
	notes       []string
}

// Note adds a caveat to the merged measurement's warnings, prefixed with
// MergeNotePrefix.
func (s *MergeShards) Note(format string, a ...any) {
	s.notes = append(s.notes, MergeNotePrefix+fmt.Sprintf(format, a...))
}

// Present returns how many shards have the measurement.
func (s *MergeShards) Present() int {
	n := 0
	for _, m := range s.Measurements {
		if m != nil {
			n++
		}
	}
	return n
}

// Merge combines the result documents of the shards of one sharded run
// (`stormbench run --shard i/n`, one document per shard, all against the
// same cluster and fleet) into one document, as if one process had
// restarted every node. The inputs are not modified. Shards are named in
// warnings and errors by their position among the arguments ("shard 0" is
// the first), since files of older versions do not record their shard.
//
// The shards' records (Run.Shard) must be of one split (the same count,
// an index below it) and no shard may be given twice: either is an error,
// whatever the documents' start times. A merge that does not hold every
// shard of the split, or holds a document that records no shard (an
// unsharded run, or a file written before shards were recorded, whose
// place in the split cannot be checked), is marked incomplete with an
// error saying so; ShardCoverage says the same to a caller that wants to
// refuse such a merge.
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
// errors prefixed with the shard. Run.MergedFrom names the shards ("shard
// 0", ...; a caller that read them from files may put the file names in
// their place). Per variant run: Start and StormStart are the earliest, End
// the latest, Restarts the sum, Complete the conjunction, WaveStarts the
// first shard's (the shards share one schedule), and FeatureGates must
// agree.
//
// Each measurement merges by its rule in rules (see MergeRule, Scope and
// Aggregation; the owners' rules are registry.MergeRules). The reference
// shard of a cluster-wide measurement is the one without a measurement
// error whose storm window ends last, since it covers the most of the union
// of the shards' storms given a shared start (--start-at). A measurement
// rules does not name is treated as cluster-wide, with a warning. When the
// shards' storms started more than a second apart, the cluster-wide
// measurements warn that one shard's window may miss part of another's
// storm.
func Merge(rules MergeRules, shards ...*Result) (*Result, error) {
	if len(shards) == 0 {
		return nil, errors.New("merging shard results: none given")
	}
	if i := slices.Index(shards, nil); i >= 0 {
		return nil, fmt.Errorf("merging shard results: shard %d is nil", i)
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
	out.Run.MergedFrom = nil
	out.Run.Shard = nil // the merge is the whole run, or says what it lacks
	for i, s := range shards {
		out.Run.Start, out.Run.End = earlier(out.Run.Start, s.Run.Start), later(out.Run.End, s.Run.End)
		out.Complete = out.Complete && s.Complete
		for _, e := range s.Errors {
			out.Errors = append(out.Errors, fmt.Sprintf("shard %d: %s", i, e))
		}
		out.Run.MergedFrom = append(out.Run.MergedFrom, "shard "+strconv.Itoa(i))
	}

	for k := 0; k < common; k++ {
		vrs := make([]*VariantRun, len(shards))
		for i, s := range shards {
			vrs[i] = &s.Variants[k]
		}
		v, err := mergeVariant(rules, vrs)
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
	if cov, ok := ShardCoverage(shards); !ok {
		out.Complete = false
		out.Errors = append(out.Errors, MergeNotePrefix+cov)
	}
	out.Complete = out.Complete && !out.Run.End.IsZero()
	return out, nil
}

// ShardCoverage says which shards of their split the results hold, by
// their Run.Shard records: "all n shards", or what they lack; ok reports
// whether they are every shard of the split, each known. It assumes the
// records are consistent, as Merge checks: one count, each index once.
func ShardCoverage(shards []*Result) (coverage string, ok bool) {
	count, missing, unrecorded, _ := shardRecords(shards)
	var parts []string
	if n := len(missing); n > 0 {
		parts = append(parts, fmt.Sprintf("%s %s of %d missing", plural(n, "shard", "shards"), joinInts(missing), count))
	}
	if n := len(unrecorded); n > 0 {
		parts = append(parts, fmt.Sprintf("%s %s %s no shard (a run without --shard, or a file from before shards were recorded): which %s cannot be checked",
			plural(n, "the result at position", "the results at positions"), joinInts(unrecorded), plural(n, "records", "record"), plural(n, "shard it is", "shards they are")))
	}
	if len(parts) == 0 {
		return fmt.Sprintf("all %d shards", count), count > 0
	}
	return strings.Join(parts, "; "), false
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}

// shardRecords reads the shards' Run.Shard records: the count of their
// split (the first valid record's), the indexes below it that no shard
// records, the positions of the shards that record none, and the errors of
// records that are not of one split or give a shard twice.
func shardRecords(shards []*Result) (count int, missing, unrecorded []int, errs []error) {
	first, seen := -1, map[int]int{}
	for i, s := range shards {
		sh := s.Run.Shard
		switch {
		case sh == nil:
			unrecorded = append(unrecorded, i)
		case sh.Count < 1 || sh.Index < 0 || sh.Index >= sh.Count:
			errs = append(errs, fmt.Errorf("shard %d: run.shard: Invalid value: %q: want i/n with 0 <= i < n", i, sh.String()))
		case first >= 0 && sh.Count != count:
			errs = append(errs, fmt.Errorf("shard %d is shard %s, but shard %d is %s: not of one split into %d", i, sh, first, shards[first].Run.Shard, count))
		default:
			if first < 0 {
				first, count = i, sh.Count
			}
			if j, ok := seen[sh.Index]; ok {
				errs = append(errs, fmt.Errorf("shards %d and %d are both shard %s of run %s: the same shard given twice", j, i, sh, s.Run.ID))
			} else {
				seen[sh.Index] = i
			}
		}
	}
	for k := range count {
		if _, ok := seen[k]; !ok {
			missing = append(missing, k)
		}
	}
	return count, missing, unrecorded, errs
}

// MergedShards returns how many shard results r was merged from, or 0 if r
// is not the result of Merge.
func MergedShards(r *Result) int { return len(r.Run.MergedFrom) }

// MergeNotes returns the distinct caveats Merge added to r's measurements,
// each as "variant#repetition measurement: note" without MergeNotePrefix.
func MergeNotes(r *Result) []string {
	var out []string
	for _, v := range r.Variants {
		for _, m := range v.Measurements {
			for _, w := range m.Warnings {
				note, ok := strings.CutPrefix(w, MergeNotePrefix)
				if s := fmt.Sprintf("%s#%d %s: %s", v.Variant, v.Repetition, m.Name, note); ok && !slices.Contains(out, s) {
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
	notSame := func(i int, format string, args ...any) {
		errs = append(errs, fmt.Errorf("shard %d is not of the same run as shard 0: %s", i, fmt.Sprintf(format, args...)))
	}
	a := shards[0]
	for i, b := range shards[1:] {
		i++
		for _, c := range []struct {
			what string
			x, y any
		}{
			{"run id", a.Run.ID, b.Run.ID}, {"seed", a.Run.Seed, b.Run.Seed},
			{"tool version", a.Run.ToolVersion, b.Run.ToolVersion}, {"git revision", a.Run.GitRevision, b.Run.GitRevision},
			{"fleet", a.Run.Fleet, b.Run.Fleet}, {"embedded cluster", a.Run.Cluster.Embedded, b.Run.Cluster.Embedded},
		} {
			if c.x != c.y {
				notSame(i, "%s %v, want %v", c.what, c.y, c.x)
			}
		}
		if !maps.Equal(a.Run.Cluster.Versions, b.Run.Cluster.Versions) {
			notSame(i, "component versions %s", changes(b.Run.Cluster.Versions, a.Run.Cluster.Versions))
		}
		if !maps.Equal(a.Run.FeatureGates, b.Run.FeatureGates) {
			notSame(i, "feature gates %s", changes(b.Run.FeatureGates, a.Run.FeatureGates))
		}
		if !sameJSON(a.Run.Profile, b.Run.Profile) {
			notSame(i, "the resolved profiles differ")
		}
	}
	_, _, _, recordErrs := shardRecords(shards)
	errs = append(errs, recordErrs...)
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
				notSame(i, "variant run %d is %s#%d, want %s#%d", k, y.Variant, y.Repetition, x.Variant, x.Repetition)
				continue
			}
			if !maps.Equal(x.FeatureGates, y.FeatureGates) {
				notSame(i, "variant %s#%d ran with feature gates %s", y.Variant, y.Repetition, changes(y.FeatureGates, x.FeatureGates))
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

// changes says, for people, where got differs from want: "key value, want
// value" for each key that differs ("unset" for a missing one), the first
// maxChanges in key order and how many more, rather than both maps whole.
func changes[V comparable](got, want map[string]V) string {
	keys := sets.List(sets.KeySet(got).Union(sets.KeySet(want)))
	show := func(m map[string]V, k string) string {
		if v, ok := m[k]; ok {
			return fmt.Sprint(v)
		}
		return "unset"
	}
	var out []string
	n := 0
	for _, k := range keys {
		g, gok := got[k]
		w, wok := want[k]
		if gok == wok && g == w {
			continue
		}
		if n++; n <= maxChanges {
			out = append(out, fmt.Sprintf("%s %s, want %s", short(k), short(show(got, k)), short(show(want, k))))
		}
	}
	if n > maxChanges {
		out = append(out, fmt.Sprintf("and %d more", n-maxChanges))
	}
	return strings.Join(out, "; ")
}

// maxChanges is the most differing keys changes names.
const maxChanges = 3

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
func mergeVariant(rules MergeRules, vrs []*VariantRun) (VariantRun, error) {
	first := vrs[0]
	out := VariantRun{
		Variant:      first.Variant,
		Repetition:   first.Repetition,
		FeatureGates: maps.Clone(first.FeatureGates),
		Start:        first.Start,
		// Every shard plays the same schedule, so the first shard's wave
		// starts are every shard's.
		WaveStarts: slices.Clone(first.WaveStarts),
		// Every shard runs the same profile's storm settings.
		WatchesClosedAfterSync: first.WatchesClosedAfterSync,
		Complete:               true,
	}
	var earliestStorm, latestStorm time.Time
	for i, v := range vrs {
		out.Start, out.End = earlier(out.Start, v.Start), later(out.End, v.End)
		if !v.StormStart.IsZero() {
			if earliestStorm.IsZero() || v.StormStart.Before(earliestStorm) {
				earliestStorm = v.StormStart
			}
			latestStorm = later(latestStorm, v.StormStart)
		}
		out.Restarts += v.Restarts
		out.Complete = out.Complete && v.Complete
		out.HostBound = out.HostBound || v.HostBound
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
		s := &MergeShards{Measurements: make([]*Measurement, len(vrs)), Variants: vrs, Restarts: out.Restarts, stormSpread: spread}
		for i, v := range vrs {
			s.Measurements[i] = v.Measurement(name)
		}
		s.Reference = s.reference()
		m, err := mergeMeasurement(name, rules, s)
		if err != nil {
			return out, fmt.Errorf("measurement %s: %w", name, err)
		}
		out.Measurements = append(out.Measurements, m)
	}
	return out, nil
}
