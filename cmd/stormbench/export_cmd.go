package main

import (
	"context"
	"fmt"

	"github.com/stormbench/stormbench/bench/report"
)

const exportHelp = `Writes result files in a format other tools read.

  benchfmt  the Go benchmark format: one line per variant run with every key
            metric (its unit is the metric ID), after configuration lines
            (profile, storm, nodes, pods, kubernetes, stormbench); benchstat
            reads it as it reads go test -bench output

benchstat: go install golang.org/x/perf/cmd/benchstat@latest

Examples:
  stormbench export --format benchfmt results/compare-gates.json > gates.txt
  benchstat -col /variant gates.txt
  stormbench export --format benchfmt old.json > old.txt; stormbench export --format benchfmt new.json > new.txt
  benchstat old.txt new.txt
`

func runExport(ctx context.Context, env *cmdEnv, args []string) error {
	var format string
	fs := newFlagSet(env, "export", "export --format benchfmt RESULT.json... [flags]\n\n"+exportHelp)
	fs.StringVar(&format, "format", "benchfmt", "Output format: benchfmt")
	if err := parse(fs, args); err != nil {
		return err
	}
	if format != "benchfmt" {
		return usagef("unknown export format %q: benchfmt", format)
	}
	if fs.NArg() == 0 {
		return usagef("export needs at least one result file")
	}
	inputs, err := readResults(fs.Args())
	if err != nil {
		return err
	}
	if err := report.WriteBenchfmt(env.stdout, inputs); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	return nil
}
