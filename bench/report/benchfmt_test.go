package report

import (
	"bytes"
	"testing"

	"golang.org/x/perf/benchfmt"

	"github.com/stormbench/stormbench/bench/compare"
	"github.com/stormbench/stormbench/bench/result"
)

// TestBenchfmtRoundTrip writes a committed result in the Go benchmark
// format and reads it back with golang.org/x/perf/benchfmt: one result
// per variant run, named Storm/variant=V, with the run's configuration and
// every measured key metric under its ID.
func TestBenchfmtRoundTrip(t *testing.T) {
	r, err := result.ReadFile("../../results/baselines/quick.json")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteBenchfmt(&buf, []compare.Input{{Name: "quick.json", Result: r}}); err != nil {
		t.Fatal(err)
	}
	rd := benchfmt.NewReader(&buf, "export.txt")
	var got []*benchfmt.Result
	for rd.Scan() {
		switch rec := rd.Result().(type) {
		case *benchfmt.Result:
			got = append(got, rec.Clone())
		case *benchfmt.SyntaxError:
			t.Fatalf("benchfmt cannot read the export: %v", rec)
		}
	}
	if err := rd.Err(); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(r.Variants) {
		t.Fatalf("%d benchmark results, want one per variant run (%d)", len(got), len(r.Variants))
	}
	for i, res := range got {
		v := &r.Variants[i]
		if want := "Storm/variant=" + v.Variant; res.Name.String() != want {
			t.Errorf("name %q, want %q", res.Name, want)
		}
		for key, want := range map[string]string{"profile": "quick", "storm": "kubelet", "nodes": "50", "pods": "500", "kubernetes": "v1.36.3"} {
			if g := res.GetConfig(key); g != want {
				t.Errorf("%s: config %s = %q, want %q", res.Name, key, g, want)
			}
		}
		values := map[string]float64{}
		for _, x := range res.Values {
			values[x.Unit] = x.Value
		}
		n := 0
		for _, m := range compare.KeyMetrics() {
			want, ok := m.Extract(v)
			if !ok {
				if _, has := values[m.ID]; has {
					t.Errorf("%s: %s exported though not measured", res.Name, m.ID)
				}
				continue
			}
			n++
			if values[m.ID] != want {
				t.Errorf("%s: %s = %v, want %v", res.Name, m.ID, values[m.ID], want)
			}
		}
		if n == 0 || len(values) != n {
			t.Errorf("%s: %d values, want the %d measured key metrics", res.Name, len(values), n)
		}
	}
}
