package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/stormbench/stormbench/bench/result"
)

// abFixture is a real 50-node kubelet-storm A/B result (variants legacy and
// preserve), shared with the tests of bench/report, bench/compare and
// bench/gate.
const abFixture = "../../bench/report/testdata/quick-ab.json"

// runCLI runs stormbench with args and returns its exit code and output.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), &stdout, &stderr, args)
	return code, stdout.String(), stderr.String()
}

// regressedFixture writes the fixture with the legacy variant's API
// requests up 30 % and returns its path.
func regressedFixture(t *testing.T, dir string) string {
	t.Helper()
	return rewriteFixture(t, dir, "regressed.json", func(r *result.Result) {
		for i := range r.Variants {
			if r.Variants[i].Variant == "legacy" {
				scaleStormRequests(&r.Variants[i], 1.3)
			}
		}
	})
}

// withRecordedGates writes the result at path with its recorded profile's
// gates set to maxRegression apiserver.requests: pct, and returns the copy.
func withRecordedGates(t *testing.T, dir, path, pct string) string {
	t.Helper()
	return editResult(t, path, filepath.Join(dir, "gated-"+strings.TrimSuffix(pct, "%")+"-"+filepath.Base(path)), func(r *result.Result) {
		var prof map[string]any
		if err := json.Unmarshal(r.Run.Profile, &prof); err != nil {
			t.Fatal(err)
		}
		prof["gates"] = map[string]any{"maxRegression": map[string]string{"apiserver.requests": pct}}
		var err error
		if r.Run.Profile, err = json.Marshal(prof); err != nil {
			t.Fatal(err)
		}
	})
}

func TestGateExitCodes(t *testing.T) {
	dir := t.TempDir()
	regressed := regressedFixture(t, dir)
	garbage := filepath.Join(dir, "garbage.json")
	if err := os.WriteFile(garbage, []byte(`{"schemaVersion": 4, "run": {}`), 0o644); err != nil {
		t.Fatal(err)
	}
	invalid := filepath.Join(dir, "invalid.json")
	if err := os.WriteFile(invalid, []byte(`{"schemaVersion": 4, "complete": true, "run": {"id": "x"}, "variants": []}`), 0o644); err != nil {
		t.Fatal(err)
	}
	otherSchema := filepath.Join(dir, "v9.json")
	if err := os.WriteFile(otherSchema, []byte(`{"schemaVersion": 9}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		args       []string
		code       int
		wantStdout string
		wantStderr string
	}{
		{"pass", []string{"--baseline", abFixture, "--current", abFixture, "--max-regression", "10%"}, exitOK, "PASS: ", ""},
		{"pass without baseline", []string{"--current", abFixture}, exitOK, "PASS: 8 of 8 gates passed", ""},
		{"regression", []string{"--baseline", abFixture, "--current", regressed, "--max-regression", "10%"}, exitGateFail,
			"FAIL: +30.0% from 1617", "1 of 68 gates failed: legacy regression API requests (storm)"},
		{"regression within a per-metric threshold", []string{"--baseline", abFixture, "--current", regressed, "--max-regression", "10%", "--max-regression", "apiserver.requests=50%"}, exitOK, "PASS", ""},
		{"SLO breach", []string{"--current", abFixture, "--max-mutating-p99", "50ms"}, exitGateFail, "over by 10.9ms", "legacy SLO API p99 mutating (storm)"},
		{"recovery SLO", []string{"--current", abFixture, "--max-recovery-p99", "9s"}, exitGateFail, "FAIL: over by 822ms", "2 of 10 gates failed"},
		{"SLO disabled", []string{"--current", abFixture, "--max-mutating-p99", "0", "--max-list-p99", "0", "--max-outage-seconds", "-1"}, exitOK, "PASS: 2 of 2", ""},
		{"profile gates", []string{"--current", abFixture, "--profile", writeProfile(t, dir, "mutatingP99: 10ms")}, exitGateFail, "≤ 10ms", "gates failed"},
		{"flag overrides profile", []string{"--current", abFixture, "--profile", writeProfile(t, dir, "mutatingP99: 10ms"), "--max-mutating-p99", "1s"}, exitOK, "PASS", ""},
		{"one variant", []string{"--current", abFixture, "--variant", "preserve", "--max-recovery-p99", "9.7s"}, exitOK, "PASS: 5 of 5", ""},
		{"malformed current", []string{"--current", garbage}, exitUsage, "", "decoding result"},
		{"invalid current", []string{"--current", invalid}, exitUsage, "", "run.toolVersion: Required value"},
		{"other schema", []string{"--current", otherSchema}, exitUsage, "", "schemaVersion: Unsupported value: 9"},
		{"missing baseline file", []string{"--baseline", filepath.Join(dir, "nope.json"), "--current", abFixture, "--max-regression", "5%"}, exitUsage, "", "no such file"},
		{"no current", []string{"--baseline", abFixture}, exitUsage, "", "--current is required"},
		// A baseline is always compared against: the recorded profile's
		// thresholds, or a refusal, never a PASS with the baseline ignored.
		{"baseline without thresholds", []string{"--baseline", abFixture, "--current", regressed}, exitUsage, "", "would compare nothing"},
		// Thresholds never come from the result being judged: a current
		// result whose recorded profile allows 1000 % neither supplies nor
		// loosens them.
		{"the current's recorded thresholds are ignored", []string{"--baseline", abFixture, "--current", withRecordedGates(t, dir, regressed, "1000%")}, exitUsage, "", "would compare nothing"},
		{"the current's recorded thresholds do not loosen a flag", []string{"--baseline", abFixture, "--current", withRecordedGates(t, dir, regressed, "1000%"), "--max-regression", "10%"}, exitGateFail,
			"FAIL: +30.0% from 1617", ""},
		{"the current's recorded thresholds do not loosen a profile", []string{"--baseline", abFixture, "--current", withRecordedGates(t, dir, regressed, "1000%"), "--profile", writeProfile(t, dir, "maxRegression: {\"*\": 10%}")}, exitGateFail,
			"maxRegression[*]                   ≤ +10.0%  profile gated", ""},
		{"thresholds from the baseline's recorded profile", []string{"--baseline", withRecordedGates(t, dir, abFixture, "10%"), "--current", regressed, "--thresholds-from-baseline"}, exitGateFail,
			"maxRegression[apiserver.requests]  ≤ +10.0%  profile quick recorded in the baseline gated-10-quick-ab.json", "legacy regression API requests (storm)"},
		{"baseline's recorded thresholds that the regression is within", []string{"--baseline", withRecordedGates(t, dir, abFixture, "50%"), "--current", regressed, "--thresholds-from-baseline"}, exitOK, "PASS", ""},
		{"a flag over the baseline's recorded thresholds", []string{"--baseline", withRecordedGates(t, dir, abFixture, "50%"), "--current", regressed, "--thresholds-from-baseline", "--max-regression", "apiserver.requests=10%"}, exitGateFail,
			"apiserver.requests]  ≤ +10.0%  --max-regression", ""},
		{"--thresholds-from-baseline and --profile", []string{"--baseline", abFixture, "--current", abFixture, "--thresholds-from-baseline", "--profile", "quick"}, exitUsage, "", "give one"},
		{"--thresholds-from-baseline without a baseline", []string{"--current", abFixture, "--thresholds-from-baseline"}, exitUsage, "", "needs --baseline"},
		{"thresholds say where they came from", []string{"--current", abFixture, "--max-list-p99", "0"}, exitOK, "listP99            off   --max-list-p99", ""},
		// A variant on one side only fails, either side.
		{"current lacks a variant", []string{"--baseline", abFixture, "--current", dropVariant(t, dir, abFixture, "preserve"), "--max-regression", "10%"}, exitGateFail,
			"preserve  in both, repetitions", "preserve in both, repetitions"},
		{"baseline lacks a variant", []string{"--baseline", dropVariant(t, dir, abFixture, "legacy"), "--current", abFixture, "--max-regression", "10%"}, exitGateFail,
			"missing from the baseline drop-legacy-quick-ab.json (it has: preserve)", ""},
		// Every float flag refuses NaN and Inf; a negative SLO is refused.
		{"NaN outage", []string{"--current", abFixture, "--max-outage-seconds", "NaN"}, exitUsage, "", "must be a finite number"},
		{"Inf outage", []string{"--current", abFixture, "--max-outage-seconds", "Inf"}, exitUsage, "", "must be a finite number"},
		{"-Inf outage", []string{"--current", abFixture, "--max-outage-seconds", "-Inf"}, exitUsage, "", "must be a finite number"},
		{"NaN alpha", []string{"--current", abFixture, "--alpha", "NaN"}, exitUsage, "", "must be a finite number"},
		{"negative SLO flag", []string{"--current", abFixture, "--max-mutating-p99", "-1s"}, exitUsage, "", "must not be negative"},
		{"negative SLO in a profile", []string{"--current", abFixture, "--profile", writeProfile(t, dir, "mutatingP99: -1s")}, exitUsage, "", "gates.mutatingP99"},
		{"bare number in a profile", []string{"--current", abFixture, "--baseline", abFixture, "--profile", writeProfile(t, dir, "maxRegression: {\"*\": \"0.1\"}")}, exitUsage, "", "give a percentage with %"},
		{"0s in a profile turns the SLO off", []string{"--current", abFixture, "--profile", writeProfile(t, dir, "mutatingP99: 0s")}, exitOK, "mutatingP99        off   profile gated", ""},
		{"regression without baseline", []string{"--current", abFixture, "--max-regression", "5%"}, exitUsage, "", "need --baseline"},
		{"unknown metric", []string{"--current", abFixture, "--baseline", abFixture, "--max-regression", "apiserver.p99=5%"}, exitUsage, "", `unknown metric "apiserver.p99"`},
		{"bad percentage", []string{"--current", abFixture, "--baseline", abFixture, "--max-regression", "ten%"}, exitUsage, "", "non-negative percentage"},
		{"percentage without %", []string{"--current", abFixture, "--baseline", abFixture, "--max-regression", "0.1"}, exitUsage, "", "give a percentage with %"},
		{"metric percentage without %", []string{"--current", abFixture, "--baseline", abFixture, "--max-regression", "apiserver.requests=10"}, exitUsage, "", "give a percentage with %"},
		{"unknown variant", []string{"--current", abFixture, "--variant", "nope"}, exitUsage, "", `no variant "nope"`},
		{"bad profile", []string{"--current", abFixture, "--profile", writeProfile(t, dir, "maxRegression: {apiserver.p99: 5%}")}, exitUsage, "", "gates.maxRegression[apiserver.p99]"},
		{"stray argument", []string{"--current", abFixture, abFixture}, exitUsage, "", "takes no arguments"},
		// A run of 1 repetition with 5× the requests of the committed 5 + 5
		// baseline fails on its regression row (judged on the medians), not
		// only on repetitions: a 1-against-5 U test can never be significant.
		{"1 run with 5× the baseline's requests", []string{"--baseline", committedBaseline, "--current", oneRunScaled(t, dir, committedBaseline, 5), "--thresholds-from-baseline", "--allow-host-bound"}, exitGateFail,
			"judged on the medians: n=5+1 is too few for the U test", "legacy regression API requests (storm)"},
		// Flags come last, threshold by threshold: a flag's 10 % for every
		// metric tightens the 30 % the baseline's profile gives one.
		{"a flag's * over the profile's metric", []string{"--baseline", withRecordedGates(t, dir, abFixture, "35%"), "--current", regressed, "--thresholds-from-baseline", "--max-regression", "10%"}, exitGateFail,
			"maxRegression[*] ≤ +10.0% --max-regression", "legacy regression API requests (storm)"},
		{"a former metric name", []string{"--baseline", abFixture, "--current", abFixture, "--max-regression", "storm.podStatusPatches=30%"}, exitUsage,
			"", `for "--max-regression" flag: unknown metric "storm.podStatusPatches"`},
		{"a variant of its own profile missing, no baseline", []string{"--current", dropVariant(t, dir, abFixture, "preserve")}, exitGateFail,
			"preserve  in its profile, ran", "preserve in its profile, ran"},
		{"--junit - with -o json", []string{"--current", abFixture, "--junit", "-", "-o", "json"}, exitUsage, "", "would write two documents to stdout"},
		{"--junit a FIFO nothing reads", []string{"--current", abFixture, "--junit", mkfifo(t, dir)}, exitUsage, "", "is a FIFO that nothing reads"},
		{"help", []string{"--help"}, exitOK, "--max-regression", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, append([]string{"gate"}, tt.args...)...)
			if code != tt.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, stdout, stderr)
			}
			// Columns are compared with runs of spaces collapsed.
			if !strings.Contains(strings.Join(strings.Fields(stdout), " "), strings.Join(strings.Fields(tt.wantStdout), " ")) {
				t.Errorf("stdout lacks %q:\n%s", tt.wantStdout, stdout)
			}
			if !strings.Contains(stderr, tt.wantStderr) {
				t.Errorf("stderr lacks %q:\n%s", tt.wantStderr, stderr)
			}
		})
	}
}

// committedBaseline is the gate A/B's committed result: 5 + 5 interleaved
// runs of profile quick.
const committedBaseline = "../../results/baselines/quick.json"

// oneRunScaled writes the first repetition of each variant of the result
// at path, its storm API requests multiplied by f, and returns the copy.
func oneRunScaled(t *testing.T, dir, path string, f float64) string {
	t.Helper()
	return editResult(t, path, filepath.Join(dir, "one-run-scaled-"+filepath.Base(path)), func(r *result.Result) {
		var kept []result.VariantRun
		for _, v := range r.Variants {
			if v.Repetition == 0 {
				scaleStormRequests(&v, f)
				kept = append(kept, v)
			}
		}
		r.Variants = kept
	})
}

// mkfifo makes a FIFO in dir that nothing reads.
func mkfifo(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "junit.fifo")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// dropVariant writes the result at path without the runs of a variant and
// returns the copy.
func dropVariant(t *testing.T, dir, path, variant string) string {
	t.Helper()
	return editResult(t, path, filepath.Join(dir, "drop-"+variant+"-"+filepath.Base(path)), func(r *result.Result) {
		r.Variants = slices.DeleteFunc(r.Variants, func(v result.VariantRun) bool { return v.Variant == variant })
	})
}

// writeProfile writes the quick profile with the given gates section.
func writeProfile(t *testing.T, dir, gates string) string {
	t.Helper()
	p := filepath.Join(dir, strings.NewReplacer(" ", "", ":", "", "{", "", "}", "", "%", "").Replace(gates)+".yaml")
	doc := `apiVersion: stormbench.io/v1alpha1
kind: StormProfile
metadata:
  name: gated
seed: 1
fleet:
  nodes: 10
  podsPerNode: 5
gates:
  ` + gates + "\n"
	if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestGateExports(t *testing.T) {
	dir := t.TempDir()
	junit := filepath.Join(dir, "gate.xml")
	perf := filepath.Join(dir, "perfdash")
	code, stdout, stderr := runCLI(t, "gate", "--baseline", abFixture, "--current", regressedFixture(t, dir),
		"--max-regression", "10%", "--junit", junit, "--perfdash", perf)
	if code != exitGateFail {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, stdout, stderr)
	}
	// JUnit is written even though (because) a gate failed.
	b, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil || doc.Tests != 68 || doc.Failures != 1 {
		t.Errorf("JUnit: %v, %d tests, %d failures; want 68 and 1", err, doc.Tests, doc.Failures)
	}
	entries, err := os.ReadDir(perf)
	if err != nil || len(entries) != 3 {
		t.Errorf("perfdash dir: %v, %d files, want 3", err, len(entries))
	}
	code, stdout, _ = runCLI(t, "gate", "--current", abFixture, "-o", "json")
	if code != exitOK || !strings.Contains(stdout, `"status": "pass"`) {
		t.Errorf("-o json: exit %d\n%s", code, stdout)
	}
}
