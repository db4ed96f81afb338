package profiles

import (
	"slices"
	"strings"
	"testing"

	"github.com/stormbench/stormbench/bench/kubeversion"
)

// kubernetesProfile is a small profile with kubernetes: given as a YAML
// mapping's body ("" leaves the section out) and a preserve variant.
func kubernetesProfile(kubernetes string) []byte {
	return variantsProfile(kubernetes, "- {name: legacy, featureGates: {ChangeContainerStatusOnKubeletRestart: true}}\n")
}

// variantsProfile is kubernetesProfile with variants given as YAML list
// items.
func variantsProfile(kubernetes, variants string) []byte {
	doc := `apiVersion: stormbench.io/v1alpha1
kind: StormProfile
metadata: {name: kube}
fleet: {nodes: 10, podsPerNode: 5}
storm: {kind: kubelet, select: {count: 2}, downtime: {value: 5s}}
variants:
` + variants
	if kubernetes != "" {
		doc += "kubernetes: " + kubernetes + "\n"
	}
	return []byte(doc)
}

func TestKubernetesVersionDecoding(t *testing.T) {
	for _, tc := range []struct {
		name, kubernetes string
		// want is kubernetes.version after loading, and kv the version.
		want string
		kv   kubeversion.Version
		// errHas, when set, is a substring of the load error.
		errHas string
	}{
		{name: "unset", kubernetes: "", want: "", kv: kubeversion.Default},
		{name: "empty mapping", kubernetes: "{}", want: "", kv: kubeversion.Default},
		{name: "release tag", kubernetes: "{version: v1.37.2}", want: "v1.37.2", kv: kubeversion.V1_37},
		{name: "without v", kubernetes: `{version: "1.34.4"}`, want: "v1.34.4", kv: kubeversion.V1_34},
		{name: "minor release", kubernetes: `{version: "1.35"}`, want: "v1.35.4", kv: kubeversion.V1_35},
		{name: "the default named", kubernetes: `{version: "1.36"}`, want: "v1.36.3", kv: kubeversion.V1_36},
		{name: "unknown version", kubernetes: `{version: "1.38"}`, errHas: `kubernetes.version: Invalid value: "1.38": Kubernetes 1.38 is not supported`},
		{name: "unknown patch", kubernetes: `{version: "1.37.0"}`, errHas: "give 1.37.2 or 1.37"},
		{name: "malformed", kubernetes: `{version: "one.thirty-seven"}`, errHas: `kubernetes.version: Invalid value: "one.thirty-seven": "one.thirty-seven" is not a Kubernetes version`},
		{name: "a number", kubernetes: `{version: 1.36}`, errHas: "kubernetes.version: Invalid value: must be a string, got the number 1.36"},
		{name: "unknown field", kubernetes: `{versoin: "1.37"}`, errHas: "kubernetes.versoin: Invalid value: unknown field"},
		{name: "not a mapping", kubernetes: `"1.37"`, errHas: `kubernetes: Invalid value: must be an object, got the string "1.37"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse("kube.yaml", kubernetesProfile(tc.kubernetes))
			if tc.errHas != "" {
				if err == nil || !IsValidation(err) || !strings.Contains(err.Error(), tc.errHas) {
					t.Fatalf("Parse = %v; want a validation error with %q", err, tc.errHas)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Kubernetes.Version != tc.want || p.KubeVersion() != tc.kv {
				t.Errorf("kubernetes.version %q (%v), want %q (%v)", p.Kubernetes.Version, p.KubeVersion(), tc.want, tc.kv)
			}
			out, err := Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			if has := strings.Contains(string(out), "kubernetes:"); has != (tc.want != "") {
				t.Errorf("resolved profile writes kubernetes: %t, want %t:\n%s", has, tc.want != "", out)
			}
			checkRoundTrip(t, p)
		})
	}
}

// TestKubernetesVersionGates checks the gates against the version's
// kubelet, from the profile and from SetKubeVersion (--kube-version).
func TestKubernetesVersionGates(t *testing.T) {
	preserve := strings.Replace(string(kubernetesProfile("")), "ChangeContainerStatusOnKubeletRestart: true", "ChangeContainerStatusOnKubeletRestart: false", 1)
	p, err := Parse("kube.yaml", []byte(preserve))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		v      kubeversion.Version
		errHas string
	}{
		{v: kubeversion.V1_35},
		{v: kubeversion.V1_37},
		{v: kubeversion.V1_34, errHas: "variants[0].featureGates[ChangeContainerStatusOnKubeletRestart]: Invalid value: false: Kubernetes 1.34.4's kubelet has no such gate: it always behaves as true"},
	} {
		errs := p.SetKubeVersion(tc.v)
		if p.Kubernetes.Version != tc.v.String() {
			t.Errorf("SetKubeVersion(%v) left kubernetes.version %q", tc.v, p.Kubernetes.Version)
		}
		switch {
		case tc.errHas == "" && len(errs) > 0:
			t.Errorf("SetKubeVersion(%v) = %v", tc.v, errs.ToAggregate())
		case tc.errHas != "" && (len(errs) != 1 || !strings.Contains(errs[0].Error(), tc.errHas)):
			t.Errorf("SetKubeVersion(%v) = %v; want one error with %q", tc.v, errs.ToAggregate(), tc.errHas)
		}
	}
	// The legacy setting is what a 1.34 kubelet always does: allowed.
	legacy, err := Parse("kube.yaml", kubernetesProfile(`{version: "1.34"}`))
	if err != nil {
		t.Fatalf("1.34 with the legacy gate: %v", err)
	}
	if errs := legacy.SetKubeVersion(kubeversion.V1_34); len(errs) > 0 {
		t.Errorf("SetKubeVersion(1.34) on the legacy gate = %v", errs.ToAggregate())
	}
}

func TestEffectiveGatesAt(t *testing.T) {
	for name, d := range knownGates {
		if g, ok := kubeversion.Default.Gate(name); !ok || g.Default != d {
			t.Errorf("knownGates[%s] = %t, the default version's %+v (in table: %t)", name, d, g, ok)
		}
	}
	st := &Storm{FeatureGates: map[string]bool{GateWatchListClient: true}}
	v := &Variant{Name: "x", FeatureGates: map[string]bool{GateChangeContainerStatusOnKubeletRestart: false}}
	for _, tc := range []struct {
		kv                 kubeversion.Version
		bare, storm, overl map[string]bool
	}{
		{kv: kubeversion.V1_34,
			bare:  map[string]bool{GateChangeContainerStatusOnKubeletRestart: true, GateWatchListClient: false},
			storm: map[string]bool{GateChangeContainerStatusOnKubeletRestart: true, GateWatchListClient: true}},
		{kv: kubeversion.V1_37,
			bare:  map[string]bool{GateChangeContainerStatusOnKubeletRestart: false, GateWatchListClient: true},
			storm: map[string]bool{GateChangeContainerStatusOnKubeletRestart: false, GateWatchListClient: true}},
	} {
		check := func(what string, got, want map[string]bool) {
			t.Helper()
			if len(got) != len(want) {
				t.Errorf("%v %s: %v, want %v", tc.kv, what, got, want)
			}
			for k, w := range want {
				if got[k] != w {
					t.Errorf("%v %s: %s = %t, want %t", tc.kv, what, k, got[k], w)
				}
			}
		}
		check("defaults", EffectiveGatesAt(tc.kv, nil, nil), tc.bare)
		check("storm", EffectiveGatesAt(tc.kv, st, nil), tc.storm)
		check("variant", EffectiveGatesAt(tc.kv, st, v), map[string]bool{GateChangeContainerStatusOnKubeletRestart: false, GateWatchListClient: true})
	}
}

// TestVariantVersions: a variant may run on a Kubernetes version of its own,
// the fleet's or a newer one (an upgrade's comparison), with its gates
// checked against its own version's kubelet.
func TestVariantVersions(t *testing.T) {
	profile := func(base, variants string) []byte {
		if base == "" {
			return variantsProfile("", variants)
		}
		return variantsProfile(`{version: "`+base+`"}`, variants)
	}
	for _, tc := range []struct {
		name, base, variants string
		// want are the variants' versions, compares ComparesVersions.
		want     []kubeversion.Version
		compares bool
		errHas   string
	}{
		{name: "none of their own", variants: "- {name: a}\n- {name: b}\n",
			want: []kubeversion.Version{kubeversion.V1_36, kubeversion.V1_36}},
		{name: "upgrade", variants: "- {name: a}\n- {name: b, kubernetes: {version: \"1.37\"}}\n",
			want: []kubeversion.Version{kubeversion.V1_36, kubeversion.V1_37}, compares: true},
		{name: "the fleet's, named", base: "1.35", variants: "- {name: a, kubernetes: {version: v1.35.4}}\n",
			want: []kubeversion.Version{kubeversion.V1_35}},
		{name: "1.34 to 1.35, each gate at its version", base: "1.34",
			variants: "- {name: a}\n- {name: b, kubernetes: {version: \"1.35\"}, featureGates: {ChangeContainerStatusOnKubeletRestart: false}}\n",
			want:     []kubeversion.Version{kubeversion.V1_34, kubeversion.V1_35}, compares: true},
		{name: "a gate its version lacks", base: "1.34", variants: "- {name: a, featureGates: {ChangeContainerStatusOnKubeletRestart: false}}\n- {name: b, kubernetes: {version: \"1.35\"}}\n",
			errHas: "variants[0].featureGates[ChangeContainerStatusOnKubeletRestart]: Invalid value: false: Kubernetes 1.34.4's kubelet has no such gate"},
		{name: "a downgrade", base: "1.37", variants: "- {name: a}\n- {name: b, kubernetes: {version: \"1.36\"}}\n",
			errHas: `variants[1].kubernetes.version: Invalid value: "1.36.3": older than the fleet's Kubernetes 1.37.2`},
		{name: "unsupported", variants: "- {name: a, kubernetes: {version: \"1.38\"}}\n",
			errHas: `variants[0].kubernetes.version: Invalid value: "1.38": Kubernetes 1.38 is not supported`},
		{name: "with real kubelets", variants: "- {name: a}\n- {name: b, kubernetes: {version: \"1.37\"}}\nfleet: {nodes: 10, podsPerNode: 5, realKubelets: 1, workloads: [{template: web-exec}]}\n",
			errHas: "fleet.realKubelets: Invalid value: 1: variants of other Kubernetes versions restore the fleet's snapshot"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := profile(tc.base, tc.variants)
			if strings.Contains(tc.variants, "\nfleet:") {
				doc = []byte(strings.Replace(string(doc), "fleet: {nodes: 10, podsPerNode: 5}\n", "", 1))
			}
			p, err := Parse("kube.yaml", doc)
			if tc.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errHas) {
					t.Fatalf("Parse = %v; want an error with %q", err, tc.errHas)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []kubeversion.Version
			for _, v := range p.ResolvedVariants() {
				got = append(got, p.VariantVersion(&v))
			}
			if !slices.Equal(got, tc.want) || p.ComparesVersions() != tc.compares {
				t.Errorf("versions %v, compares %t; want %v, %t", got, p.ComparesVersions(), tc.want, tc.compares)
			}
			checkRoundTrip(t, p)
		})
	}
	// --kube-version above a variant's own version is a downgrade too.
	p, err := Parse("kube.yaml", profile("", "- {name: a}\n- {name: b, kubernetes: {version: \"1.37\"}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if errs := p.SetKubeVersion(kubeversion.V1_37); len(errs) > 0 {
		t.Errorf("SetKubeVersion(1.37) with a 1.37 variant = %v", errs.ToAggregate())
	}
	if errs := p.SetKubeVersion(kubeversion.V1_35); len(errs) > 0 || !p.ComparesVersions() {
		t.Errorf("SetKubeVersion(1.35): %v, compares %t", errs.ToAggregate(), p.ComparesVersions())
	}
	p.Variants[1].Kubernetes.Version = "v1.35.4"
	if errs := p.SetKubeVersion(kubeversion.V1_36); len(errs) != 1 || !strings.Contains(errs[0].Error(), "older than the fleet's Kubernetes 1.36.3") {
		t.Errorf("SetKubeVersion(1.36) above a 1.35 variant = %v; want the downgrade refused", errs.ToAggregate())
	}
}
