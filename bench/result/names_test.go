package result_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stormbench/stormbench/bench/result"
)

// TestFigureAliases: a schema 3 document's camelCase figures read under
// today's snake_case names; a schema 4 document's names are read as
// written (nothing renames a figure that a newer file chose).
func TestFigureAliases(t *testing.T) {
	valid, err := json.Marshal(fixture(t))
	if err != nil {
		t.Fatal(err)
	}
	doc := func(version int) string {
		var m map[string]any
		if err := json.Unmarshal(valid, &m); err != nil {
			t.Fatal(err)
		}
		m["schemaVersion"] = version
		for _, mm := range m["variants"].([]any)[0].(map[string]any)["measurements"].([]any) {
			meas := mm.(map[string]any)
			if meas["name"] != "storm" {
				continue
			}
			for _, v := range meas["values"].([]any) {
				val := v.(map[string]any)
				if val["name"] == "stormbench_cpu_seconds" {
					val["name"] = "stormbenchCPUSeconds"
				}
			}
		}
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, tc := range []struct {
		version int
		want    string
	}{{3, "stormbench_cpu_seconds"}, {4, "stormbenchCPUSeconds"}} {
		r, err := result.Decode(strings.NewReader(doc(tc.version)))
		if err != nil {
			t.Fatalf("schema %d: %v", tc.version, err)
		}
		m := r.Variants[0].Measurement("storm")
		if _, ok := m.Value(tc.want, result.WindowStorm); !ok {
			t.Errorf("schema %d: no storm value %q in %+v", tc.version, tc.want, m.Values)
		}
	}
}

func TestCanonicalNames(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"storm.podStatusPatches", "storm.pod_status_patches"},
		{"storm.pod_status_patches", "storm.pod_status_patches"},
		{"host.busyP50", "host.busy_p50"},
		{"steadyWatches.watchesRenewed", "steadyWatches.watches_renewed"},
		// Only the measurement's own figures: another measurement's
		// figure of the same spelling is not renamed.
		{"apiserver.podStatusPatches", "apiserver.podStatusPatches"},
		{"*", "*"},
		{"apiserver.requests", "apiserver.requests"},
	} {
		if got := result.CanonicalMetricID(tc.in); got != tc.want {
			t.Errorf("CanonicalMetricID(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	for m, aliases := range result.FigureAliases {
		for from, to := range aliases {
			if strings.ToLower(to) != to || strings.Contains(to, " ") || from == to {
				t.Errorf("%s: alias %q → %q: the target must be a different snake_case name", m, from, to)
			}
		}
	}
}
