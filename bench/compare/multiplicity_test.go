package compare

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stormbench/stormbench/bench/result"
)

// aaTable is a synthetic A/B of two variants over every key metric, 5 + 5
// runs interleaved: values[metric][variant][repetition].
type aaTable struct {
	metrics []Metric
	values  [][2][]float64
}

// newAATable draws every key metric's runs for both variants from one
// distribution (an A/A), seeded: a level per metric, 5 % Gaussian noise,
// and now and then a run far off (the baseline lottery of issue 45), in
// either variant alike.
func newAATable(seed uint64) *aaTable {
	rng := rand.New(rand.NewPCG(seed, 45))
	t := &aaTable{metrics: KeyMetrics()}
	t.values = make([][2][]float64, len(t.metrics))
	for i := range t.metrics {
		level := 10 * float64(i+1)
		for v := range 2 {
			for range 5 {
				x := level * (1 + 0.05*rng.NormFloat64())
				if rng.Float64() < 0.1 {
					x *= 1.4
				}
				t.values[i][v] = append(t.values[i][v], x)
			}
		}
	}
	return t
}

// shift multiplies the second variant's runs of metric i by f.
func (t *aaTable) shift(i int, f float64) {
	for r := range t.values[i][1] {
		t.values[i][1][r] *= f
	}
}

// compare runs Compare on the table: variants legacy-a and legacy-b, each
// key metric reading the table instead of a measurement.
func (t *aaTable) compare(tb testing.TB) *Comparison {
	tb.Helper()
	start := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
	r := &result.Result{SchemaVersion: result.SchemaVersion, Complete: true, Run: result.Run{ID: "aa", ToolVersion: "test", Start: start}}
	names := [2]string{"legacy-a", "legacy-b"}
	for rep := range 5 {
		for _, name := range names {
			r.Variants = append(r.Variants, result.VariantRun{Variant: name, Repetition: rep, Restarts: 10, Complete: true})
		}
	}
	ms := make([]Metric, len(t.metrics))
	for i, m := range t.metrics {
		m.Extract = func(vr *result.VariantRun) (float64, bool) {
			v := 0
			if vr.Variant == names[1] {
				v = 1
			}
			return t.values[i][v][vr.Repetition], true
		}
		ms[i] = m
	}
	c, err := Compare([]Input{{Name: "aa.json", Result: r}}, Options{Metrics: ms})
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// TestAAVerdict is the A/A self-check of issue 45 on synthetic results:
// between two variants drawn from one distribution, 5 + 5 runs, every key
// metric reads "~" after the table's correction, where the uncorrected
// test often finds a difference that is not there; and a real shift of
// several metrics is still found.
func TestAAVerdict(t *testing.T) {
	const tables = 200
	rawTables, adjTables := 0, 0
	for seed := range uint64(tables) {
		c := newAATable(seed).compare(t)
		if c.Correction != CorrectionBH || c.Tests != len(KeyMetrics()) {
			t.Fatalf("seed %d: correction %q over %d tests, want %s over %d", seed, c.Correction, c.Tests, CorrectionBH, len(KeyMetrics()))
		}
		raw, adj := false, false
		for _, r := range c.Rows {
			d := r.Cells[1].Delta
			raw = raw || d.P <= c.Alpha
			adj = adj || d.Significant
			if d.PAdjusted < min(d.P, 1)-1e-12 {
				t.Fatalf("seed %d %s: adjusted p %v below p %v", seed, r.Metric.ID, d.PAdjusted, d.P)
			}
			if d.Significant != (d.Text != "~") {
				t.Fatalf("seed %d %s: text %q, significant %t", seed, r.Metric.ID, d.Text, d.Significant)
			}
		}
		if raw {
			rawTables++
		}
		if adj {
			adjTables++
		}
		if seed == 0 {
			// The table a user would look at: every key metric "~".
			for _, r := range c.Rows {
				if d := r.Cells[1].Delta; d.Text != "~" {
					t.Errorf("seed 0: %s reads %q (p %.3f, adjusted %.3f) between identical variants", r.Metric.ID, d.Text, d.P, d.PAdjusted)
				}
			}
		}
	}
	// Uncorrected, most of these A/A tables would show a difference that
	// is not there; corrected, about α of them or fewer (under the global
	// null, Benjamini-Hochberg bounds the chance of any false finding at
	// α, and the discrete U test is conservative).
	t.Logf("A/A tables with a difference: %d of %d uncorrected, %d corrected", rawTables, tables, adjTables)
	if rawTables < tables/4 {
		t.Errorf("only %d of %d A/A tables have a raw p ≤ α: the check has no teeth", rawTables, tables)
	}
	if adjTables > tables*3/40 {
		t.Errorf("%d of %d A/A tables show a difference after the correction, want at most 7.5%%", adjTables, tables)
	}
}

// TestAAShiftStillFound: the correction does not hide a real change. Ten of
// the key metrics up by 30 % (every run beyond the other variant's) are all
// significant after the correction, the others "~"; one metric alone,
// 5 + 5 runs among the key metrics' tests, is not, and a note says why.
func TestAAShiftStillFound(t *testing.T) {
	tab := newAATable(0)
	for i := 0; i < 10; i++ {
		tab.shift(i, 1.3)
		// Separate the samples fully, whatever the draws: the clearest
		// change 5 + 5 runs can show.
		lo := math.Inf(1)
		for _, x := range tab.values[i][1] {
			lo = min(lo, x)
		}
		for r, x := range tab.values[i][0] {
			tab.values[i][0][r] = min(x, lo*0.99)
		}
	}
	c := tab.compare(t)
	for i, r := range c.Rows {
		d := r.Cells[1].Delta
		switch {
		case i < 10 && (!d.Significant || !strings.HasPrefix(d.Text, "+")):
			t.Errorf("%s shifted +30%%: %q (p %.4f, adjusted %.4f), want a significant rise", r.Metric.ID, d.Text, d.P, d.PAdjusted)
		case i >= 10 && d.Text != "~":
			t.Errorf("%s unshifted: %q (p %.4f, adjusted %.4f), want ~", r.Metric.ID, d.Text, d.P, d.PAdjusted)
		}
	}
	// 10 p-values of 2/252 among m: adjusted m/10 · 2/252 (0.0238 for 30).
	m := float64(len(KeyMetrics()))
	if d := c.Rows[0].Cells[1].Delta; math.Abs(d.PAdjusted-m/10*2/252) > 1e-9 {
		t.Errorf("adjusted p %v, want %v/10 · 2/252", d.PAdjusted, m)
	}

	one := newAATable(0)
	one.shift(0, 2)
	lo := math.Inf(1)
	for _, x := range one.values[0][1] {
		lo = min(lo, x)
	}
	for r, x := range one.values[0][0] {
		one.values[0][0][r] = min(x, lo*0.99)
	}
	c = one.compare(t)
	d := c.Rows[0].Cells[1].Delta
	if d.Significant || d.Text != "~" || math.Abs(d.P-2.0/252) > 1e-9 || len(d.Notes) == 0 {
		t.Fatalf("one metric doubled among 30: %+v, want ~ at p = 2/252 with a note", d)
	}
	note := c.Notes[d.Notes[len(d.Notes)-1]-1]
	k := int(math.Ceil(m * 2 / 252 / 0.05))
	for _, want := range []string{fmt.Sprintf("over the table's %d tests", int(m)), fmt.Sprintf("at least %d are as clear", k), "no p goes below 0.0079"} {
		if !strings.Contains(note, want) {
			t.Errorf("note %q lacks %q", note, want)
		}
	}
}

// TestCompareAdjustsOverTheTable checks the adjustment on a small table by
// hand: two metrics, two variants against a baseline, four tests.
func TestCompareAdjustsOverTheTable(t *testing.T) {
	r := synthetic(t, "s", map[string][]float64{
		"a": {100, 101, 102, 103, 104},
		"b": {200, 201, 202, 203, 204}, // every run above a's: p = 2/252
		"c": {100, 102, 104, 101, 103}, // a's values: p = 1
	}, "a", "b", "c")
	c, err := Compare([]Input{{Name: "s.json", Result: r}}, Options{Metrics: mustLookup(t, result.MetricSliceWrites, result.MetricRequests)})
	if err != nil {
		t.Fatal(err)
	}
	if c.Tests != 4 {
		t.Fatalf("%d tests, want 4 (2 metrics × 2 variants)", c.Tests)
	}
	// Sorted p: 2/252, 2/252, 1, 1. BH: 4/2 · 2/252 = 4/252 for both.
	for _, r := range c.Rows {
		b, cc := r.Cells[1].Delta, r.Cells[2].Delta
		if math.Abs(b.PAdjusted-4.0/252) > 1e-9 || !b.Significant {
			t.Errorf("%s b: adjusted %v significant %t, want 4/252, significant", r.Metric.ID, b.PAdjusted, b.Significant)
		}
		if cc.PAdjusted != 1 || cc.Significant || cc.Text != "~" {
			t.Errorf("%s c: adjusted %v %q, want 1, ~", r.Metric.ID, cc.PAdjusted, cc.Text)
		}
	}
}

func mustLookup(t *testing.T, ids ...string) []Metric {
	t.Helper()
	ms, err := LookupMetrics(ids...)
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

// TestCompareRefusesLevels: Compare, as the command, refuses a level that
// is not strictly between 0 and 1, NaN included.
func TestCompareRefusesLevels(t *testing.T) {
	r := synthetic(t, "s", map[string][]float64{"a": {1, 2}, "b": {3, 4}}, "a", "b")
	for _, o := range []Options{
		{Alpha: math.NaN()}, {Confidence: math.NaN()}, {Alpha: 1}, {Alpha: -1}, {Alpha: 2},
		{Confidence: 1}, {Confidence: -0.5}, {Alpha: math.Inf(1)},
	} {
		if _, err := Compare([]Input{{Name: "s.json", Result: r}}, o); err == nil || !strings.Contains(err.Error(), "between 0 and 1") {
			t.Errorf("alpha %v confidence %v: %v, want refused", o.Alpha, o.Confidence, err)
		}
	}
	if _, err := Compare([]Input{{Name: "s.json", Result: r}}, Options{}); err != nil {
		t.Errorf("defaults: %v", err)
	}
}
