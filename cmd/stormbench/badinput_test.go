package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestBadInputMessages feeds result files and profiles with wrong types,
// huge arrays and bad times to the commands that read them: each exits 2
// with one message of at most maxMessageLen characters that names the field
// path, and none in Go's words.
func TestBadInputMessages(t *testing.T) {
	dir := t.TempDir()
	good, err := os.ReadFile(abFixture)
	if err != nil {
		t.Fatal(err)
	}
	edit := func(name string, f func(m map[string]any)) string {
		var m map[string]any
		if err := json.Unmarshal(good, &m); err != nil {
			t.Fatal(err)
		}
		f(m)
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	values := func(m map[string]any) []any {
		return m["variants"].([]any)[0].(map[string]any)["measurements"].([]any)[0].(map[string]any)["values"].([]any)
	}
	huge := make([]any, 100_000)
	for i := range huge {
		huge[i] = float64(i)
	}
	hugeList := "[" + strings.Repeat("1, ", 50_000) + "1]"
	writeProfile := func(name, old, new string) string {
		b, err := os.ReadFile("../../profiles/quick.yaml")
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(strings.Replace(string(b), old, new, 1)), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		name string
		args []string
		path string
	}{
		{"report: string for a number", []string{"report", edit("s.json", func(m map[string]any) { values(m)[0].(map[string]any)["value"] = "fast" })}, "variants[0].measurements[0].values[0].value"},
		{"compare: huge list for a number", []string{"compare", edit("h.json", func(m map[string]any) { values(m)[1].(map[string]any)["value"] = huge })}, "variants[0].measurements[0].values[1].value"},
		{"gate: bad time", []string{"gate", "--max-regression", "10%", "--baseline", abFixture, "--current", edit("t.json", func(m map[string]any) { m["run"].(map[string]any)["start"] = "3 Dec 2026" })}, "run.start: must be a time in RFC 3339, e.g. 2026-12-03T18:00:00Z"},
		{"merge: huge list of variants", []string{"merge", "--output-file", filepath.Join(dir, "out.json"), abFixture, edit("v.json", func(m map[string]any) { m["variants"] = huge })}, "variants[0]: must be an object"},
		// benchfmt would take "legacy run/1" as a name, a space and a value.
		{"export: variant legacy run/1", []string{"export", edit("r.json", func(m map[string]any) { m["variants"].([]any)[0].(map[string]any)["variant"] = "legacy run/1" })}, `variants[0].variant: Invalid value: "legacy run/1"`},
		{"export: negative counter", []string{"export", edit("n.json", func(m map[string]any) { values(m)[0].(map[string]any)["value"] = -1 })}, "variants[0].measurements[0].values[0].value"},
		{"profiles validate: huge list for a duration", []string{"profiles", "validate", writeProfile("d.yaml", "interval: 5s", "interval: "+hugeList)}, "storm.waves.interval: Invalid value: must be a duration"},
		{"profiles validate: bad duration", []string{"profiles", "validate", writeProfile("b.yaml", "min: 3s", "min: soon")}, "storm.downtime.min"},
		{"run --dry-run: bad start", []string{"run", "--profile", "quick", "--dry-run", "--start-at", "2026-12-03 18:00"}, "--start-at: \"2026-12-03 18:00\" is not a time in RFC 3339, e.g. 2026-12-03T18:00:00Z"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, c.args...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d; stderr:\n%.600s", code, exitUsage, stderr)
			}
			if c.args[0] == "export" && stdout != "" {
				t.Errorf("export wrote lines from a refused result:\n%s", stdout)
			}
			msg := strings.TrimSuffix(strings.TrimPrefix(stderr, "stormbench: "), "\n")
			if n := utf8.RuneCountInString(msg); n > maxMessageLen {
				t.Errorf("message of %d characters: %.600s", n, msg)
			}
			if !strings.Contains(msg, c.path) {
				t.Errorf("message lacks %q: %s", c.path, msg)
			}
			for _, goWords := range []string{"Go value", "Go struct", "2006-01-02", "struct {", "(document)", "[]interface", "map["} {
				if strings.Contains(msg, goWords) {
					t.Errorf("message in Go's words (%s): %s", goWords, msg)
				}
			}
		})
	}
}
