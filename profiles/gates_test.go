package profiles

import (
	"strings"
	"testing"
	"time"

	"github.com/stormbench/stormbench/bench/result"
)

// quickWith is the quick profile with its last section (gates) replaced
// and text appended, or a line of it replaced.
func quickWith(t *testing.T, replace map[string]string, appendYAML string) []byte {
	t.Helper()
	b, err := Builtin("quick")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if i := strings.Index(s, "\ngates:"); i >= 0 && appendYAML != "" && strings.HasPrefix(appendYAML, "gates:") {
		s = s[:i+1]
	}
	for old, new := range replace {
		if !strings.Contains(s, old) {
			t.Fatalf("quick.yaml lacks %q", old)
		}
		s = strings.Replace(s, old, new, 1)
	}
	return []byte(s + "\n" + appendYAML)
}

// TestProfileValidationItems: the thresholds, variant names, quantities
// and downtimes of issue 28 are refused with their field path, and the
// message stays short whatever the input.
func TestProfileValidationItems(t *testing.T) {
	long := strings.Repeat("x", 1000)
	tests := []struct {
		name    string
		replace map[string]string
		append  string
		want    []string // substrings of the error; none: valid
	}{
		{name: "quick as is"},
		{name: "percent with %", append: "gates:\n  maxRegression: {\"*\": \"10%\", apiserver.requests: \"0.5%\"}"},
		{name: "bare number refused", append: "gates:\n  maxRegression: {apiserver.requests: \"0.1\"}",
			want: []string{`gates.maxRegression[apiserver.requests]: Invalid value: "0.1": give a percentage with %`}},
		{name: "bare ten refused", append: "gates:\n  maxRegression: {\"*\": \"10\"}",
			want: []string{`gates.maxRegression[*]: Invalid value: "10": give a percentage with %`}},
		{name: "negative percent", append: "gates:\n  maxRegression: {\"*\": \"-5%\"}", want: []string{"non-negative percentage"}},
		{name: "unknown metric", append: "gates:\n  maxRegression: {apiserver.p99: 10%}",
			want: []string{`gates.maxRegression[apiserver.p99]: Invalid value: "apiserver.p99": unknown metric`, "--list-metrics"}},
		{name: "unknown metric lists its few siblings", append: "gates:\n  maxRegression: {storm.flips: 10%}",
			want: []string{"storm: storm.pod_status_patches, storm.ready_flips_down, storm.stormbench_cpu_seconds"}},
		// A figure's former name (schema 3) is an unknown metric.
		{name: "former metric name", append: "gates:\n  maxRegression: {storm.podStatusPatches: 10%}",
			want: []string{`gates.maxRegression[storm.podStatusPatches]: Invalid value: "storm.podStatusPatches": unknown metric`}},
		{name: "huge metric name stays short", append: "gates:\n  maxRegression: {" + long + ": 10%}", want: []string{"unknown metric"}},
		{name: "negative SLO", append: "gates:\n  mutatingP99: -1s", want: []string{`gates.mutatingP99: Invalid value: "-1s": must not be negative`}},
		{name: "negative list SLO", append: "gates:\n  listP99: -30s", want: []string{"gates.listP99"}},
		{name: "negative recovery SLO", append: "gates:\n  recoveryP99: -1m", want: []string{"gates.recoveryP99"}},
		{name: "zero SLO turns it off", append: "gates:\n  mutatingP99: 0s\n  listP99: 0s"},
		{name: "negative outage turns it off", append: "gates:\n  maxOutageSeconds: -1"},
		{name: "outage inf", append: "gates:\n  maxOutageSeconds: .inf", want: []string{"+Inf"}}, // refused by the YAML-to-JSON step, before validation
		{name: "variant with a space", replace: map[string]string{"- name: legacy": "- name: legacy gate"},
			want: []string{`variants[0].name: Invalid value: "legacy gate": must be 1 to 63 letters`, result.VariantNamePattern}},
		{name: "variant with a slash", replace: map[string]string{"- name: legacy": "- name: a/b"}, want: []string{"variants[0].name"}},
		{name: "variant with =", replace: map[string]string{"- name: legacy": "- name: a=b"}, want: []string{"variants[0].name"}},
		{name: "variant with dots and dashes", replace: map[string]string{"- name: legacy": "- name: legacy-1.35_x"}},
		{name: "negative memory", replace: map[string]string{"  podsPerNode: 10": "  podsPerNode: 10\n  nodeMemory: -1Gi"},
			want: []string{`fleet.nodeMemory: Invalid value: "-1Gi": must be positive`}},
		{name: "zero cpu", replace: map[string]string{"  podsPerNode: 10": "  podsPerNode: 10\n  nodeCPU: \"0\""}, want: []string{"fleet.nodeCPU"}},
		{name: "bad quantity", replace: map[string]string{"  podsPerNode: 10": "  podsPerNode: 10\n  nodeMemory: lots"},
			want: []string{`fleet.nodeMemory: Invalid value: "lots": must be a quantity`}},
		{name: "uniform value refused", replace: map[string]string{"    type: uniform": "    type: uniform\n    value: 30s"},
			want: []string{"storm.downtime.value: Forbidden: a uniform downtime draws between min and max"}},
		{name: "uniform without max", replace: map[string]string{"    max: 8s": ""}, want: []string{"storm.downtime.max: Required value"}},
		{name: "fixed with min", replace: map[string]string{"    type: uniform": "    type: fixed\n    value: 5s"}, want: []string{"storm.downtime.min: Forbidden", "storm.downtime.max: Forbidden"}},
		{name: "normal with value", replace: map[string]string{"    type: uniform\n    min: 3s\n    max: 8s": "    type: normal\n    mean: 5s\n    stdDev: 1s\n    value: 5s"},
			want: []string{"storm.downtime.value: Forbidden"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("test.yaml", quickWith(t, tt.replace, tt.append))
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted, want an error with %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
			if len(err.Error()) > 500 {
				t.Errorf("error of %d characters:\n%.600s", len(err.Error()), err)
			}
		})
	}
}

// TestThresholdParser: one parser for profiles and flags.
func TestThresholdParser(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want float64
		err  string
	}{
		{"10%", 0.10, ""}, {" 0.5 % ", 0.005, ""}, {"0%", 0, ""}, {"1000%", 10, ""},
		{"10", 0, "give a percentage with %"}, {"0.1", 0, "give a percentage with %"},
		{"ten%", 0, "non-negative percentage"}, {"-1%", 0, "non-negative percentage"},
		{"NaN%", 0, "non-negative percentage"}, {"Inf%", 0, "non-negative percentage"}, {"", 0, "give a percentage"},
	} {
		got, err := ParseRegression(tt.in)
		if tt.err == "" {
			if err != nil || got != tt.want {
				t.Errorf("ParseRegression(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
		} else if err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("ParseRegression(%q) error %v, want %q", tt.in, err, tt.err)
		}
	}
	if CheckSLO(-time.Second) == nil || CheckSLO(0) != nil || CheckSLO(time.Second) != nil {
		t.Error("CheckSLO: negative must fail, 0 (off) and positive pass")
	}
	if CheckGateMetric("*") != nil || CheckGateMetric("apiserver.requests") != nil || CheckGateMetric("apiserver.p99") == nil {
		t.Error("CheckGateMetric")
	}
}
