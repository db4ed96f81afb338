package report

import (
	"testing"

	"github.com/stormbench/stormbench/bench/compare"
	"github.com/stormbench/stormbench/bench/compare/resulttest"
	"github.com/stormbench/stormbench/bench/result"
)

// fixture is a real 50-node kubelet-storm A/B run: variant legacy
// (ChangeContainerStatusOnKubeletRestart=true) and preserve (false).
const fixture = "testdata/quick-ab.json"

// readFixture returns a fresh copy of the fixture, which tests may change.
func readFixture(t *testing.T) *result.Result { return resulttest.Read(t, fixture) }

// synthetic builds a result whose variants have one repetition per value,
// each with the value as its EndpointSlice writes and API requests.
var synthetic = resulttest.Synthetic

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
