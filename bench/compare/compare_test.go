package compare

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"

	"github.com/stormbench/stormbench/bench/result"
)

// TestCompareFixture checks the A/B fixture's headline: readiness kept
// across the restart removes EndpointSlice churn, and one repetition per
// variant is too few to call it significant.
func TestCompareFixture(t *testing.T) {
	c, err := Compare([]Input{{Name: "quick-ab.json", Result: readFixture(t)}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c.GroupBy != GroupByVariant || c.Baseline != "legacy" || len(c.Groups) != 2 || c.Groups[1].Name != "preserve" {
		t.Fatalf("groups: by %s, baseline %s, %+v", c.GroupBy, c.Baseline, GroupNames(c.Groups))
	}
	row := findRow(t, c, result.MetricSliceWrites)
	if row.Cells[0].Median != 157 || row.Cells[1].Median != 0 {
		t.Errorf("slice writes legacy %v preserve %v, want 157 and 0", row.Cells[0].Median, row.Cells[1].Median)
	}
	d := row.Cells[1].Delta
	if d == nil || !d.TooFew || d.Significant || d.Text != "-100%" || len(d.Notes) != 1 {
		t.Fatalf("delta %+v, want -100%% flagged as too few repetitions", d)
	}
	if !strings.Contains(c.Notes[d.Notes[0]-1], "too few repetitions") {
		t.Errorf("note %q does not say too few repetitions", c.Notes[d.Notes[0]-1])
	}
	// Identical samples are "~".
	if d := findRow(t, c, result.MetricThrottled).Cells[1].Delta; d == nil || d.Text != "~" {
		t.Errorf("429s delta %+v, want ~", d)
	}
	// A metric nobody measured is left out; a variant with no samples is "-".
	for _, r := range c.Rows {
		if r.Metric.ID == result.MetricFlowRejected {
			t.Errorf("row %s has no data and should be left out", r.Metric.ID)
		}
	}
	if cell := findRow(t, c, "recovery.pod_ready_p99").Cells[1]; cell.N != 0 || cell.Delta != nil {
		t.Errorf("preserve pod recovery p99 %+v, want missing", cell)
	}
}

func findRow(t *testing.T, c *Comparison, id string) Row {
	t.Helper()
	for _, r := range c.Rows {
		if r.Metric.ID == id {
			return r
		}
	}
	t.Fatalf("no row %s", id)
	return Row{}
}

func TestCompareSignificance(t *testing.T) {
	tests := []struct {
		name        string
		base, cur   []float64
		wantText    string
		significant bool
		tooFew      bool
	}{
		{"clear decrease", []float64{100, 102, 98, 101, 99}, []float64{50, 52, 49, 51, 48}, "-50.0%", true, false},
		{"overlapping", []float64{100, 102, 98, 101, 99}, []float64{101, 97, 103, 100, 99}, "~", false, false},
		{"one run each", []float64{100}, []float64{150}, "+50.0%", false, true},
		{"three runs each", []float64{100, 101, 102}, []float64{150, 151, 152}, "+49.5%", false, true},
		{"increase from zero", []float64{0, 0, 0, 0, 0}, []float64{3, 4, 5, 6, 7}, "up from 0", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := synthetic(t, "s", map[string][]float64{"a": tt.base, "b": tt.cur}, "a", "b")
			c, err := Compare([]Input{{Name: "s.json", Result: r}}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			d := findRow(t, c, result.MetricSliceWrites).Cells[1].Delta
			if d == nil {
				t.Fatal("no delta")
			}
			if d.Text != tt.wantText || d.Significant != tt.significant || d.TooFew != tt.tooFew {
				t.Errorf("delta %q significant=%t tooFew=%t (p=%.3f), want %q %t %t", d.Text, d.Significant, d.TooFew, d.P, tt.wantText, tt.significant, tt.tooFew)
			}
		})
	}
}

func TestCompareGrouping(t *testing.T) {
	old := synthetic(t, "old", map[string][]float64{"default": {10, 11}}, "default")
	cur := synthetic(t, "new", map[string][]float64{"default": {20, 21}}, "default")
	ins := []Input{{Name: "old.json", Result: old}, {Name: "new.json", Result: cur}}
	c, err := Compare(ins, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c.GroupBy != GroupByFile || strings.Join(GroupNames(c.Groups), ",") != "old.json,new.json" {
		t.Errorf("auto grouping of two one-variant files: %s %v, want file old.json,new.json", c.GroupBy, GroupNames(c.Groups))
	}
	c, err = Compare(ins, Options{GroupBy: GroupByVariant})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Groups) != 1 || len(c.Groups[0].Runs) != 4 {
		t.Errorf("variant grouping pools both files: %+v", c.Groups)
	}
	c, err = Compare(ins, Options{GroupBy: GroupByFileVariant, Baseline: "new.json/default"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Baseline != "new.json/default" || c.Groups[0].Name != "new.json/default" {
		t.Errorf("baseline %s first group %s, want new.json/default first", c.Baseline, c.Groups[0].Name)
	}
	if _, err := Compare(ins, Options{Baseline: "nope"}); err == nil || !strings.Contains(err.Error(), "old.json, new.json") {
		t.Errorf("unknown baseline: %v, want an error listing the groups", err)
	}
	if _, err := Compare([]Input{ins[0], ins[0]}, Options{}); err == nil {
		t.Error("two inputs with one name: no error")
	}
}

func TestCompareJSON(t *testing.T) {
	// Infinite intervals and changes must not break JSON encoding.
	r := synthetic(t, "s", map[string][]float64{"a": {0, 0}, "b": {1, 2}}, "a", "b")
	for _, in := range []Input{{Name: "s.json", Result: r}, {Name: "quick-ab.json", Result: readFixture(t)}} {
		c, err := Compare([]Input{in}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatalf("%s: %v", in.Name, err)
		}
		var back Comparison
		if err := json.Unmarshal(b, &back); err != nil || len(back.Rows) != len(c.Rows) {
			t.Errorf("%s: round trip: %v, %d rows", in.Name, err, len(back.Rows))
		}
	}
}

func TestLookupMetrics(t *testing.T) {
	ms, err := LookupMetrics(result.MetricReadyFlips, result.MetricRequests)
	if err != nil || len(ms) != 2 || ms[0].ID != result.MetricReadyFlips {
		t.Fatalf("LookupMetrics: %v %v", ms, err)
	}
	_, err = LookupMetrics("apiserver.p99", "x")
	if err == nil || !strings.Contains(err.Error(), `"apiserver.p99", "x"`) || !strings.Contains(err.Error(), result.MetricMutatingP99) {
		t.Errorf("unknown metrics: %v, want both named and the known ones listed", err)
	}
	seen := map[string]bool{}
	for _, m := range KeyMetrics() {
		if seen[m.ID] || m.Label == "" || m.Unit == "" || m.Extract == nil {
			t.Errorf("metric %+v: duplicate or incomplete", m)
		}
		seen[m.ID] = true
	}
}

func TestParseGroupBy(t *testing.T) {
	for in, want := range map[string]GroupBy{"": GroupByAuto, "auto": GroupByAuto, "variant": GroupByVariant, "file": GroupByFile, "file-variant": GroupByFileVariant} {
		if got, err := ParseGroupBy(in); err != nil || got != want {
			t.Errorf("ParseGroupBy(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseGroupBy("files"); err == nil {
		t.Error("ParseGroupBy(files): no error")
	}
}

// TestGroupRunsVersions: the groups of an upgrade's comparison name their
// Kubernetes versions (a variant's own, else the run's); groups of one
// version name none.
func TestGroupRunsVersions(t *testing.T) {
	r := readFixture(t)
	r.Run.Cluster.KubernetesVersion = "v1.36.3"
	if gs := GroupRuns([]Input{{Name: "a", Result: r}}, GroupByVariant); len(gs) != 2 || gs[0].KubernetesVersion != "" || gs[1].KubernetesVersion != "" {
		t.Fatalf("one version: groups %+v, want no version named", gs)
	}
	for i := range r.Variants {
		if r.Variants[i].Variant == "preserve" {
			r.Variants[i].KubernetesVersion = "v1.37.2"
		}
	}
	gs := GroupRuns([]Input{{Name: "a", Result: r}}, GroupByVariant)
	got := map[string]string{}
	for _, g := range gs {
		got[g.Name] = g.KubernetesVersion
	}
	if want := map[string]string{"legacy": "v1.36.3", "preserve": "v1.37.2"}; !maps.Equal(got, want) {
		t.Errorf("versions %v, want %v", got, want)
	}
}
