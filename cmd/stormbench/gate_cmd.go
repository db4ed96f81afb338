package main

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/stormbench/stormbench/bench/compare"
	"github.com/stormbench/stormbench/bench/gate"
	"github.com/stormbench/stormbench/bench/outfile"
	"github.com/stormbench/stormbench/profiles"
)

const gateHelp = `Check a result against CI thresholds, per variant:
  - the run completed, with the repetitions its profile asked for, and no
    measurement failed;
  - absolute SLOs on the worst repetition: mutating API p99 <= 1s and LIST
    p99 <= 30s (Kubernetes API call latency SLOs, storm window, server side),
    service-outage seconds <= 0, and node recovery p99 <= --max-recovery-p99
    when set;
  - with --baseline: every variant is in both results (a variant on one side
    only fails), and the relative regression of each key metric's median
    against the baseline's same variant (--max-regression). With enough
    repetitions on both sides, a change the Mann-Whitney U test calls
    insignificant passes.

Thresholds: the built-in defaults, then the gates section of a profile you
name (--profile NAME|FILE, or --thresholds-from-baseline for the profile the
baseline recorded), then the flags, threshold by threshold. They are never
taken from the result being judged, so a change cannot loosen its own gate;
the output lists every threshold and where it came from. A profile's gates
section and the flags read values the same way: a regression is a percentage
written with % ("10%"; a bare number is refused), a latency SLO of 0 turns
the gate off and a negative one is refused, a negative --max-outage-seconds
turns that gate off, NaN and Inf are refused. Metric IDs are listed by
'stormbench compare --list-metrics'.

Exit codes: 0 every gate passed, 1 a gate failed (a variant on one side only
or repetitions missing included), 2 bad usage or input (an unreadable or
invalid result file, an unknown metric, a bad threshold).`

const gateExamples = `  stormbench gate --baseline results/baselines/ci.json --current results/ci.json --max-regression 10%
  stormbench gate --baseline base.json --current cur.json --thresholds-from-baseline
  stormbench gate --baseline base.json --current cur.json --profile ci \
      --max-regression apiserver.requests=5% --junit gate.xml --perfdash perfdash/`

// regressionFlag collects --max-regression values: "10%" for every key
// metric, "METRIC=10%" for one, read by profiles.ParseRegression as a
// profile's gates.maxRegression is.
type regressionFlag struct {
	values map[string]float64
	raw    []string
}

func (f *regressionFlag) String() string { return strings.Join(f.raw, ",") }
func (f *regressionFlag) Type() string   { return "[METRIC=]PERCENT" }

func (f *regressionFlag) Set(s string) error {
	key, pct := gate.AllMetrics, s
	if k, v, ok := strings.Cut(s, "="); ok {
		key, pct = strings.TrimSpace(k), v
		if err := profiles.CheckGateMetric(key); err != nil {
			return err
		}
	}
	v, err := profiles.ParseRegression(pct)
	if err != nil {
		return err
	}
	if f.values == nil {
		f.values = map[string]float64{}
	}
	f.values[key] = v
	f.raw = append(f.raw, s)
	return nil
}

// finiteFloat is a float flag that refuses NaN and Inf, which would make
// any comparison pass.
type finiteFloat float64

func (f *finiteFloat) String() string { return strconv.FormatFloat(float64(*f), 'g', -1, 64) }
func (f *finiteFloat) Type() string   { return "float" }
func (f *finiteFloat) Set(s string) error {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		if len(s) > 60 {
			s = s[:60] + "…"
		}
		return fmt.Errorf("%q: must be a finite number", s)
	}
	*f = finiteFloat(v)
	return nil
}

// gateOptions are the gate command's flags.
type gateOptions struct {
	basePath, curPath, profile, output, junit, perfdash string
	mutating, list, recovery                            time.Duration
	outage, alpha                                       float64
	variants                                            []string
	reg                                                 regressionFlag
	allowMismatch, fromBaseline, allowHostBound, force  bool
}

// newGateOptions returns the gate command's defaults: the built-in SLOs,
// no outage, alpha 0.05, text output.
func newGateOptions() *gateOptions {
	def := gate.DefaultOptions()
	return &gateOptions{mutating: def.MutatingP99, list: def.ListP99, outage: *def.MaxOutageSeconds, alpha: 0.05, output: "text"}
}

func (o *gateOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.curPath, "current", "", "Result file to check (required)")
	fs.StringVar(&o.basePath, "baseline", "", "Baseline result file: every variant must be in both, and relative regressions are checked against it (needs a regression threshold)")
	fs.StringVar(&o.profile, "profile", "", "Read thresholds from this profile's gates section: a built-in name or a YAML file")
	fs.BoolVar(&o.fromBaseline, "thresholds-from-baseline", false, "Read thresholds from the gates section of the profile the --baseline result recorded (not with --profile)")
	fs.Var(&o.reg, "max-regression", "Allowed increase of a median over the baseline's: \"10%\" for every key metric, or \"METRIC=10%\" for one (repeatable; a metric's own value wins)")
	fs.DurationVar(&o.mutating, "max-mutating-p99", o.mutating, "SLO on the storm-window p99 of mutating API calls; 0 disables, negative is refused")
	fs.DurationVar(&o.list, "max-list-p99", o.list, "SLO on the storm-window p99 of LIST calls; 0 disables, negative is refused")
	fs.Var((*finiteFloat)(&o.outage), "max-outage-seconds", "Allowed service-outage seconds (Services with no ready endpoint); default 0, any outage fails; negative disables")
	fs.DurationVar(&o.recovery, "max-recovery-p99", 0, "SLO on node recovery p99 (restart to Ready); 0 disables, negative is refused")
	fs.StringSliceVar(&o.variants, "variant", nil, "Check only these variants of the current result (repeatable or comma-separated; default all)")
	fs.Var((*finiteFloat)(&o.alpha), "alpha", "Significance level below which a regression between samples large enough to tell counts")
	fs.StringVarP(&o.output, "output", "o", o.output, "Output format: text, json or yaml")
	fs.StringVar(&o.junit, "junit", "", "Also write JUnit XML here, one test case per gate (- or /dev/stdout: stdout; an existing file needs --force)")
	fs.BoolVar(&o.force, "force", false, "Replace an existing --junit file")
	fs.BoolVar(&o.allowMismatch, "allow-mismatch", false, "Gate against a baseline of another profile, storm kind, fleet size or Kubernetes version")
	fs.BoolVar(&o.allowHostBound, "allow-host-bound", false, "Pass a current result whose storms were host-bound (the host at least 90% busy for more than 10% of a storm window); without it such a result fails")
	fs.StringVar(&o.perfdash, "perfdash", "", "Also write the current result as clusterloader2 PerfData JSON files into this directory, for perf-dash")
}

// validate checks the flags before any file is read.
func (o *gateOptions) validate(fs *pflag.FlagSet) error {
	if fs.NArg() > 0 {
		return usagef("gate takes no arguments (got %q); use --current and --baseline", fs.Args())
	}
	if o.output != "text" && o.output != "json" && o.output != "yaml" {
		return usagef("unknown output format %q (-o): text, json or yaml", o.output)
	}
	// The exports are written after the verdict; a path that cannot take
	// them is bad input, found before any work.
	if err := checkWritable(o.junit, o.force); err != nil {
		return usagef("--junit: %v", err)
	}
	if toStdout(o.junit) && o.output != "text" {
		return usagef("--junit %s and -o %s would write two documents to stdout: write the JUnit XML to a file", o.junit, o.output)
	}
	if o.perfdash != "" {
		if err := outfile.CheckDir(o.perfdash); err != nil {
			return usagef("--perfdash: %v", err)
		}
	}
	if o.curPath == "" {
		return usagef("--current is required")
	}
	return nil
}

// request is what the flags ask of the gate: only the thresholds given
// on the command line count as flags (the rest keep the layers below).
func (o *gateOptions) request(fs *pflag.FlagSet) (gate.Request, error) {
	r := gate.Request{FromBaseline: o.fromBaseline, Baseline: o.basePath, Alpha: o.alpha, Variants: o.variants}
	if fs.Changed("max-regression") {
		r.Flags.MaxRegression = o.reg.values
	}
	if fs.Changed("max-mutating-p99") {
		r.Flags.MutatingP99 = &o.mutating
	}
	if fs.Changed("max-list-p99") {
		r.Flags.ListP99 = &o.list
	}
	if fs.Changed("max-outage-seconds") {
		r.Flags.MaxOutageSeconds = &o.outage
	}
	if fs.Changed("max-recovery-p99") {
		r.Flags.RecoveryP99 = &o.recovery
	}
	if o.profile != "" {
		// Checked before the profile is loaded: a contradiction costs
		// nothing.
		r.Profile = &gate.ThresholdProfile{Source: "profile " + o.profile}
		if err := r.Check(); err != nil {
			return r, usageError{err}
		}
		p, err := profiles.Load(o.profile)
		if err != nil {
			if profiles.IsValidation(err) {
				return r, err
			}
			return r, usageError{err}
		}
		r.Profile = &gate.ThresholdProfile{Source: "profile " + p.Metadata.Name, Gates: p.Gates, Repetitions: p.Repetitions.Count}
	}
	if err := r.Check(); err != nil {
		return r, usageError{err}
	}
	return r, nil
}

func newGateCmd(env *cmdEnv) *cobra.Command {
	o := newGateOptions()
	cmd := &cobra.Command{
		Use:     "gate --current RESULT.json [--baseline BASE.json] [flags]",
		Short:   "Check a result against SLOs and a baseline for CI: exit 1 when a gate fails",
		Long:    gateHelp,
		Example: gateExamples,
		RunE: func(cmd *cobra.Command, args []string) error {
			fs := cmd.Flags()
			if err := o.validate(fs); err != nil {
				return err
			}
			req, err := o.request(fs)
			if err != nil {
				return err
			}
			return o.run(env, req)
		},
	}
	o.addFlags(cmd.Flags())
	_ = cmd.RegisterFlagCompletionFunc("variant", completeVariants(func([]string) []string { return []string{o.curPath} }))
	return cmd
}

// run reads the results, judges the current one and writes the verdict
// and the exports.
func (o *gateOptions) run(env *cmdEnv, req gate.Request) error {
	// The JUnit output is opened before any work (a FIFO nothing reads is
	// refused now, not after the gate ran) and written whatever the
	// verdict: a failed gate is exactly when CI wants the file.
	var junit *outfile.File
	if o.junit != "" {
		var err error
		if junit, err = outfile.Create(o.junit, outfile.Options{Force: o.force, Stdout: env.stdout, NoWait: true}); err != nil {
			return usagef("--junit: %v", err)
		}
		defer junit.Abort()
	}
	rep, cur, err := o.evaluate(env, req)
	if err != nil {
		return err
	}
	// With the JUnit XML on stdout, the text verdict goes to stderr: one
	// document per stream.
	text := env.stdout
	if toStdout(o.junit) {
		text = env.stderr
	}
	if err := printAs(env.stdout, o.output, rep, func() error { return gate.WriteText(text, rep) }); err != nil {
		return err
	}
	if junit != nil {
		if err := gate.WriteJUnit(junit, rep); err != nil {
			return fmt.Errorf("writing JUnit XML: %w", err)
		}
		if err := junit.Close(); err != nil {
			return fmt.Errorf("writing JUnit XML: %w", err)
		}
	}
	if o.perfdash != "" {
		files, err := gate.BuildPerfData(cur.Result)
		if err != nil {
			return err
		}
		if _, err := gate.WritePerfData(o.perfdash, files); err != nil {
			return err
		}
	}
	if !rep.OK() {
		return gateError{errors.New(gate.FailureSummary(rep))}
	}
	return nil
}

// evaluate reads the results and judges the current one.
func (o *gateOptions) evaluate(env *cmdEnv, req gate.Request) (*gate.Report, compare.Input, error) {
	var base compare.Input
	var err error
	if o.basePath != "" {
		if base, err = readResult("--baseline", o.basePath); err != nil {
			return nil, base, err
		}
	}
	opts, err := req.Resolve(base)
	if err != nil {
		return nil, base, usageError{err}
	}
	cur, err := readResult("--current", o.curPath)
	if err != nil {
		return nil, cur, err
	}
	if o.basePath != "" {
		if err := checkComparable(env, []compare.Input{base, cur}, o.allowMismatch); err != nil {
			return nil, cur, err
		}
	}
	rep, err := gate.Evaluate(base, cur, opts)
	if err != nil {
		return nil, cur, usageError{err}
	}
	gate.CheckHostBound(rep, cur, o.allowHostBound)
	return rep, cur, nil
}
