package compare_test

import (
	"fmt"
	"log"

	"github.com/stormbench/stormbench/bench/compare"
	"github.com/stormbench/stormbench/bench/result"
)

// Compare the variants of one A/B result file: legacy
// (ChangeContainerStatusOnKubeletRestart=true) against preserve.
func ExampleCompare() {
	r, err := result.ReadFile("../report/testdata/quick-ab.json")
	if err != nil {
		log.Fatal(err)
	}
	ms, err := compare.LookupMetrics(result.MetricSliceWrites, result.MetricReadyFlips)
	if err != nil {
		log.Fatal(err)
	}
	c, err := compare.Compare([]compare.Input{{Name: "quick-ab.json", Result: r}}, compare.Options{Metrics: ms})
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
