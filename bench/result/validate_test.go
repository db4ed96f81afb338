package result_test

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stormbench/stormbench/bench/result"
)

// doc is the golden result as generic JSON, for a test to corrupt.
func doc(t *testing.T) map[string]any {
	t.Helper()
	b, err := os.ReadFile("testdata/result.golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var d map[string]any
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// edited is the JSON document b as f changes it.
func edited(t *testing.T, b []byte, f func(m map[string]any)) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	f(m)
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// at walks d by keys and indexes ("variants", 0, "measurements", 0).
func at(d any, path ...any) map[string]any {
	for _, k := range path {
		switch k := k.(type) {
		case string:
			d = d.(map[string]any)[k]
		case int:
			d = d.([]any)[k]
		}
	}
	return d.(map[string]any)
}

// TestValidateOnRead: the corruptions of issue 28 fail on read with their
// field path, in a short message; the uncorrupted document reads.
func TestValidateOnRead(t *testing.T) {
	api := []any{"variants", 0, "measurements", 0}
	tests := []struct {
		name   string
		change func(d map[string]any)
		raw    func(s string) string // applied to the encoded JSON
		want   string                // "" reads
	}{
		{name: "as is"},
		{name: "null value", change: func(d map[string]any) { at(d, append(api, "values", 0)...)["value"] = nil },
			want: `variants[0].measurements[0].values[0].value: Invalid value: "null": must be a number`},
		{name: "null point", change: func(d map[string]any) {
			at(d, append(api, "series", 0)...)["points"].([]any)[0] = []any{1, nil}
		}, want: "variants[0].measurements[0].series[0].points[0][1]: Invalid value: \"null\": must be a number"},
		{name: "null restarts", change: func(d map[string]any) { at(d, "variants", 0)["restarts"] = nil }, want: "variants[0].restarts"},
		{name: "null labels, in key order", change: func(d map[string]any) {
			at(d, append(api, "values", 0)...)["labels"] = map[string]any{"verb": nil, "code": nil, "resource": nil}
		}, want: `labels[code]: Invalid value: "null": must be a string; variants[0].measurements[0].values[0].labels[resource]: Invalid value: "null": must be a string; variants[0].measurements[0].values[0].labels[verb]:`},
		{name: "null list is empty", change: func(d map[string]any) { at(d, "variants", 0)["errors"] = nil }},
		{name: "p99 of -1e308", change: func(d map[string]any) { at(d, append(api, "histograms", 0, "summary")...)["p99"] = -1e308 },
			want: `variants[0].measurements[0].histograms[0].summary.p99: Invalid value: "-1e+308": must not be negative`},
		{name: "negative count", change: func(d map[string]any) { at(d, append(api, "histograms", 0, "summary")...)["count"] = -5 },
			want: "summary.count"},
		{name: "sweep step", change: func(d map[string]any) {
			at(d, "variants", 0)["variant"] = "legacy/wave=5"
			at(d, "variants", 0)["sweep"] = map[string]any{"variant": "legacy", "waveSize": 5}
		}},
		{name: "sweep step of another name", change: func(d map[string]any) {
			at(d, "variants", 0)["sweep"] = map[string]any{"variant": "legacy", "waveSize": 5}
		}, want: `variants[0].sweep: Invalid value: "legacy": a sweep step's variant is named "legacy/wave=5"`},
		{name: "sweep wave of 0", change: func(d map[string]any) {
			at(d, "variants", 0)["sweep"] = map[string]any{"variant": "legacy", "waveSize": 0}
		}, want: "variants[0].sweep.waveSize: Invalid value: 0: must be at least 1"},
		{name: "negative marginal cost", change: func(d map[string]any) {
			v := at(d, append(api, "values", 0)...)
			v["name"], v["value"] = "stormbench_marginal_cpu_seconds", -0.08
		}},
		{name: "negative restarts", change: func(d map[string]any) { at(d, "variants", 0)["restarts"] = -1 },
			want: "variants[0].restarts: Invalid value: -1: must not be negative"},
		{name: "negative value", change: func(d map[string]any) { at(d, append(api, "values", 0)...)["value"] = -3 },
			want: "variants[0].measurements[0].values[0].value: Invalid value: -3: cannot be negative"},
		{name: "huge value", raw: func(s string) string { return strings.Replace(s, `"value":12345`, `"value":1e999`, 1) },
			want: "decoding result"},
		{name: "run end before start", change: func(d map[string]any) { at(d, "run")["end"] = "2026-03-01T11:00:00Z" },
			want: "run.end: Invalid value: \"2026-03-01T11:00:00Z\": before run.start"},
		{name: "variant end before start", change: func(d map[string]any) { at(d, "variants", 0)["end"] = "2026-03-01T11:59:00Z" },
			want: "variants[0].end: Invalid value: \"2026-03-01T11:59:00Z\": before start"},
		{name: "duplicate run", change: func(d map[string]any) {
			vs := d["variants"].([]any)
			d["variants"] = append(vs, vs[0])
		}, want: `variants[2]: Duplicate value: "variant \"legacy\" repetition 0, as variants[0]"`},
		{name: "point at t=1e15 s", change: func(d map[string]any) {
			pts := at(d, append(api, "series", 0)...)["points"].([]any)
			pts[len(pts)-1] = []any{1e15, 1}
		}, want: "variants[0].measurements[0].series[0].points[2]: Invalid value: \"t=1e+15s\": outside the run"},
		{name: "variant start a year late", change: func(d map[string]any) { at(d, "variants", 0)["start"] = "2027-03-01T12:00:00Z" },
			want: "variants[0].start: Invalid value: \"2027-03-01T12:00:00Z\": outside the run's start and end"},
		// An interrupted run has no end: its last points may lie long
		// after the last finished variant, and must still read (and write).
		{name: "open run, late point", change: func(d map[string]any) {
			d["complete"] = false
			delete(at(d, "run"), "end")
			pts := at(d, append(api, "series", 0)...)["points"].([]any)
			pts[len(pts)-1] = []any{5000, 1}
		}},
		{name: "negative fleet", change: func(d map[string]any) { at(d, "run", "fleet")["nodes"] = -1 }, want: "run.fleet.nodes"},
		{name: "shard 5/2", change: func(d map[string]any) { at(d, "run")["shard"] = map[string]any{"index": 5, "count": 2} },
			want: `run.shard: Invalid value: "5/2": a shard i/n has 0 <= i < n`},
		{name: "shard 1/2", change: func(d map[string]any) { at(d, "run")["shard"] = map[string]any{"index": 1, "count": 2} }},
		{name: "negative series value", change: func(d map[string]any) {
			at(d, append(api, "series", 0)...)["points"].([]any)[1] = []any{2, -4}
		}, want: "variants[0].measurements[0].series[0].points[1]: Invalid value: -4: cannot be negative"},
		{name: "no stormStart", change: func(d map[string]any) { delete(at(d, "variants", 0), "stormStart") },
			want: "variants[0].stormStart: Required value: a storm that ran (complete, or with restarts) has a start"},
		{name: "stormStart before start", change: func(d map[string]any) { at(d, "variants", 0)["stormStart"] = "2026-03-01T11:59:00Z" },
			want: `variants[0].stormStart: Invalid value: "2026-03-01T11:59:00Z": before start`},
		// A run stopped in its baseline records the variant without a storm.
		{name: "stopped before the storm", change: func(d map[string]any) {
			d["complete"] = false
			v := at(d, "variants", 0)
			delete(v, "stormStart")
			v["complete"], v["restarts"] = false, 0
		}},
		{name: "unknown hdrUnit", change: func(d map[string]any) { at(d, append(api, "histograms", 0)...)["hdrUnit"] = "furlongs" },
			want: `variants[0].measurements[0].histograms[0].hdrUnit: Unsupported value: "furlongs": supported values: "microseconds"`},
		{name: "a variant's Kubernetes version", change: func(d map[string]any) { at(d, "variants", 0)["kubernetesVersion"] = "v1.37.2" }},
		{name: "a Kubernetes version stormbench does not run", change: func(d map[string]any) { at(d, "variants", 0)["kubernetesVersion"] = "v1.99.0" },
			want: `variants[0].kubernetesVersion: Invalid value: "v1.99.0": Kubernetes 1.99 is not supported`},
		{name: "variant legacy run/1", change: func(d map[string]any) { at(d, "variants", 0)["variant"] = "legacy run/1" },
			want: `variants[0].variant: Invalid value: "legacy run/1": must be 1 to 63 letters, digits`},
		{name: "old sweep step's name", change: func(d map[string]any) { at(d, "variants", 0)["variant"] = "legacy/wave=5" }},
		{name: "sweep step of a bad name", change: func(d map[string]any) {
			at(d, "variants", 0)["variant"] = "a b/wave=5"
			at(d, "variants", 0)["sweep"] = map[string]any{"variant": "a b", "waveSize": 5}
		}, want: `variants[0].variant: Invalid value: "a b/wave=5": must be 1 to 63`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := doc(t)
			if tt.change != nil {
				tt.change(d)
			}
			b, err := json.Marshal(d)
			if err != nil {
				t.Fatal(err)
			}
			s := string(b)
			if tt.raw != nil {
				s = tt.raw(s)
			}
			_, err = result.Decode(strings.NewReader(s))
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				t.Fatalf("read, want an error with %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error lacks %q:\n%v", tt.want, err)
			}
			if len(err.Error()) > 500 {
				t.Errorf("error of %d characters: %.600s", len(err.Error()), err)
			}
		})
	}
}

// TestValidationMessageShort: a thousand problems and a huge name give a
// message of a few hundred characters.
func TestValidationMessageShort(t *testing.T) {
	d := doc(t)
	vals := at(d, "variants", 0, "measurements", 0)["values"].([]any)
	for i := range vals {
		vals[i].(map[string]any)["value"] = -1
	}
	at(d, "variants", 0)["variant"] = strings.Repeat("v", 20000)
	vs := d["variants"].([]any)
	for range 500 {
		vs = append(vs, vs[0])
	}
	d["variants"] = vs
	var b bytes.Buffer
	if err := json.NewEncoder(&b).Encode(d); err != nil {
		t.Fatal(err)
	}
	_, err := result.Decode(&b)
	if err == nil {
		t.Fatal("read")
	}
	if len(err.Error()) > 500 || !strings.Contains(err.Error(), "more") {
		t.Errorf("error of %d characters: %.700s", len(err.Error()), err)
	}
}
