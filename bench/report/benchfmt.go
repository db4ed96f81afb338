package report

import (
	"fmt"
	"io"
	"strconv"

	"golang.org/x/perf/benchfmt"

	"github.com/stormbench/stormbench/bench/compare"
)

// WriteBenchfmt writes the inputs' key metrics in the Go benchmark format
// (golang.org/x/perf/benchfmt), so that benchstat reads stormbench runs as
// it reads `go test -bench` output: one line per variant run,
//
//	BenchmarkStorm/variant=legacy 1 40222 apiserver.requests 1.9 apiserver.p99_mutating ...
//
// named by the variant (benchstat -col /variant compares them), after
// configuration lines for the run's setup (profile, storm kind, nodes,
// pods, kubernetes, stormbench). Each key metric is one value whose unit is
// the metric ID (its unit is in `stormbench compare --list-metrics`); a
// figure the run did not measure is left out of its line.
func WriteBenchfmt(w io.Writer, inputs []compare.Input) error {
	bw := benchfmt.NewWriter(w)
	metrics := compare.KeyMetrics()
	for _, in := range inputs {
		r := in.Result
		p, err := compare.RecordedProfile(in)
		if err != nil {
			return err
		}
		config := []benchfmt.Config{
			{Key: "profile", Value: []byte(p.Metadata.Name), File: true},
			{Key: "storm", Value: []byte(p.StormKind()), File: true},
			{Key: "nodes", Value: []byte(strconv.Itoa(r.Run.Fleet.Nodes)), File: true},
			{Key: "pods", Value: []byte(strconv.Itoa(r.Run.Fleet.Pods)), File: true},
			{Key: "kubernetes", Value: []byte(r.Run.Cluster.Versions["kube-apiserver"]), File: true},
			{Key: "stormbench", Value: []byte(r.Run.ToolVersion), File: true},
		}
		for i := range r.Variants {
			v := &r.Variants[i]
			res := &benchfmt.Result{Config: config, Name: benchfmt.Name("Storm/variant=" + v.Variant), Iters: 1}
			for _, m := range metrics {
				if x, ok := m.Extract(v); ok {
					res.Values = append(res.Values, benchfmt.Value{Value: x, Unit: m.ID})
				}
			}
			if len(res.Values) == 0 {
				continue
			}
			if err := bw.Write(res); err != nil {
				return fmt.Errorf("%s: %w", in.Name, err)
			}
		}
	}
	return nil
}
