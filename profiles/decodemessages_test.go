package profiles

import (
	"strings"
	"testing"
)

// TestDecodeMessagesBounded: a profile with a bad value reports its field
// path and what the value must be, in the user's words and in at most 500
// characters, however large the bad value is.
func TestDecodeMessagesBounded(t *testing.T) {
	base, err := Builtin("quick")
	if err != nil {
		t.Fatal(err)
	}
	replace := func(old, new string) string {
		if !strings.Contains(string(base), old) {
			t.Fatalf("quick.yaml lacks %q", old)
		}
		return strings.Replace(string(base), old, new, 1)
	}
	hugeList := "[" + strings.Repeat("1, ", 100_000) + "1]"
	hugeString := strings.Repeat("x", 100_000)
	for _, c := range []struct {
		name, doc string
		want      []string
	}{
		{"huge list for a count", replace("nodes: 50", "nodes: "+hugeList), []string{"fleet.nodes", "must be an integer, got a list of 100001 elements"}},
		{"huge list for a duration", replace("interval: 5s", "interval: "+hugeList), []string{"storm.waves.interval", "must be a duration", "got a list of 100001 elements"}},
		{"huge string for a duration", replace("interval: 5s", "interval: "+hugeString), []string{"storm.waves.interval", "must be a duration", `got the string "xxxx`}},
		{"huge string for a count", replace("nodes: 50", "nodes: "+hugeString), []string{"fleet.nodes", "must be an integer"}},
		{"huge unknown key", replace("seed: 42", "seed: 42\n"+hugeString[:1000]+": 1"), []string{"unknown field"}},
		{"wrong type in a list", replace("- name: legacy", "- name: [1, 2]"), []string{"variants[0].name", "must be a string"}},
		{"bad duration", replace("min: 3s", "min: yesterday"), []string{"storm.downtime.min", `must be a duration such as "50s" or "1m30s", got the string "yesterday"`}},
		{"mapping for a number", replace("fraction: 0.2", "fraction: {a: 1}"), []string{"storm.select.fraction", "must be a number"}},
		{"second document", string(base) + "\n---\n" + string(base), []string{"exactly one YAML document"}},
		{"bad YAML", "fleet: [\n" + hugeString, []string{"line"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("p.yaml", []byte(c.doc))
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
			for _, goWords := range []string{"(document)", "Go value", "Go struct", "2006-01-02", "struct {", "time: "} {
				if strings.Contains(msg, goWords) {
					t.Errorf("message %q is in Go's words (%s)", msg, goWords)
				}
			}
		})
	}
}
