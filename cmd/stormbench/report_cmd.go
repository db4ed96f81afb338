package main

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/stormbench/stormbench/bench/report"
)

const reportHelp = `Turn one result file into a report.

HTML (--output-file FILE.html, or -o html): one self-contained page (inline style and SVG charts, no
script, nothing fetched, works offline): run metadata; for a capacity sweep
(stormbench sweep) first the figures per wave size, the max safe restart wave
and charts of mutating API p99 and peak request rate against wave size; then
the key metrics of every variant against the baseline variant, API request
rate stacked by resource with the storm's waves marked, API p99 latency,
in-flight requests and APF queueing, not-ready endpoints and EndpointSlice
writes per variant, recovery latency percentiles per variant, requests per
restarted node against the kubelet start pattern, and what the simulation
does not model.

Markdown (--output-file FILE.md, or stdout by default): the same without
charts (a sweep's table and verdicts included), for a pull-request comment.

As in kubectl, -o names the format; the file goes in --output-file, whose
extension picks the format when -o is not given. An existing file is
replaced only with --force; a device or FIFO (/dev/null, /dev/stdout) is
written into, never replaced. (-o FILE, the spelling before 0.2, still works
and says it is deprecated.)`

const reportExamples = `  stormbench report results/quick-ab.json --output-file report.html
  stormbench report results/quick-ab.json --output-file report.md --force
  stormbench report results/quick-ab.json > comment.md
  stormbench report results/quick-ab.json -o html > report.html`

func newReportCmd(env *cmdEnv) *cobra.Command {
	o := &reportOptions{}
	cmd := &cobra.Command{
		Use:     "report RESULT.json [--output-file report.html|report.md] [flags]",
		Short:   "Write a self-contained HTML report (charts) or a markdown summary of a result",
		Long:    reportHelp + "\n\n" + outputRules,
		Example: reportExamples,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("report takes exactly one result file (got %d)", len(args))
			}
			if err := o.validate(env); err != nil {
				return err
			}
			return o.run(env, args[0])
		},
	}
	o.addFlags(cmd.Flags())
	completeValues(cmd, "output", "html", "markdown")
	_ = cmd.RegisterFlagCompletionFunc("baseline-variant", completeVariants(func(args []string) []string { return args }))
	return cmd
}

// reportOptions are the flags of report.
type reportOptions struct {
	out, format, baseline string
	force                 bool
}

func (o *reportOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringVarP(&o.format, "output", "o", "", "Output format: html or markdown (default: from --output-file's extension, else markdown)")
	fs.StringVar(&o.format, "format", "", "Same as --output")
	fs.StringVar(&o.out, "output-file", "", "Write the report here instead of stdout (.html/.htm: HTML, .md/.markdown: markdown)")
	fs.BoolVar(&o.force, "force", false, "Replace an existing --output-file")
	fs.StringVar(&o.baseline, "baseline-variant", "", "Variant the others are compared against (default: the first)")
}

// validate settles the format (from -o, or --output-file's extension) and
// checks the output can be written, before any work.
func (o *reportOptions) validate(env *cmdEnv) error {
	// -o FILE, the spelling before -o named a format.
	if o.format != "" && o.out == "" && isReportPath(o.format) {
		fmt.Fprintf(env.stderr, "stormbench: report -o FILE is deprecated: use --output-file %s (-o names a format: html or markdown)\n", o.format)
		o.out, o.format = o.format, ""
	}
	if o.format == "" {
		switch ext := strings.ToLower(filepath.Ext(o.out)); {
		case ext == ".html" || ext == ".htm":
			o.format = report.FormatHTML
		// A device, FIFO or stdout has no extension: markdown, as on stdout.
		case ext == ".md" || ext == ".markdown" || ext == "" && (o.out == "" || writesInto(o.out)):
			o.format = report.FormatMarkdown
		default:
			return usagef("cannot tell the format of %q: name it .html or .md, or give -o html|markdown", o.out)
		}
	}
	if o.format == "md" {
		o.format = report.FormatMarkdown
	}
	if o.format != report.FormatHTML && o.format != report.FormatMarkdown {
		return usagef("unknown report format %q: html or markdown", o.format)
	}
	// A path it cannot write, or a file --force does not allow it to
	// replace, is bad input, found before any work.
	if err := checkWritable(o.out, o.force); err != nil {
		return usagef("--output-file: %v", err)
	}
	return nil
}

// run builds the report of the result at path and writes it.
func (o *reportOptions) run(env *cmdEnv, path string) error {
	in, err := readResult("report", path)
	if err != nil {
		return err
	}
	rep, err := report.Build(in, report.Options{Baseline: o.baseline, Charts: o.format == report.FormatHTML})
	if err != nil {
		return usageError{err}
	}
	write := report.WriteMarkdown
	if o.format == report.FormatHTML {
		write = report.WriteHTML
	}
	var buf bytes.Buffer
	if err := write(&buf, rep); err != nil {
		return err
	}
	out := cmp.Or(o.out, "-")
	// A regular file is written whole or not at all, so that a CI artifact
	// is never half a page; a device or FIFO is written into.
	if err := writeOutput(env, out, o.force, func(w io.Writer) error {
		_, err := w.Write(buf.Bytes())
		return err
	}); err != nil {
		return fmt.Errorf("writing report: %w", err)
	}
	if !toStdout(out) {
		fmt.Fprintf(env.stdout, "wrote %s report %s\n", o.format, out)
	}
	return nil
}

// isReportPath says an -o value is a file, not a format: it has an
// extension or a directory.
func isReportPath(v string) bool {
	switch strings.ToLower(v) {
	case report.FormatHTML, report.FormatMarkdown, "md":
		return false
	}
	return strings.ContainsAny(v, "./")
}
