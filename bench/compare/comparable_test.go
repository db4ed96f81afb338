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
			got := Mismatches([]Input{base, tc.in})
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
	if got := Mismatches([]Input{base}); got != nil {
		t.Errorf("one input: %q", got)
	}
}
