package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/stormbench/stormbench/bench/compare"
	"github.com/stormbench/stormbench/bench/report"
	"github.com/stormbench/stormbench/bench/result"
)

const compareHelp = `Compare result files side by side: one row per key metric, one column per
group of variant runs, with each group's median (± its 95% confidence interval
once there are enough repetitions) and its change from the baseline group.

Changes are tested with the Mann-Whitney U test (golang.org/x/perf/benchmath,
as benchstat does), and the p-values of the whole table are adjusted for
their number by Benjamini-Hochberg (adj=): "~" means no significant
difference at --alpha after the adjustment, so that a table of 30 metrics
does not show differences between identical variants by chance. A
note says when there are too few repetitions to tell (the change between the
medians is then shown with "(n=1)" and that note). Every key metric is a
cost: lower is better.

Groups: by default every repetition of a variant name forms one group, across
all files, so one A/B result file compares its variants (legacy vs preserve)
and several files of the same profile pool their repetitions. When that gives
a single group from several files (two runs of one profile, as for two
commits), each file becomes a group instead. --group-by overrides.`

const compareExamples = `  stormbench compare results/quick-ab.json
  stormbench compare --baseline-variant preserve -o markdown results/quick-ab.json
  stormbench compare old.json new.json
  stormbench compare --group-by file-variant old.json new.json`

func newCompareCmd(env *cmdEnv) *cobra.Command {
	o := &compareOptions{format: report.FormatText, groupBy: "auto", alpha: 0.05, confidence: 0.95}
	cmd := &cobra.Command{
		Use:     "compare RESULT.json [RESULT.json ...] [flags]",
		Short:   "Compare result files or the variants of one: medians, deltas, significance",
		Long:    compareHelp,
		Example: compareExamples,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validateFormat(); err != nil {
				return err
			}
			if o.listMetrics {
				return printMetrics(env, o.format)
			}
			if len(args) == 0 {
				return usagef("compare needs at least one result file")
			}
			opts, err := o.options()
			if err != nil {
				return err
			}
			return o.run(env, args, opts)
		},
	}
	o.addFlags(cmd.Flags())
	completeValues(cmd, "output", "text", "markdown", "html", "json", "yaml")
	completeValues(cmd, "group-by", "auto", "variant", "file", "file-variant")
	_ = cmd.RegisterFlagCompletionFunc("baseline-variant", completeVariants(func(args []string) []string { return args }))
	return cmd
}

// compareOptions are the flags of compare.
type compareOptions struct {
	format, baseline, groupBy                string
	metrics                                  []string
	alpha, confidence                        float64
	listMetrics, allowMismatch, allowBudgets bool
}

func (o *compareOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringVarP(&o.format, "output", "o", o.format, "Output format: text, markdown, html (a self-contained page), json or yaml")
	fs.StringVar(&o.format, "format", o.format, "Same as --output")
	fs.StringVar(&o.baseline, "baseline-variant", "", "Group to compare the others against (a variant name, or a file/group name with --group-by file or file-variant); default the first")
	fs.StringVar(&o.groupBy, "group-by", o.groupBy, "How runs form groups: auto, variant, file or file-variant (FILE/VARIANT)")
	fs.StringSliceVar(&o.metrics, "metrics", nil, "Comma-separated metric IDs to show, in this order (default: every key metric; see --list-metrics)")
	fs.Float64Var(&o.alpha, "alpha", o.alpha, "Significance level of the Mann-Whitney U test, applied to the p-values adjusted over the table (Benjamini-Hochberg)")
	fs.Float64Var(&o.confidence, "confidence", o.confidence, "Confidence level of the medians' intervals")
	fs.BoolVar(&o.listMetrics, "list-metrics", false, "List the key metrics (ID, unit, label) and exit")
	fs.BoolVar(&o.allowMismatch, "allow-mismatch", false, "Compare results of different profiles, storm kinds, fleet sizes or Kubernetes versions")
	fs.BoolVar(&o.allowBudgets, "allow-different-budgets", false, "Compare results whose control planes ran under different CPU budgets (controlPlane.cpus)")
}

// validateFormat checks -o and takes md for markdown.
func (o *compareOptions) validateFormat() error {
	switch o.format {
	case report.FormatText, report.FormatMarkdown, report.FormatHTML, report.FormatJSON, "yaml":
	case "md":
		o.format = report.FormatMarkdown
	default:
		return usagef("unknown output format %q (-o): one of text, markdown, html, json, yaml", o.format)
	}
	return nil
}

// options checks the statistics flags and builds the comparison's options.
func (o *compareOptions) options() (compare.Options, error) {
	// Written so that NaN fails too: every comparison with NaN is false.
	if !(o.alpha > 0 && o.alpha < 1) {
		return compare.Options{}, usagef("--alpha %v: must be a number between 0 and 1, both excluded (default 0.05)", o.alpha)
	}
	if !(o.confidence > 0 && o.confidence < 1) {
		return compare.Options{}, usagef("--confidence %v: must be a number between 0 and 1, both excluded (default 0.95)", o.confidence)
	}
	by, err := compare.ParseGroupBy(o.groupBy)
	if err != nil {
		return compare.Options{}, usagef("--group-by: %v", err)
	}
	opts := compare.Options{GroupBy: by, Baseline: o.baseline, Alpha: o.alpha, Confidence: o.confidence}
	if len(o.metrics) > 0 {
		ms, err := compare.LookupMetrics(o.metrics...)
		if err != nil {
			return compare.Options{}, usagef("--metrics: %v", err)
		}
		opts.Metrics = ms
	}
	return opts, nil
}

// run reads the results, checks they compare, and writes the comparison.
func (o *compareOptions) run(env *cmdEnv, paths []string, opts compare.Options) error {
	inputs, err := readResults(paths)
	if err != nil {
		return err
	}
	if err := checkComparable(env, inputs, o.allowMismatch); err != nil {
		return err
	}
	if err := checkBudgets(env, inputs, o.allowBudgets); err != nil {
		return err
	}
	c, err := compare.Compare(inputs, opts)
	if err != nil {
		return usageError{err}
	}
	return printAs(env.stdout, o.format, c, func() error { return report.WriteComparison(env.stdout, c, o.format) })
}

// printMetrics lists the key metrics: a table, or with -o json|yaml their
// id, label and unit.
func printMetrics(env *cmdEnv, format string) error {
	switch format {
	case report.FormatJSON, "yaml":
		return printStructured(env.stdout, format, compare.KeyMetrics())
	case report.FormatText:
	default:
		return usagef("--list-metrics prints text, json or yaml, not %s", format)
	}
	for _, m := range compare.KeyMetrics() {
		fmt.Fprintf(env.stdout, "%-42s %-16s %s\n", m.ID, m.Unit, m.Label)
	}
	return nil
}

// readResults reads and validates result files. A file that cannot be read
// or is not a valid result document is bad input (exit 2). Each input is
// named after its file; files with the same base name keep their path.
func readResults(paths []string) ([]compare.Input, error) {
	base := map[string]int{}
	for _, p := range paths {
		base[filepath.Base(p)]++
	}
	var out []compare.Input
	seen := map[string]bool{}
	for _, p := range paths {
		name := filepath.Base(p)
		if base[name] > 1 {
			name = p
		}
		if seen[name] {
			return nil, usagef("result %s given twice", p)
		}
		seen[name] = true
		r, err := result.ReadFile(p)
		if err != nil {
			return nil, usageError{err}
		}
		out = append(out, compare.Input{Name: name, Result: r})
	}
	return out, nil
}

// readAll reads every file at paths with read; one that cannot be read is
// bad input (exit 2).
func readAll[T any](paths []string, read func(string) (T, error)) ([]T, error) {
	out := make([]T, len(paths))
	for i, p := range paths {
		var err error
		if out[i], err = read(p); err != nil {
			return nil, usageError{err}
		}
	}
	return out, nil
}

// readResult reads one result file for a flag; see readResults.
func readResult(flag, path string) (compare.Input, error) {
	if strings.TrimSpace(path) == "" {
		return compare.Input{}, usagef("%s needs a result file", flag)
	}
	in, err := readResults([]string{path})
	if err != nil {
		return compare.Input{}, err
	}
	return in[0], nil
}

// checkComparable refuses results whose setups differ (exit 2), or with
// allow warns on stderr and goes on. A result whose recorded profile does
// not decode is refused whatever allow says.
func checkComparable(env *cmdEnv, inputs []compare.Input, allow bool) error {
	// Runs on different machines are compared, with a warning: the
	// embedded control plane shares stormbench's machine.
	for _, d := range compare.MachineMismatches(inputs) {
		fmt.Fprintf(env.stderr, "warning: %s\n", d)
	}
	m, err := compare.Mismatches(inputs)
	if err != nil {
		return usageError{err}
	}
	return refuseOrWarn(env, m, allow, "not comparable: ", "the results are not comparable (pass --allow-mismatch to compare them anyway)")
}

// checkBudgets refuses results whose control planes ran under different CPU
// budgets (exit 2), or with allow warns on stderr and goes on.
func checkBudgets(env *cmdEnv, inputs []compare.Input, allow bool) error {
	return refuseOrWarn(env, compare.BudgetMismatches(inputs), allow, "",
		"the results ran on control planes of different CPU budgets (pass --allow-different-budgets to compare them anyway)")
}

// refuseOrWarn refuses the differences m with refusal and a line each (exit
// 2), or with allow warns of each on stderr, after prefix, and goes on.
func refuseOrWarn(env *cmdEnv, m []string, allow bool, prefix, refusal string) error {
	if len(m) == 0 {
		return nil
	}
	if allow {
		for _, d := range m {
			fmt.Fprintf(env.stderr, "warning: %s%s\n", prefix, d)
		}
		return nil
	}
	return usagef("%s:\n  %s", refusal, strings.Join(m, "\n  "))
}
