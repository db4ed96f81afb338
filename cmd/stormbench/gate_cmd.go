package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stormbench/stormbench/bench/compare"
	"github.com/stormbench/stormbench/bench/gate"
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
invalid result file, an unknown metric, a bad threshold).

Examples:
  stormbench gate --baseline results/baselines/ci.json --current results/ci.json --max-regression 10%
  stormbench gate --baseline base.json --current cur.json --thresholds-from-baseline
  stormbench gate --baseline base.json --current cur.json --profile ci \
      --max-regression apiserver.requests=5% --junit gate.xml --perfdash perfdash/
`

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
type finiteFloat struct{ v *float64 }

func (f finiteFloat) String() string {
	if f.v == nil {
		return "0"
	}
	return strconv.FormatFloat(*f.v, 'g', -1, 64)
}
func (f finiteFloat) Type() string { return "float" }
func (f finiteFloat) Set(s string) error {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("%q: must be a finite number", truncateArg(s))
	}
	*f.v = v
	return nil
}

// truncateArg shortens a user's value for an error message.
func truncateArg(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

func runGate(ctx context.Context, env *cmdEnv, args []string) error {
	var basePath, curPath, profile, output, junit, perfdash string
	var mutating, list, recovery time.Duration
	var outage, alpha float64
	var variants []string
	var reg regressionFlag
	var allowMismatch, fromBaseline, allowHostBound, force bool
	def := gate.DefaultOptions()
	outage, alpha = *def.MaxOutageSeconds, 0.05
	fs := newFlagSet(env, "gate", "gate --current RESULT.json [--baseline BASE.json] [flags]\n\n"+gateHelp)
	fs.StringVar(&curPath, "current", "", "Result file to check (required)")
	fs.StringVar(&basePath, "baseline", "", "Baseline result file: every variant must be in both, and relative regressions are checked against it (needs a regression threshold)")
	fs.StringVar(&profile, "profile", "", "Read thresholds from this profile's gates section: a built-in name or a YAML file")
	fs.BoolVar(&fromBaseline, "thresholds-from-baseline", false, "Read thresholds from the gates section of the profile the --baseline result recorded (not with --profile)")
	fs.Var(&reg, "max-regression", "Allowed increase of a median over the baseline's: \"10%\" for every key metric, or \"METRIC=10%\" for one (repeatable; a metric's own value wins)")
	fs.DurationVar(&mutating, "max-mutating-p99", def.MutatingP99, "SLO on the storm-window p99 of mutating API calls; 0 disables, negative is refused")
	fs.DurationVar(&list, "max-list-p99", def.ListP99, "SLO on the storm-window p99 of LIST calls; 0 disables, negative is refused")
	fs.Var(finiteFloat{&outage}, "max-outage-seconds", "Allowed service-outage seconds (Services with no ready endpoint); default 0, any outage fails; negative disables")
	fs.DurationVar(&recovery, "max-recovery-p99", 0, "SLO on node recovery p99 (restart to Ready); 0 disables, negative is refused")
	fs.StringSliceVar(&variants, "variant", nil, "Check only these variants of the current result (repeatable or comma-separated; default all)")
	fs.Var(finiteFloat{&alpha}, "alpha", "Significance level below which a regression between samples large enough to tell counts")
	fs.StringVarP(&output, "output", "o", "text", "Output format: text, json or yaml")
	fs.StringVar(&junit, "junit", "", "Also write JUnit XML here, one test case per gate (- or /dev/stdout: stdout; an existing file needs --force)")
	fs.BoolVar(&force, "force", false, "Replace an existing --junit file")
	fs.BoolVar(&allowMismatch, "allow-mismatch", false, "Gate against a baseline of another profile, storm kind, fleet size or Kubernetes version")
	fs.BoolVar(&allowHostBound, "allow-host-bound", false, "Pass a current result whose storms were host-bound (the host at least 90% busy for more than 10% of a storm window); without it such a result fails")
	fs.StringVar(&perfdash, "perfdash", "", "Also write the current result as clusterloader2 PerfData JSON files into this directory, for perf-dash")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("gate takes no arguments (got %q); use --current and --baseline", fs.Args())
	}
	if output != "text" && output != "json" && output != "yaml" {
		return usagef("unknown output format %q (-o): text, json or yaml", output)
	}
	// The exports are written after the verdict; a path that cannot take
	// them is bad input, found before any work.
	if err := checkWritable(junit, force); err != nil {
		return usagef("--junit: %v", err)
	}
	if err := checkWritableDir(perfdash); err != nil {
		return usagef("--perfdash: %v", err)
	}
	if curPath == "" {
		return usagef("--current is required")
	}
	if alpha <= 0 || alpha >= 1 {
		return usagef("--alpha %v: must be between 0 and 1", alpha)
	}
	if fromBaseline && profile != "" {
		return usagef("--profile and --thresholds-from-baseline both name the thresholds' profile: give one")
	}
	if fromBaseline && basePath == "" {
		return usagef("--thresholds-from-baseline needs --baseline")
	}

	var flags gate.FlagThresholds
	if fs.Changed("max-regression") {
		flags.MaxRegression = reg.values
	}
	if fs.Changed("max-mutating-p99") {
		flags.MutatingP99 = &mutating
	}
	if fs.Changed("max-list-p99") {
		flags.ListP99 = &list
	}
	if fs.Changed("max-outage-seconds") {
		flags.MaxOutageSeconds = &outage
	}
	if fs.Changed("max-recovery-p99") {
		flags.RecoveryP99 = &recovery
	}
	var tp *gate.ThresholdProfile
	if profile != "" {
		p, err := profiles.Load(profile)
		if err != nil {
			if profiles.IsValidation(err) {
				return err
			}
			return usageError{err}
		}
		tp = &gate.ThresholdProfile{Source: "profile " + p.Metadata.Name, Gates: p.Gates}
	}
	var base compare.Input
	var err error
	if basePath != "" {
		if base, err = readResult("--baseline", basePath); err != nil {
			return err
		}
	}
	if fromBaseline {
		if tp, err = recordedThresholds(base); err != nil {
			return err
		}
	}
	opts, err := gate.ResolveThresholds(tp, flags)
	if err != nil {
		return usageError{err}
	}
	opts.Alpha = alpha
	opts.Variants = variants
	if len(opts.MaxRegression) > 0 && basePath == "" {
		return usagef("relative regression thresholds need --baseline")
	}
	// A baseline is compared against, always: without regression
	// thresholds, refuse rather than pass with the baseline ignored.
	if basePath != "" && len(opts.MaxRegression) == 0 {
		return usagef("--baseline %s without regression thresholds would compare nothing: give --max-regression 10%% (or METRIC=10%%), --profile with gates.maxRegression, or --thresholds-from-baseline", basePath)
	}

	cur, err := readResult("--current", curPath)
	if err != nil {
		return err
	}
	if basePath != "" {
		if err := checkComparable(env, []compare.Input{base, cur}, allowMismatch); err != nil {
			return err
		}
	}
	rep, err := gate.Evaluate(base, cur, opts)
	if err != nil {
		return usageError{err}
	}
	gate.CheckHostBound(rep, cur, allowHostBound)
	if output == "json" || output == "yaml" {
		err = printStructured(env.stdout, output, rep)
	} else {
		err = gate.WriteText(env.stdout, rep)
	}
	if err != nil {
		return err
	}
	// The exports are written whatever the verdict: a failed gate is
	// exactly when CI wants the JUnit file.
	if junit != "" {
		if err := writeOutput(env, junit, force, func(w io.Writer) error { return gate.WriteJUnit(w, rep) }); err != nil {
			return fmt.Errorf("writing JUnit XML: %w", err)
		}
	}
	if perfdash != "" {
		files, err := gate.BuildPerfData(cur.Result)
		if err != nil {
			return err
		}
		if _, err := gate.WritePerfData(perfdash, files); err != nil {
			return err
		}
	}
	if !rep.OK() {
		return gateError{errors.New(gate.FailureSummary(rep))}
	}
	return nil
}

// recordedThresholds is the gates section of the profile the baseline
// recorded, for --thresholds-from-baseline: chosen by the user, and taken
// from the reviewed baseline, never from the result being judged.
func recordedThresholds(base compare.Input) (*gate.ThresholdProfile, error) {
	raw := base.Result.Run.Profile
	if len(raw) == 0 {
		return nil, usagef("--thresholds-from-baseline: the baseline %s recorded no profile", base.Name)
	}
	var rec profiles.Profile
	if err := json.Unmarshal(raw, &rec); err != nil {
		return nil, usagef("--thresholds-from-baseline: the profile recorded in %s: %v", base.Name, err)
	}
	// Until gates' SLOs became optional fields, every recorded profile
	// with a gates section held "0s" for an SLO it left unset: a recorded
	// 0s keeps the default rather than turning the gate off, which errs
	// on the strict side.
	if g := rec.Gates; g != nil {
		for _, d := range []**metav1.Duration{&g.MutatingP99, &g.ListP99, &g.RecoveryP99} {
			if *d != nil && (*d).Duration == 0 {
				*d = nil
			}
		}
	}
	name := rec.Metadata.Name
	if name == "" {
		name = "(unnamed)"
	}
	return &gate.ThresholdProfile{Source: fmt.Sprintf("profile %s recorded in the baseline %s", name, base.Name), Gates: rec.Gates}, nil
}
