package result

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestMergeAggregations drives the generic merge with a rule of every
// aggregation, on two shards of a handcrafted measurement whose figures are
// named after their rule.
func TestMergeAggregations(t *testing.T) {
	shard := func(i int) *Result {
		f := float64(i + 1)
		start := mergeT0.Add(time.Duration(i) * 100 * time.Millisecond)
		end := mergeT0.Add(time.Minute + time.Duration(i)*time.Second)
		m := Measurement{
			Name:    "m",
			Windows: []Window{{Name: WindowStorm, Start: start, End: end}},
			Values: []Value{
				{Name: "sum", Unit: UnitCount, Value: 10 * f},
				{Name: "max", Unit: UnitCount, Value: 10 * f},
				{Name: "reference", Unit: UnitCount, Value: 10 * f},
				{Name: "recompute", Unit: UnitCount, Value: 10 * f},
				{Name: "lone", Unit: UnitCount, Value: 10 * f},
				{Name: "default", Unit: UnitCount, Value: 10 * f},
			},
			Histograms: []Histogram{hdrOf(t, "sum", WindowStorm, nil, time.Duration(i+1)*time.Second)},
			Series:     []Series{{Name: "sum", Unit: UnitCount, Start: start, Points: []Point{{T: 1, V: f}, {T: 2, V: f}}}},
		}
		return &Result{SchemaVersion: SchemaVersion, Complete: true,
			Run: Run{ID: "r", ToolVersion: "v0", Start: start, End: end},
			Variants: []VariantRun{{Variant: "default", Start: start, StormStart: start, End: end, Restarts: i + 1, Complete: true,
				Measurements: []Measurement{m}}}}
	}
	figures := map[string]Aggregation{"sum": Sum, "max": Max, "reference": Reference, "recompute": Recompute, "lone": LoneShard}
	tests := []struct {
		name  string
		scope Scope
		want  map[string]float64 // absent: left out
		notes []string
	}{
		{"per shard", PerShard, map[string]float64{"sum": 30, "max": 20, "reference": 20, "default": 30}, nil},
		{"cluster-wide", ClusterWide, map[string]float64{"sum": 30, "max": 20, "reference": 20, "default": 20},
			[]string{"cluster-wide figures taken from shard 1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			finished := false
			rule := MergeRule{Scope: tt.scope, Figures: figures, Finish: func(s *MergeShards, m *Measurement) error {
				finished = true
				if s.Reference != 1 || s.Restarts != 3 || s.Present() != 2 {
					t.Errorf("Finish saw reference %d, restarts %d, present %d; want 1, 3, 2", s.Reference, s.Restarts, s.Present())
				}
				return nil
			}}
			r, err := Merge(MergeRules{"m": rule}, shard(0), shard(1))
			if err != nil {
				t.Fatal(err)
			}
			if !finished {
				t.Error("Finish did not run")
			}
			m := r.Variants[0].Measurement("m")
			for _, name := range []string{"sum", "max", "reference", "recompute", "lone", "default"} {
				got, ok := m.Value(name, "")
				want, wantOK := tt.want[name]
				if ok != wantOK || got != want {
					t.Errorf("%s = %v (present %t), want %v (present %t)", name, got, ok, want, wantOK)
				}
			}
			if h := m.Histogram("sum", WindowStorm); h == nil || h.Summary.Count != 2 {
				t.Errorf("summed histogram = %+v, want both shards' samples", h)
			}
			if s := m.SeriesNamed("sum"); s == nil || !pointsEqual(s.Points, []Point{{T: 1, V: 1}, {T: 2, V: 3}, {T: 3, V: 3}}) {
				t.Errorf("summed series = %+v", s)
			}
			w, _ := m.Window(WindowStorm)
			wantStart := mergeT0
			if tt.scope == ClusterWide {
				wantStart = mergeT0.Add(100 * time.Millisecond)
			}
			if !w.Start.Equal(wantStart) {
				t.Errorf("window starts %v, want %v", w.Start, wantStart)
			}
			notes := strings.Join(MergeNotes(r), "\n")
			for _, n := range tt.notes {
				if !strings.Contains(notes, n) {
					t.Errorf("notes lack %q:\n%s", n, notes)
				}
			}
		})
	}
}

// A measurement the rules do not name is cluster-wide, with a note; a
// lone shard keeps a LoneShard figure.
func TestMergeUnknownAndLone(t *testing.T) {
	m := Measurement{Name: "x", Values: []Value{{Name: "lone", Unit: UnitCount, Value: 4}}}
	r := &Result{SchemaVersion: SchemaVersion, Complete: true,
		Run:      Run{ID: "r", ToolVersion: "v0", Start: mergeT0, End: mergeT0.Add(time.Minute)},
		Variants: []VariantRun{{Variant: "default", Start: mergeT0, Complete: true, Measurements: []Measurement{m}}}}
	out, err := Merge(MergeRules{}, r)
	if err != nil {
		t.Fatal(err)
	}
	if notes := strings.Join(MergeNotes(out), "\n"); !strings.Contains(notes, "measurement x is unknown to merge") {
		t.Errorf("no unknown-measurement note:\n%s", notes)
	}
	out, err = Merge(MergeRules{"x": {Figures: map[string]Aggregation{"lone": LoneShard}}}, r)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := out.Variants[0].Measurement("x").Value("lone", ""); !ok || got != 4 {
		t.Errorf("lone shard's figure = %v (present %t), want 4", got, ok)
	}
	if MergedShards(out) != 1 || out.Run.MergedFrom[0] != "shard 0" {
		t.Errorf("MergedFrom = %q", out.Run.MergedFrom)
	}
}

// The shards play one schedule: the merged variant run has the first
// shard's wave starts, once (not one copy per shard).
func TestMergeWaveStarts(t *testing.T) {
	shard := func(i int) *Result {
		start := mergeT0.Add(time.Duration(i) * 100 * time.Millisecond)
		end := start.Add(time.Minute)
		return &Result{SchemaVersion: SchemaVersion, Complete: true,
			Run: Run{ID: "r", ToolVersion: "v0", Start: start, End: end},
			Variants: []VariantRun{{Variant: "default", Start: start, StormStart: start, End: end, Restarts: 1, Complete: true,
				WaveStarts: []float64{0, 30, 60}, WatchesClosedAfterSync: true}}}
	}
	a, b := shard(0), shard(1)
	out, err := Merge(MergeRules{}, a, b)
	if err != nil {
		t.Fatal(err)
	}
	if !out.Variants[0].WatchesClosedAfterSync {
		t.Error("WatchesClosedAfterSync lost in the merge")
	}
	if got := out.Variants[0].WaveStarts; !slices.Equal(got, []float64{0, 30, 60}) {
		t.Errorf("WaveStarts = %v, want [0 30 60]", got)
	}
	out.Variants[0].WaveStarts[0] = 99
	if a.Variants[0].WaveStarts[0] != 0 {
		t.Error("the merged wave starts share the first shard's slice")
	}
}

// TestMergeShardRecords: Merge refuses a shard given twice (whatever its
// start time) and records not of one split, and marks incomplete a merge
// that lacks a shard or holds a result that records none.
func TestMergeShardRecords(t *testing.T) {
	// shard is shard i of n (nil: no record), started i×100ms after mergeT0
	// plus skew.
	shard := func(i, n int, skew time.Duration) *Result {
		start := mergeT0.Add(time.Duration(i)*100*time.Millisecond + skew)
		end := start.Add(time.Minute)
		r := &Result{SchemaVersion: SchemaVersion, Complete: true,
			Run:      Run{ID: "r", ToolVersion: "v0", Start: start, End: end},
			Variants: []VariantRun{{Variant: "default", Start: start, StormStart: start, End: end, Restarts: 1, Complete: true}}}
		if n > 0 {
			r.Run.Shard = &Shard{Index: i, Count: n}
		}
		return r
	}
	old := func(i int) *Result { return shard(i, 0, 0) }
	tests := []struct {
		name     string
		shards   []*Result
		err      string // a refused merge
		complete bool
		note     string // in the merged errors of an accepted merge
		coverage string // ShardCoverage's, ok when complete
	}{
		{name: "every shard", shards: []*Result{shard(0, 2, 0), shard(1, 2, 0)}, complete: true,
			coverage: "all 2 shards"},
		{name: "every shard, out of order", shards: []*Result{shard(2, 3, 0), shard(0, 3, 0), shard(1, 3, 0)}, complete: true,
			coverage: "all 3 shards"},
		{name: "the whole run as one shard", shards: []*Result{shard(0, 1, 0)}, complete: true, coverage: "all 1 shards"},
		{name: "same shard twice, start moved by 1ns", shards: []*Result{shard(0, 2, 0), shard(0, 2, time.Nanosecond)},
			err: "shards 0 and 1 are both shard 0/2 of run r: the same shard given twice"},
		{name: "same shard twice among others", shards: []*Result{shard(0, 3, 0), shard(1, 3, 0), shard(1, 3, time.Second)},
			err: "shards 1 and 2 are both shard 1/3"},
		{name: "other split", shards: []*Result{shard(0, 2, 0), shard(1, 3, 0)},
			err: "shard 1 is shard 1/3, but shard 0 is 0/2: not of one split into 2"},
		{name: "index out of range", shards: []*Result{shard(0, 2, 0), shard(2, 2, 0)},
			err: `shard 1: run.shard: Invalid value: "2/2": want i/n with 0 <= i < n`},
		{name: "one shard of two", shards: []*Result{shard(1, 2, 0)},
			note: "merge: shard 0 of 2 missing", coverage: "shard 0 of 2 missing"},
		{name: "two shards of four", shards: []*Result{shard(0, 4, 0), shard(3, 4, 0)},
			note: "merge: shards 1, 2 of 4 missing", coverage: "shards 1, 2 of 4 missing"},
		{name: "no records (files of older versions)", shards: []*Result{old(0), old(1)},
			note: "the results at positions 0, 1 record no shard", coverage: "the results at positions 0, 1 record no shard (a run without --shard, or a file from before shards were recorded): which shards they are cannot be checked"},
		{name: "a record and none", shards: []*Result{shard(0, 2, 0), old(1)},
			note:     "merge: shard 1 of 2 missing; the result at position 1 records no shard",
			coverage: "shard 1 of 2 missing; the result at position 1 records no shard (a run without --shard, or a file from before shards were recorded): which shard it is cannot be checked"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := Merge(MergeRules{}, tt.shards...)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if out.Complete != tt.complete {
				t.Errorf("complete %t, want %t; errors %q", out.Complete, tt.complete, out.Errors)
			}
			errs := strings.Join(out.Errors, "\n")
			if tt.note != "" && !strings.Contains(errs, tt.note) {
				t.Errorf("errors %q lack %q", errs, tt.note)
			}
			if tt.complete && len(out.Errors) > 0 {
				t.Errorf("complete merge with errors %q", out.Errors)
			}
			if out.Run.Shard != nil {
				t.Errorf("merged result records shard %s", out.Run.Shard)
			}
			if cov, ok := ShardCoverage(tt.shards); cov != tt.coverage || ok != tt.complete {
				t.Errorf("coverage %q (complete %t), want %q", cov, ok, tt.coverage)
			}
		})
	}
}
