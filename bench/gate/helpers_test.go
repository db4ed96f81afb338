package gate

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/stormbench/stormbench/bench/measure"
	"github.com/stormbench/stormbench/bench/result"
	"github.com/stormbench/stormbench/bench/testutil"
)

// fixture is a real 50-node kubelet-storm A/B run: variant legacy
// (ChangeContainerStatusOnKubeletRestart=true) and preserve (false). It
// lives with the report's goldens, which render it.
const fixture = "../report/testdata/quick-ab.json"

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

// setValue changes a figure of every run of a variant, failing the test if
// the figure does not exist.
func setValue(t *testing.T, r *result.Result, variant, measurement, name string, f func(float64) float64, labels ...string) {
	t.Helper()
	found := false
	for i := range r.Variants {
		v := &r.Variants[i]
		if v.Variant != variant {
			continue
		}
		m := v.Measurement(measurement)
		for j := range m.Values {
			x := &m.Values[j]
			if x.Name == name && x.Window == result.WindowStorm && labelsMatch(x.Labels, labels) {
				x.Value = f(x.Value)
				found = true
			}
		}
	}
	if !found {
		t.Fatalf("no %s %s %v in variant %s", measurement, name, labels, variant)
	}
}

// labelsMatch reports whether m holds exactly the label pairs kv.
func labelsMatch(m map[string]string, kv []string) bool {
	if len(m) != len(kv)/2 {
		return false
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if v, ok := m[kv[i]]; !ok || v != kv[i+1] {
			return false
		}
	}
	return true
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
