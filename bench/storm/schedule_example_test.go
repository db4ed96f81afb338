package storm_test

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stormbench/stormbench/bench/storm"
	"github.com/stormbench/stormbench/profiles"
)

// A rolling kubelet storm over half of six nodes, two nodes per wave, with
// at most two nodes down at once. The second wave is due at 5s but
// waits for a slot until the first nodes are Ready again at 7s.
func ExampleNewSchedule() {
	s := &profiles.Storm{
		Kind:         profiles.StormKubelet,
		Select:       profiles.Selection{Fraction: 0.5},
		Waves:        profiles.Waves{Size: "2", Interval: metav1.Duration{Duration: 5 * time.Second}, Concurrency: 2},
		Downtime:     profiles.Distribution{Type: "fixed", Value: metav1.Duration{Duration: 6 * time.Second}},
		InitDuration: metav1.Duration{Duration: time.Second},
	}
	var nodes []storm.NodeInfo
	for _, name := range []string{"kn-5", "kn-2", "kn-0", "kn-4", "kn-1", "kn-3"} {
		nodes = append(nodes, storm.NodeInfo{Name: name})
	}
	sched, err := storm.NewSchedule(s, 42, nodes)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range sched.Restarts {
		fmt.Printf("%s wave %d at %s, down %s\n", r.Node, r.Wave, r.Offset, r.Downtime)
	}
	fmt.Printf("%d waves, last node Ready at %s\n", sched.Waves, sched.End)
	// Output:
	// kn-1 wave 0 at 0s, down 6s
	// kn-0 wave 0 at 0s, down 6s
	// kn-5 wave 1 at 7s, down 6s
	// 2 waves, last node Ready at 14s
}
