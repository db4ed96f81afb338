package main

import (
	"cmp"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/stormbench/stormbench/bench/report"
)

const exportHelp = `Writes result files in a format other tools read.

  benchfmt  the Go benchmark format: one line per variant run with every key
            metric (its unit is the metric ID), after configuration lines
            (profile, storm, nodes, pods, kubernetes, stormbench); benchstat
            reads it as it reads go test -bench output

benchstat: go install golang.org/x/perf/cmd/benchstat@latest

-o names the format; the output goes to stdout, or to --output-file.`

const exportExamples = `  stormbench export -o benchfmt results/compare-gates.json > gates.txt
  stormbench export --output-file gates.txt results/compare-gates.json
  benchstat -col /variant gates.txt
  stormbench export old.json > old.txt; stormbench export new.json > new.txt
  benchstat old.txt new.txt`

func newExportCmd(env *cmdEnv) *cobra.Command {
	o := &exportOptions{format: "benchfmt"}
	cmd := &cobra.Command{
		Use:     "export [-o benchfmt] [--output-file FILE] RESULT.json... [flags]",
		Short:   "Write results in another tool's format: --format benchfmt (for benchstat)",
		Long:    exportHelp + "\n\n" + outputRules,
		Example: exportExamples,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validate(len(args)); err != nil {
				return err
			}
			inputs, err := readResults(args)
			if err != nil {
				return err
			}
			if err := writeOutput(env, o.out, o.force, func(w io.Writer) error { return report.WriteBenchfmt(w, inputs) }); err != nil {
				return fmt.Errorf("export: %w", err)
			}
			return nil
		},
	}
	o.addFlags(cmd.Flags())
	completeValues(cmd, "output", "benchfmt")
	return cmd
}

// exportOptions are the flags of export.
type exportOptions struct {
	format, out string
	force       bool
}

func (o *exportOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringVarP(&o.format, "output", "o", o.format, "Output format: benchfmt")
	fs.StringVar(&o.format, "format", o.format, "Same as --output")
	fs.StringVar(&o.out, "output-file", "", "Write here instead of stdout (- is stdout; an existing file needs --force)")
	fs.BoolVar(&o.force, "force", false, "Replace an existing --output-file")
}

// validate checks the format, that there are results (n), and that the
// output can be written; no --output-file is stdout.
func (o *exportOptions) validate(n int) error {
	if o.format != "benchfmt" {
		return usagef("unknown export format %q (-o): benchfmt", o.format)
	}
	if n == 0 {
		return usagef("export needs at least one result file")
	}
	o.out = cmp.Or(o.out, "-")
	if err := checkWritable(o.out, o.force); err != nil {
		return usagef("--output-file: %v", err)
	}
	return nil
}
