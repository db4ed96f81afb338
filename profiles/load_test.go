package profiles

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stormbench/stormbench/bench/kubeversion"
	"github.com/stormbench/stormbench/bench/testutil"
	"github.com/stormbench/stormbench/workloads"
)

func TestBuiltinProfilesLoad(t *testing.T) {
	names := Names()
	if !slices.Contains(names, "quick") {
		t.Fatalf("built-in profiles %v lack quick", names)
	}
	if !slices.IsSorted(names) {
		t.Errorf("Names() = %v, not sorted", names)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			p, err := Load(name)
			if err != nil {
				t.Fatalf("Load(%q): %v", name, err)
			}
			if errs := Validate(p); len(errs) > 0 {
				t.Errorf("loaded profile does not validate: %v", errs.ToAggregate())
			}
			if p.Metadata.Name != name {
				t.Errorf("metadata.name %q differs from the file name %q", p.Metadata.Name, name)
			}
			if p.Metadata.Description == "" {
				t.Error("built-in profile has no description")
			}
			for _, v := range p.ResolvedVariants() {
				if gates := EffectiveGatesAt(kubeversion.Default, p.Storm, &v); len(gates) != len(knownGates) {
					t.Errorf("variant %s resolves gates %v, want exactly the known ones", v.Name, gates)
				}
			}
			checkRoundTrip(t, p)
		})
	}
}

// checkRoundTrip checks that a resolved profile marshals to YAML that parses
// back to the same resolved profile: a result file's resolved profile must
// be loadable to rerun it.
func checkRoundTrip(t *testing.T, p *Profile) {
	t.Helper()
	first, err := Marshal(p)
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	again, err := Parse("resolved", first)
	if err != nil {
		t.Fatalf("the resolved profile does not parse again: %v\n%s", err, first)
	}
	second, err := Marshal(again)
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	if !bytes.Equal(first, second) {
		t.Fatalf("resolving is not idempotent:\n--- first\n%s\n--- second\n%s", first, second)
	}
}

func TestLoadUnknownBuiltin(t *testing.T) {
	_, err := Load("no-such-profile")
	if err == nil || !strings.Contains(err.Error(), `no built-in profile "no-such-profile" (have: `) || !strings.Contains(err.Error(), "quick") {
		t.Errorf("Load(unknown) = %v, want an error listing the built-in profiles", err)
	}
	_, err = Load("testdata/no-such-file.yaml")
	if !errors.Is(err, fs.ErrNotExist) || !strings.HasPrefix(err.Error(), "reading profile: ") {
		t.Errorf("Load(missing file) = %v, want a wrapped not-exist error", err)
	}
}

func TestMarshalQuickGolden(t *testing.T) {
	p, err := Load("quick")
	if err != nil {
		t.Fatal(err)
	}
	out, err := Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, "quick.resolved.yaml", out)
	// The golden file is itself a loadable profile.
	if _, err := Load(filepath.Join("testdata", "quick.resolved.yaml")); err != nil {
		t.Errorf("loading the resolved quick profile: %v", err)
	}
}

// badProfiles lists every file in testdata/bad with what it covers and the
// field paths its error must name. The full error text is in the .golden
// file next to it.
var badProfiles = []struct {
	file   string
	covers string
	paths  []string
}{
	{"zero-and-negative-sizes", "zero or negative sizes", []string{"fleet.nodes:", "fleet.podsPerNode:", "fleet.workloads[0].share:", "fleet.workloads[0].replicas:", "storm.select.count:", "storm.waves.size:", "storm.waves.concurrency:", "repetitions:"}},
	{"wave-larger-than-fleet", "a wave larger than the fleet", []string{"storm.waves.size:"}},
	{"wave-larger-than-selection", "a wave larger than the selected count", []string{"storm.waves.size:"}},
	{"wave-percent-above-100", "a wave percentage above 100", []string{"storm.waves.size:"}},
	{"unknown-gate", "unknown feature gates, in the storm and in a variant", []string{"storm.featureGates[ChangeContainerStatusOnKubletRestart]:", "variants[0].featureGates[KubeletReadinessPreservation]:"}},
	{"downtime-above-bound", "a downtime and an initDuration above the 1h sanity bound", []string{"storm.downtime.max:", "storm.initDuration:"}},
	{"normal-mean-above-bound", "a normal downtime mean above the sanity bound", []string{"storm.downtime.mean:"}},
	{"unknown-workload", "an unknown and a duplicate workload template", []string{"fleet.workloads[1].template:", "fleet.workloads[2].template:"}},
	{"duplicate-variants", "duplicate and missing variant names", []string{"variants[1].name:", "variants[2].name:"}},
	{"variants-without-storm", "variants without a storm", []string{"storm:"}},
	// The strict decoder names the field but not its path (see the
	// report on profiles.Parse).
	{"unknown-field", "an unknown field", []string{"storm.downtimeJitter: Invalid value: unknown field"}},
	{"duplicate-key", "a key given twice", []string{`key "fleet" already set`}},
	{"wrong-apiversion", "a wrong apiVersion", []string{"apiVersion:"}},
	{"wrong-kind-and-name", "a wrong kind and a name that is not a DNS label", []string{"kind:", "metadata.name:"}},
	{"count-and-fraction", "count and fraction both set", []string{"storm.select:"}},
	{"neither-count-nor-fraction", "neither count nor fraction", []string{"storm.select:"}},
	{"fraction-above-one", "a fraction above 1", []string{"storm.select.fraction:"}},
	// A duration that time.ParseDuration rejects: the message names the
	// field and the value.
	{"bad-duration", "a malformed duration", []string{`storm.waves.interval: Invalid value: must be a duration such as "50s" or "1m30s", got the string "5 seconds"`}},
	{"duration-without-unit", "a duration given as a bare number", []string{"storm.waves.interval"}},
	{"negative-durations", "negative durations and rolling waves without an interval", []string{"storm.waves.interval:", "storm.downtime.value:", "storm.initDuration:"}},
	{"bad-storm-enums", "bad storm kind, selector, distribution type, planned mode, label key and taint", []string{"storm.kind:", "storm.select.labelSelector:", "storm.downtime.type:", "storm.planned:", "storm.nodeChanges.setLabels[bad key!]:", "storm.nodeChanges.addTaints[0].effect:", "storm.nodeChanges.addTaints[0].key:"}},
	{"bad-timing-and-gates", "bad timing, eviction rate, scrape interval, restore settle and CI gate", []string{"timing.heartbeatFactor:", "timing.nodeMonitorPeriod:", "timing.nodeEvictionRate:", "measurements.apiserver.interval:", "measurements.apiserver.restoreSettle.window:", "measurements.apiserver.restoreSettle.windows:", "gates.maxRegression[apiserver.p99]:"}},
	{"bad-control-plane", "negative control-plane tunings, a percentage above 100, a leader-election deadline too short", []string{"controlPlane.controllerQPS:", "controlPlane.kwokParallelism:", "controlPlane.schedulerPercentageOfNodesToScore:", "controlPlane.leaderElectionRenewDeadline:"}},
	{"real-kubelets", "real kubelets with no exec-only workload in the mix, a runtime mode on a kubelet storm", []string{"fleet.realKubelets:", "storm.runtimeMode:"}},
	{"real-kubelets-above-fleet", "more real kubelets than nodes, an unknown runtime mode", []string{"fleet.realKubelets:", "storm.runtimeMode:"}},
	{"wrong-type", "a string where a number belongs", []string{`fleet.nodes: Invalid value: must be an integer, got the string "twenty"`}},
	{"several-errors", "every type error and unknown field at once, with its path (a bare wave size is a count)", []string{
		"fleet.nodes: Invalid value: must be an integer", "fleet.podsPerNode: Invalid value: must be an integer, got true",
		`storm.waves.interval: Invalid value: must be a duration such as "50s" or "1m30s", got the number 10`, "fleet.colour: Invalid value: unknown field"}},
	{"bad-repetitions", "a repetitions mapping with a fractional count and an unknown member", []string{"repetitions.count: Invalid value: must be an integer, got the number 2.5", "repetitions.seed: Invalid value: unknown field"}},
	{"bad-kubernetes-version", "a Kubernetes version stormbench does not run", []string{`kubernetes.version: Invalid value: "1.33": Kubernetes 1.33 is not supported: stormbench runs 1.34.4, 1.35.4, 1.36.3 (the default) and 1.37.2`}},
	{"kubernetes-gates", "a gate setting the version's kubelet cannot have (1.34 has no ChangeContainerStatusOnKubeletRestart)", []string{"variants[1].featureGates[ChangeContainerStatusOnKubeletRestart]: Invalid value: false: Kubernetes 1.34.4's kubelet has no such gate: it always behaves as true"}},
	{"kubernetes-fields", "a version given as a number and an unknown member of kubernetes", []string{"kubernetes.version: Invalid value: must be a string, got the number 1.37", "kubernetes.release: Invalid value: unknown field"}},
	{"empty", "an empty document", []string{"apiVersion:"}},
	{"malformed", "malformed YAML", []string{"did not find expected node content"}},
}

func TestBadProfiles(t *testing.T) {
	for _, tc := range badProfiles {
		t.Run(tc.file, func(t *testing.T) {
			p, err := Load(filepath.Join("testdata", "bad", tc.file+".yaml"))
			if err == nil {
				out, _ := Marshal(p)
				t.Fatalf("profile with %s loaded:\n%s", tc.covers, out)
			}
			if !IsValidation(err) {
				t.Errorf("error %T is not a *ValidationError: %v", err, err)
			}
			msg := err.Error()
			if want := "invalid profile " + tc.file + ".yaml: "; !strings.HasPrefix(msg, want) {
				t.Errorf("error %q does not start with %q", msg, want)
			}
			for _, p := range tc.paths {
				if !strings.Contains(msg, p) {
					t.Errorf("error does not name %s:\n%s", p, msg)
				}
			}
			testutil.Golden(t, filepath.Join("bad", tc.file+".golden"), []byte(msg+"\n"))
		})
	}
}

// TestBadProfilesListed keeps testdata/bad and the table in step: every
// profile there is tested and every golden file has its profile.
func TestBadProfilesListed(t *testing.T) {
	listed := map[string]bool{}
	for _, tc := range badProfiles {
		listed[tc.file] = true
	}
	files, err := filepath.Glob(filepath.Join("testdata", "bad", "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		base := filepath.Base(f)
		name := strings.TrimSuffix(strings.TrimSuffix(base, ".yaml"), ".golden")
		if !listed[name] {
			t.Errorf("testdata/bad/%s is not in the badProfiles table", base)
		}
	}
}

// FuzzParse checks that Parse never panics, that every error it returns is a
// *ValidationError, and that whatever it accepts is valid and survives a
// Marshal/Parse round trip. Its seed corpus (the built-in profiles and
// testdata/bad) runs with every go test; go test -fuzz=FuzzParse ./profiles
// explores further.
func FuzzParse(f *testing.F) {
	for _, name := range Names() {
		data, err := Builtin(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	bad, err := filepath.Glob(filepath.Join("testdata", "bad", "*.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	for _, path := range append(bad, filepath.Join("testdata", "quick.resolved.yaml")) {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		"", "---", "null", "[]", "{}", "apiVersion: 1", "storm: {}", "storm: null", "variants: [null]",
		"fleet: {workloads: [null]}", "gates: {maxRegression: {a: null}}", "storm: {nodeChanges: {setLabels: {'': x}}}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse("fuzz", data)
		if err != nil {
			if !IsValidation(err) {
				t.Fatalf("error %T is not a *ValidationError: %v", err, err)
			}
			if !strings.HasPrefix(err.Error(), "invalid profile fuzz: ") {
				t.Fatalf("error %q lacks the source", err)
			}
			return
		}
		if errs := Validate(p); len(errs) > 0 {
			t.Fatalf("Parse accepted a profile that does not validate: %v", errs.ToAggregate())
		}
		checkRoundTrip(t, p)
	})
}

// TestDefaultWorkloadsCoverEveryTemplate keeps the default mix complete: the
// workloads tests check that the templates together cover every behaviour
// the simulation models, which only helps if the default mix runs them all.
func TestDefaultWorkloadsCoverEveryTemplate(t *testing.T) {
	var mix []string
	for _, w := range DefaultWorkloads {
		mix = append(mix, w.Template)
	}
	slices.Sort(mix)
	if want := workloads.Names(); !slices.Equal(mix, want) {
		t.Errorf("default mix %v, want every template %v", mix, want)
	}
}

func TestEffectiveCloseWatches(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		storm   bool
		variant *bool
		want    bool
	}{
		{false, nil, false},
		{true, nil, true},
		{false, &yes, true},
		{true, &no, false},
	}
	for _, tt := range tests {
		st := &Storm{CloseWatchesAfterSync: tt.storm}
		if got := EffectiveCloseWatches(st, &Variant{Name: "v", CloseWatchesAfterSync: tt.variant}); got != tt.want {
			t.Errorf("storm %v, variant %v: %v, want %v", tt.storm, tt.variant, got, tt.want)
		}
	}
	if !EffectiveCloseWatches(&Storm{CloseWatchesAfterSync: true}, nil) {
		t.Error("nil variant must take the storm's setting")
	}
}

// TestBareWaveSize: a wave size written as a number is the count it reads
// as, not a type error.
func TestBareWaveSize(t *testing.T) {
	p, err := Parse("bare.yaml", []byte(`apiVersion: stormbench.io/v1alpha1
kind: StormProfile
metadata: {name: bare}
seed: 9007199254740993
fleet: {nodes: 100, podsPerNode: 2}
storm:
  kind: kubelet
  select: {count: 50}
  waves: {size: 25, interval: 10s}
  downtime: {type: fixed, value: 3s}
`))
	if err != nil {
		t.Fatal(err)
	}
	if p.Storm.Waves.Size != "25" {
		t.Errorf("waves.size %q, want \"25\"", p.Storm.Waves.Size)
	}
	// Decoded without rounding through float64.
	if p.Seed != 9007199254740993 {
		t.Errorf("seed %d, want 9007199254740993", p.Seed)
	}
}

// TestYAMLDocuments: a profile file holds one document; "---" inside a
// block scalar, or a trailing separator, is not a second one.
func TestYAMLDocuments(t *testing.T) {
	const body = `apiVersion: stormbench.io/v1alpha1
kind: StormProfile
metadata:
  name: docs
  description: |
    first part
    ---
    second part
fleet: {nodes: 10, podsPerNode: 1}
storm:
  kind: kubelet
  select: {count: 2}
  downtime: {type: fixed, value: 3s}
`
	for _, tc := range []struct {
		name, data string
		ok         bool
	}{
		{"dashes in a block scalar", body, true},
		{"leading and trailing separators", "---\n" + body + "---\n", true},
		{"two documents", body + "---\n" + body, false},
	} {
		_, err := Parse(tc.name, []byte(tc.data))
		switch {
		case tc.ok && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case !tc.ok && (err == nil || !strings.Contains(err.Error(), "exactly one YAML document")):
			t.Errorf("%s: error %v, want one saying a file holds one document", tc.name, err)
		}
	}
}
