package gate_test

import (
	"fmt"
	"log"

	"github.com/stormbench/stormbench/bench/compare"
	"github.com/stormbench/stormbench/bench/gate"
	"github.com/stormbench/stormbench/bench/result"
)

// Gate a result against the Kubernetes API latency SLOs and a baseline.
func ExampleEvaluate() {
	r, err := result.ReadFile("../report/testdata/quick-ab.json")
	if err != nil {
		log.Fatal(err)
	}
	opts := gate.DefaultOptions()
	opts.MaxRegression = map[string]float64{result.MetricRequests: 0.10}
	in := compare.Input{Name: "quick-ab.json", Result: r}
	rep, err := gate.Evaluate(in, in, opts)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(gate.Verdict(rep))
	// Output:
	// PASS: 12 of 12 gates passed
}
