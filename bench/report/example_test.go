package report_test

import (
	"fmt"
	"log"

	"github.com/stormbench/stormbench/bench/report"
	"github.com/stormbench/stormbench/bench/result"
)

// Compare the variants of one A/B result file: legacy
// (ChangeContainerStatusOnKubeletRestart=true) against preserve.
func ExampleCompare() {
	r, err := result.ReadFile("testdata/quick-ab.json")
	if err != nil {
		log.Fatal(err)
	}
	ms, err := report.LookupMetrics("endpointSlices.slice_writes", "endpointSlices.ready_flips")
	if err != nil {
		log.Fatal(err)
	}
	c, err := report.Compare([]report.Input{{Name: "quick-ab.json", Result: r}}, report.CompareOptions{Metrics: ms})
	if err != nil {
		log.Fatal(err)
	}
	for _, row := range c.Rows {
		d := row.Cells[1].Delta
		fmt.Printf("%s: %s %v, %s %v: %s (too few repetitions: %t)\n",
			row.Metric.Label, c.Groups[0].Name, row.Cells[0].Median, c.Groups[1].Name, row.Cells[1].Median, d.Text, d.TooFew)
	}
	// Output:
	// EndpointSlice writes: legacy 157, preserve 0: -100% (too few repetitions: true)
	// Endpoint ready→not-ready flips: legacy 79, preserve 0: -100% (too few repetitions: true)
}

// Gate a result against the Kubernetes API latency SLOs and a baseline.
func ExampleEvaluateGates() {
	r, err := result.ReadFile("testdata/quick-ab.json")
	if err != nil {
		log.Fatal(err)
	}
	opts := report.DefaultGateOptions()
	opts.MaxRegression = map[string]float64{"apiserver.requests": 0.10}
	in := report.Input{Name: "quick-ab.json", Result: r}
	rep, err := report.EvaluateGates(in, in, opts)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(report.Verdict(rep))
	// Output:
	// PASS: 10 of 10 gates passed
}
