package compare

import (
	"strings"
	"testing"

	"github.com/stormbench/stormbench/bench/result"
)

func TestMismatches(t *testing.T) {
	mk := func(profile, kind string, nodes int, kube string) Input {
		r := &result.Result{}
		r.Run.Profile = []byte(`{"metadata":{"name":"` + profile + `"},"storm":{"kind":"` + kind + `"}}`)
		r.Run.Fleet = result.Fleet{Nodes: nodes, Pods: nodes * 10}
		r.Run.Cluster.Versions = map[string]string{"kube-apiserver": kube}
		return Input{Name: profile + ".json", Result: r}
	}
	base := mk("quick", "kubelet", 50, "v1.36.3")
	for _, tc := range []struct {
		name string
		in   Input
		want []string
	}{
		{"same setup", mk("quick", "kubelet", 50, "v1.36.3"), nil},
		{"other profile and size", mk("fleet-1k", "kubelet", 1000, "v1.36.3"), []string{"profile:", "nodes:", "pods:"}},
		{"other storm kind", mk("quick", "reboot", 50, "v1.36.3"), []string{`storm kind: quick.json has "kubelet", quick.json has "reboot"`}},
		{"other Kubernetes", mk("quick", "kubelet", 50, "v1.35.0"), []string{"kube-apiserver version"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Mismatches([]Input{base, tc.in})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("mismatches %q, want %d like %q", got, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("mismatch %q does not say %q", got[i], w)
				}
			}
		})
	}
	if got, err := Mismatches([]Input{base}); got != nil || err != nil {
		t.Errorf("one input: %q, %v", got, err)
	}
	bad := mk("quick", "kubelet", 50, "v1.36.3")
	bad.Name, bad.Result.Run.Profile = "bad.json", []byte(`{"metadata":{"name":"quick"},"rate":5}`)
	if _, err := Mismatches([]Input{base, bad}); err == nil || !strings.Contains(err.Error(), "bad.json") {
		t.Errorf("a profile that does not decode: %v, want an error naming bad.json", err)
	}
}

// TestRecordedProfile: the profile a result recorded, decoded strictly,
// or an error naming the result and the field.
func TestRecordedProfile(t *testing.T) {
	for _, tc := range []struct {
		name, profile string
		// wantName, wantKind and wantReps are the decoded profile's;
		// wantErr the parts of the error, nil for none.
		wantName, wantKind string
		wantReps           int
		wantErr            []string
	}{
		{name: "good", profile: `{"apiVersion":"stormbench.io/v1alpha1","kind":"StormProfile","metadata":{"name":"quick"},"storm":{"kind":"kubelet","waves":{"size":"10%","interval":"5s"}},"repetitions":{"count":5,"seeds":"vary"}}`,
			wantName: "quick", wantKind: "kubelet", wantReps: 5},
		{name: "repetitions as a count", profile: `{"metadata":{"name":"quick"},"repetitions":5}`, wantName: "quick", wantReps: 5},
		{name: "missing"},
		{name: "unknown field", profile: `{"metadata":{"name":"quick"},"storm":{"kind":"kubelet","rate":5}}`,
			wantErr: []string{"recorded in r.json", "storm.rate", "unknown field"}},
		{name: "wrong type", profile: `{"metadata":{"name":"quick"},"repetitions":"five"}`,
			wantErr: []string{"recorded in r.json", "repetitions", "must be a count"}},
		{name: "not JSON", profile: `{"metadata":`, wantErr: []string{"recorded in r.json"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &result.Result{}
			r.Run.Profile = []byte(tc.profile)
			p, err := RecordedProfile(Input{Name: "r.json", Result: r})
			if tc.wantErr != nil {
				if err == nil {
					t.Fatalf("decoded %+v, want an error", p)
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not say %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Metadata.Name != tc.wantName || p.StormKind() != tc.wantKind || p.Repetitions.Count != tc.wantReps {
				t.Errorf("profile %q of kind %q, %d repetitions; want %q of kind %q, %d", p.Metadata.Name, p.StormKind(), p.Repetitions.Count, tc.wantName, tc.wantKind, tc.wantReps)
			}
		})
	}
}

// TestCompareRefusesUndecodableProfile: a result whose recorded profile
// does not decode is refused, naming the file, not described as profile-less.
func TestCompareRefusesUndecodableProfile(t *testing.T) {
	r := synthetic(t, "bad", map[string][]float64{"a": {1, 2}}, "a")
	r.Run.Profile = []byte(`{"metadata":{"name":"x"},"gates":{"maxRegresion":{}}}`)
	_, err := Compare([]Input{{Name: "bad.json", Result: r}}, Options{})
	if err == nil || !strings.Contains(err.Error(), "bad.json") {
		t.Fatalf("Compare: %v, want an error naming bad.json", err)
	}
}
