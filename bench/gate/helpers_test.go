package gate

import (
	"strings"
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
var synthetic = resulttest.Synthetic

// checkFailed checks that the report's failed gates are as many as want,
// each "variant/name: detail" holding its want, in order.
func checkFailed(t *testing.T, rep *Report, want []string) {
	t.Helper()
	var failed []string
	for _, g := range rep.FailedGates() {
		failed = append(failed, g.Variant+"/"+g.Name+": "+g.Detail)
	}
	if len(failed) != len(want) {
		t.Fatalf("failed gates %q, want %q", failed, want)
	}
	for i, w := range want {
		if !strings.Contains(failed[i], w) {
			t.Errorf("failed gate %q, want %q", failed[i], w)
		}
	}
}
