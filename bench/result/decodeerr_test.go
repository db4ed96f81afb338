package result_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stormbench/stormbench/bench/result"
)

// TestDecodeMessages: a document that does not decode is explained with
// the field path of the first bad value and what it must be, in at most
// 500 characters, whatever the input's size; never in Go's words.
func TestDecodeMessages(t *testing.T) {
	var good bytes.Buffer
	if err := result.Encode(&good, layoutFixture()); err != nil {
		t.Fatal(err)
	}
	edit := func(f func(m map[string]any)) string { return edited(t, good.Bytes(), f) }
	variant := func(m map[string]any) map[string]any { return m["variants"].([]any)[0].(map[string]any) }
	measurement := func(m map[string]any) map[string]any {
		return variant(m)["measurements"].([]any)[0].(map[string]any)
	}
	huge := make([]any, 200_000)
	for i := range huge {
		huge[i] = []any{i, "x"}
	}
	for _, c := range []struct {
		name string
		doc  string
		want []string
	}{
		{"not JSON", `{"schemaVersion": 4, "run": {`, []string{"not valid JSON", "ends early"}},
		{"syntax error", "{\"schemaVersion\": 4,\n \"run\": x}", []string{"not valid JSON at line 2, column"}},
		{"a list", `[1, 2, 3]`, []string{"the document must be an object, got a list of 3 elements"}},
		{"schema version a string", `{"schemaVersion": "3"}`, []string{"schemaVersion: must be an integer, got the string \"3\""}},
		{"value a string", edit(func(m map[string]any) { measurement(m)["values"].([]any)[1].(map[string]any)["value"] = "fast" }),
			[]string{`variants[0].measurements[0].values[1].value: must be a number, got the string "fast"`}},
		{"bad time", edit(func(m map[string]any) { m["run"].(map[string]any)["start"] = "yesterday" }),
			[]string{`run.start: must be a time in RFC 3339, e.g. 2026-12-03T18:00:00Z, got the string "yesterday"`}},
		{"bad duration", edit(func(m map[string]any) {
			m["run"].(map[string]any)["cluster"].(map[string]any)["settings"].(map[string]any)["nodeLeaseDuration"] = 40
		}), []string{`run.cluster.settings.nodeLeaseDuration: must be a duration such as "50s" or "1m30s", got the number 40`}},
		{"bad point", edit(func(m map[string]any) {
			measurement(m)["series"].([]any)[0].(map[string]any)["points"].([]any)[4] = []any{1, 2, 3}
		}), []string{"variants[0].measurements[0].series[0].points[4]: must be a point [t, v] of two numbers, got a list of 3 elements"}},
		{"huge wrong array", edit(func(m map[string]any) { measurement(m)["series"].([]any)[0].(map[string]any)["points"] = huge }),
			[]string{"variants[0].measurements[0].series[0].points[0]: must be a point [t, v]"}},
		{"huge string where a number goes", edit(func(m map[string]any) { variant(m)["restarts"] = strings.Repeat("9", 100_000) }),
			[]string{"variants[0].restarts: must be an integer, got the string \"9999"}},
		{"list where a mapping goes", edit(func(m map[string]any) { variant(m)["featureGates"] = huge }),
			[]string{"variants[0].featureGates: must be an object, got a list of 200000 elements"}},
		{"unknown field", edit(func(m map[string]any) { variant(m)["restartz"] = 1 }), []string{"variants[0].restartz: unknown field"}},
		{"seed too big", edit(func(m map[string]any) { m["run"].(map[string]any)["seed"] = json.Number("1e400") }),
			[]string{"run.seed: must be an integer, got the number 1e400"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := result.Decode(strings.NewReader(c.doc))
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if len(msg) > 500 {
				t.Errorf("message has %d bytes: %.600s", len(msg), msg)
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q lacks %q", msg, w)
				}
			}
			for _, goWords := range []string{"Go value", "Go struct", "2006-01-02", "struct {", "[]interface", "map["} {
				if strings.Contains(msg, goWords) {
					t.Errorf("message %q is in Go's words (%s)", msg, goWords)
				}
			}
		})
	}
}
