package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/stormbench/stormbench/bench/compare"
	"github.com/stormbench/stormbench/bench/gate"
	"github.com/stormbench/stormbench/profiles"
)

const gateHelp = `Check a result against CI thresholds, per variant:
  - the run completed and no measurement failed;
  - absolute SLOs on the worst repetition: mutating API p99 <= 1s and LIST
    p99 <= 30s (Kubernetes API call latency SLOs, storm window, server side),
    service-outage seconds <= 0, and node recovery p99 <= --max-recovery-p99
    when set;
  - relative regressions of each key metric's median against the baseline
    result's same variant (--max-regression). With enough repetitions on both
    sides, a change the Mann-Whitney U test calls insignificant passes.

Thresholds: built-in defaults, then the profile's gates section (--profile),
then flags given on the command line. Metric IDs are listed by
'stormbench compare --list-metrics'.

Exit codes: 0 every gate passed, 1 a gate failed, 2 bad usage or input (an
unreadable or invalid result file, an unknown metric, a variant missing from
the baseline).

Examples:
  stormbench gate --baseline results/baselines/ci.json --current results/ci.json --max-regression 10%
  stormbench gate --baseline base.json --current cur.json --profile ci \
      --max-regression apiserver.requests=5% --junit gate.xml --perfdash perfdash/
`

// regressionFlag collects --max-regression values: "10%" for every key
// metric, "METRIC=10%" for one.
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
		if _, err := compare.LookupMetrics(key); err != nil {
			return err
		}
	}
	// "0.1" would be 0.1 %, "10" 10 %: a bare number is ambiguous, so the
	// unit is required.
	if !strings.HasSuffix(strings.TrimSpace(pct), "%") {
		return fmt.Errorf("%q: give a percentage with %%, such as 10%%", s)
	}
	v, err := gate.ParseRegression(pct)
	if err != nil {
		return fmt.Errorf("%q: %w", s, err)
	}
	if f.values == nil {
		f.values = map[string]float64{}
	}
	f.values[key] = v
	f.raw = append(f.raw, s)
	return nil
}

func runGate(ctx context.Context, env *cmdEnv, args []string) error {
	var basePath, curPath, profile, output, junit, perfdash string
	var mutating, list, recovery time.Duration
	var outage, alpha float64
	var variants []string
	var reg regressionFlag
	var allowMismatch, force bool
	def := gate.DefaultOptions()
	fs := newFlagSet(env, "gate", "gate --current RESULT.json [--baseline BASE.json] [flags]\n\n"+gateHelp)
	fs.StringVar(&curPath, "current", "", "Result file to check (required)")
	fs.StringVar(&basePath, "baseline", "", "Baseline result file for relative regressions (required with --max-regression or a profile's maxRegression)")
	fs.StringVar(&profile, "profile", "", "Read thresholds from this profile's gates section: a built-in name or a YAML file")
	fs.Var(&reg, "max-regression", "Allowed increase of a median over the baseline's: \"10%\" for every key metric, or \"METRIC=10%\" for one (repeatable; a metric's own value wins)")
	fs.DurationVar(&mutating, "max-mutating-p99", def.MutatingP99, "SLO on the storm-window p99 of mutating API calls; 0 disables")
	fs.DurationVar(&list, "max-list-p99", def.ListP99, "SLO on the storm-window p99 of LIST calls; 0 disables")
	fs.Float64Var(&outage, "max-outage-seconds", *def.MaxOutageSeconds, "Allowed service-outage seconds (Services with no ready endpoint); default 0, any outage fails; negative disables")
	fs.DurationVar(&recovery, "max-recovery-p99", 0, "SLO on node recovery p99 (restart to Ready); 0 disables")
	fs.StringSliceVar(&variants, "variant", nil, "Check only these variants of the current result (repeatable or comma-separated; default all)")
	fs.Float64Var(&alpha, "alpha", 0.05, "Significance level below which a regression between samples large enough to tell counts")
	fs.StringVarP(&output, "output", "o", "text", "Output format: text, json or yaml")
	fs.StringVar(&junit, "junit", "", "Also write JUnit XML here, one test case per gate (- or /dev/stdout: stdout; an existing file needs --force)")
	fs.BoolVar(&force, "force", false, "Replace an existing --junit file")
	fs.BoolVar(&allowMismatch, "allow-mismatch", false, "Gate against a baseline of another profile, storm kind, fleet size or Kubernetes version")
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
	for name, d := range map[string]time.Duration{"--max-mutating-p99": mutating, "--max-list-p99": list, "--max-recovery-p99": recovery} {
		if d < 0 {
			return usagef("%s %s: must not be negative", name, d)
		}
	}

	opts := def
	opts.Alpha = alpha
	opts.Variants = variants
	if profile != "" {
		p, err := profiles.Load(profile)
		if err != nil {
			if profiles.IsValidation(err) {
				return err
			}
			return usageError{err}
		}
		if err := opts.ApplyProfile(p.Gates); err != nil {
			return usagef("profile %s: %v", profile, err)
		}
	}
	if fs.Changed("max-regression") {
		if opts.MaxRegression == nil {
			opts.MaxRegression = map[string]float64{}
		}
		for k, v := range reg.values {
			opts.MaxRegression[k] = v
		}
	}
	if fs.Changed("max-mutating-p99") {
		opts.MutatingP99 = mutating
	}
	if fs.Changed("max-list-p99") {
		opts.ListP99 = list
	}
	if fs.Changed("max-outage-seconds") {
		opts.MaxOutageSeconds = &outage
		if outage < 0 {
			opts.MaxOutageSeconds = nil
		}
	}
	if fs.Changed("max-recovery-p99") {
		opts.RecoveryP99 = recovery
	}
	if len(opts.MaxRegression) > 0 && basePath == "" {
		return usagef("relative regression thresholds need --baseline")
	}

	cur, err := readResult("--current", curPath)
	if err != nil {
		return err
	}
	// A baseline is compared against, always: without thresholds given,
	// those of the profile the current run recorded; without any, refuse
	// rather than pass with the baseline ignored.
	if basePath != "" && len(opts.MaxRegression) == 0 {
		var rec profiles.Profile
		if raw := cur.Result.Run.Profile; len(raw) > 0 && json.Unmarshal(raw, &rec) == nil && rec.Gates != nil && len(rec.Gates.MaxRegression) > 0 {
			recorded := def
			if err := recorded.ApplyProfile(rec.Gates); err != nil {
				return usagef("the profile recorded in %s: %v", curPath, err)
			}
			opts.MaxRegression = recorded.MaxRegression
			fmt.Fprintf(env.stderr, "Regression thresholds from the profile %q recorded in %s\n", rec.Metadata.Name, curPath)
		} else {
			return usagef("--baseline %s without regression thresholds would compare nothing: give --max-regression 10%% (or METRIC=10%%), or --profile with gates.maxRegression", basePath)
		}
	}
	var base compare.Input
	if basePath != "" {
		if base, err = readResult("--baseline", basePath); err != nil {
			return err
		}
		if err := checkComparable(env, []compare.Input{base, cur}, allowMismatch); err != nil {
			return err
		}
	}
	rep, err := gate.Evaluate(base, cur, opts)
	if err != nil {
		return usageError{err}
	}
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
