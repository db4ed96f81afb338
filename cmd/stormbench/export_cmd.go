package main

import (
	"context"
	"fmt"
	"io"

	"github.com/stormbench/stormbench/bench/report"
)

const exportHelp = `Writes result files in a format other tools read.

  benchfmt  the Go benchmark format: one line per variant run with every key
            metric (its unit is the metric ID), after configuration lines
            (profile, storm, nodes, pods, kubernetes, stormbench); benchstat
            reads it as it reads go test -bench output

benchstat: go install golang.org/x/perf/cmd/benchstat@latest

-o names the format; the output goes to stdout, or to --output-file.

Examples:
  stormbench export -o benchfmt results/compare-gates.json > gates.txt
  stormbench export --output-file gates.txt results/compare-gates.json
  benchstat -col /variant gates.txt
  stormbench export old.json > old.txt; stormbench export new.json > new.txt
  benchstat old.txt new.txt
`

func runExport(ctx context.Context, env *cmdEnv, args []string) error {
	var format, out string
	var force bool
	fs := newFlagSet(env, "export", "export [-o benchfmt] [--output-file FILE] RESULT.json... [flags]\n\n"+exportHelp+"\n"+outputRules+"\n")
	fs.StringVarP(&format, "output", "o", "benchfmt", "Output format: benchfmt")
	fs.StringVar(&format, "format", "benchfmt", "Same as --output")
	fs.StringVar(&out, "output-file", "", "Write here instead of stdout (- is stdout; an existing file needs --force)")
	fs.BoolVar(&force, "force", false, "Replace an existing --output-file")
	if err := parse(fs, args); err != nil {
		return err
	}
	if format != "benchfmt" {
		return usagef("unknown export format %q (-o): benchfmt", format)
	}
	if fs.NArg() == 0 {
		return usagef("export needs at least one result file")
	}
	if out == "" {
		out = "-"
	}
	if err := checkWritable(out, force); err != nil {
		return usagef("--output-file: %v", err)
	}
	inputs, err := readResults(fs.Args())
	if err != nil {
		return err
	}
	if err := writeOutput(env, out, force, func(w io.Writer) error { return report.WriteBenchfmt(w, inputs) }); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	return nil
}
