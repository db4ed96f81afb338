package compare

import (
	"fmt"

	"github.com/stormbench/stormbench/profiles"
)

// Mismatches lists what makes the inputs' results incomparable with the
// first's: another profile, storm kind, fleet size or Kubernetes version.
// A comparison across them measures the difference in setup, not in the
// change under test. Each entry names the inputs and both values. The
// error is a recorded profile that does not decode (RecordedProfile),
// checked for every input, the first and a lone one too.
func Mismatches(inputs []Input) ([]string, error) {
	type facts struct{ profile, kind, nodes, pods, kube string }
	var all []facts
	for _, in := range inputs {
		p, err := RecordedProfile(in)
		if err != nil {
			return nil, err
		}
		r := in.Result.Run
		all = append(all, facts{p.Metadata.Name, p.StormKind(), fmt.Sprint(r.Fleet.Nodes), fmt.Sprint(r.Fleet.Pods), r.Cluster.Versions["kube-apiserver"]})
	}
	var out []string
	for i := 1; i < len(all); i++ {
		first, f := all[0], all[i]
		for _, d := range []struct{ what, a, b string }{
			{"profile", first.profile, f.profile},
			{"storm kind", first.kind, f.kind},
			{"nodes", first.nodes, f.nodes},
			{"pods", first.pods, f.pods},
			{"kube-apiserver version", first.kube, f.kube},
		} {
			if d.a != d.b {
				out = append(out, fmt.Sprintf("%s: %s has %q, %s has %q", d.what, inputs[0].Name, d.a, inputs[i].Name, d.b))
			}
		}
	}
	return out, nil
}

// RecordedProfile is the profile in's result recorded (run.profile, with
// its defaults applied), decoded strictly by profiles.Decode: an unknown
// field or a value of the wrong type is an error that names the input and
// the field. A result that recorded none (a document of before profiles
// were recorded, a test's) has the zero profile.
func RecordedProfile(in Input) (*profiles.Profile, error) {
	if len(in.Result.Run.Profile) == 0 {
		return &profiles.Profile{}, nil
	}
	return profiles.Decode("recorded in "+in.Name, in.Result.Run.Profile)
}
