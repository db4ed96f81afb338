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
