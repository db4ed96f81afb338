package gate

import (
	"testing"

	"github.com/stormbench/stormbench/bench/compare/resulttest"
	"github.com/stormbench/stormbench/bench/result"
)

// fixture is a real 50-node kubelet-storm A/B run: variant legacy
// (ChangeContainerStatusOnKubeletRestart=true) and preserve (false). It
// lives with the report's goldens, which render it.
const fixture = "../report/testdata/quick-ab.json"

// readFixture returns a fresh copy of the fixture, which tests may change.
func readFixture(t *testing.T) *result.Result { return resulttest.Read(t, fixture) }

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
			if x.Name == name && x.Window == result.WindowStorm && result.LabelsEqual(x.Labels, labels) {
				x.Value = f(x.Value)
				found = true
			}
		}
	}
	if !found {
		t.Fatalf("no %s %s %v in variant %s", measurement, name, labels, variant)
	}
}

// synthetic builds a result whose variants have one repetition per value,
// each with the value as its EndpointSlice writes and API requests.
func synthetic(t *testing.T, id string, variants map[string][]float64, order ...string) *result.Result {
	return resulttest.Synthetic(t, id, variants, order...)
}
