package report

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/stormbench/stormbench/bench/compare"
	"github.com/stormbench/stormbench/bench/measure"
	"github.com/stormbench/stormbench/bench/result"
	"github.com/stormbench/stormbench/bench/testutil"
)

// fixture is a real 50-node kubelet-storm A/B run: variant legacy
// (ChangeContainerStatusOnKubeletRestart=true) and preserve (false).
const fixture = "testdata/quick-ab.json"

// readFixture returns a fresh copy of the fixture, which tests may change.
func readFixture(t *testing.T) *result.Result {
	t.Helper()
	r, err := result.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	testutil.Golden(t, name, got)
}

// synthetic builds a result whose variants have one repetition per value,
// each with the value as its EndpointSlice writes and API requests.
func synthetic(t *testing.T, id string, variants map[string][]float64, order ...string) *result.Result {
	t.Helper()
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	r := &result.Result{
		SchemaVersion: result.SchemaVersion,
		Complete:      true,
		Run: result.Run{
			ID: id, ToolVersion: "test", Start: start, End: start.Add(time.Hour),
			Fleet:   result.Fleet{Nodes: 10, Pods: 100, Services: 5},
			Profile: json.RawMessage(`{"metadata":{"name":"synthetic"},"storm":{"kind":"kubelet"}}`),
		},
	}
	for _, name := range order {
		for rep, x := range variants[name] {
			r.Variants = append(r.Variants, result.VariantRun{
				Variant: name, Repetition: rep, Start: start, StormStart: start.Add(time.Minute), End: start.Add(2 * time.Minute),
				Restarts: 10, Complete: true,
				Measurements: []result.Measurement{
					{Name: measure.MeasurementAPIServer, Values: []result.Value{
						{Name: measure.APIRequests, Window: result.WindowStorm, Unit: result.UnitRequests, Value: 1000 + x},
					}},
					{Name: measure.MeasurementEndpointSlices, Values: []result.Value{
						{Name: measure.SliceWrites, Window: result.WindowStorm, Unit: result.UnitCount, Value: x},
						{Name: measure.SliceOutageSeconds, Window: result.WindowStorm, Unit: result.UnitSeconds, Value: 0},
					}},
				},
			})
		}
	}
	var buf bytes.Buffer
	if err := result.Encode(&buf, r); err != nil {
		t.Fatalf("synthetic result is invalid: %v", err)
	}
	return r
}

// findRow returns the comparison's row of a metric, failing the test if it
// has none.
func findRow(t *testing.T, c *compare.Comparison, id string) compare.Row {
	t.Helper()
	for _, r := range c.Rows {
		if r.Metric.ID == id {
			return r
		}
	}
	t.Fatalf("no row %s", id)
	return compare.Row{}
}
