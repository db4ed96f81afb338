// Package resulttest builds and reads result documents for the tests of
// the packages that compare, gate and render them.
package resulttest

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/stormbench/stormbench/bench/measure/apiserver"
	"github.com/stormbench/stormbench/bench/measure/churn"
	"github.com/stormbench/stormbench/bench/result"
)

// Read returns a fresh copy of the result file at path, which a test may
// change.
func Read(t testing.TB, path string) *result.Result {
	t.Helper()
	r, err := result.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Synthetic builds a valid result whose variants (in order) have one
// repetition per value, each with the value as its EndpointSlice writes
// and 1,000 plus the value as its API requests.
func Synthetic(t testing.TB, id string, variants map[string][]float64, order ...string) *result.Result {
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
					{Name: apiserver.Name, Values: []result.Value{
						{Name: apiserver.Requests, Window: result.WindowStorm, Unit: result.UnitRequests, Value: 1000 + x},
					}},
					{Name: churn.Name, Values: []result.Value{
						{Name: churn.SliceWrites, Window: result.WindowStorm, Unit: result.UnitCount, Value: x},
						{Name: churn.SliceOutageSeconds, Window: result.WindowStorm, Unit: result.UnitSeconds, Value: 0},
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
