package compare

import (
	"encoding/json"
	"fmt"

	"github.com/stormbench/stormbench/bench/result"
)

// Mismatches lists what makes the inputs' results incomparable with the
// first's: another profile, storm kind, fleet size or Kubernetes version.
// A comparison across them measures the difference in setup, not in the
// change under test. Each entry names the inputs and both values.
func Mismatches(inputs []Input) []string {
	if len(inputs) < 2 {
		return nil
	}
	type facts struct{ profile, kind, nodes, pods, kube string }
	of := func(in Input) facts {
		name, kind := ProfileOf(in.Result)
		r := in.Result.Run
		return facts{name, kind, fmt.Sprint(r.Fleet.Nodes), fmt.Sprint(r.Fleet.Pods), r.Cluster.Versions["kube-apiserver"]}
	}
	first := of(inputs[0])
	var out []string
	for _, in := range inputs[1:] {
		f := of(in)
		for _, d := range []struct{ what, a, b string }{
			{"profile", first.profile, f.profile},
			{"storm kind", first.kind, f.kind},
			{"nodes", first.nodes, f.nodes},
			{"pods", first.pods, f.pods},
			{"kube-apiserver version", first.kube, f.kube},
		} {
			if d.a != d.b {
				out = append(out, fmt.Sprintf("%s: %s has %q, %s has %q", d.what, inputs[0].Name, d.a, in.Name, d.b))
			}
		}
	}
	return out
}

// ProfileOf reads the profile name and storm kind the run recorded.
func ProfileOf(r *result.Result) (name, kind string) {
	var p struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Storm struct {
			Kind string `json:"kind"`
		} `json:"storm"`
	}
	_ = json.Unmarshal(r.Run.Profile, &p)
	return p.Metadata.Name, p.Storm.Kind
}
