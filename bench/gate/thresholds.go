package gate

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stormbench/stormbench/bench/compare"
	"github.com/stormbench/stormbench/bench/result"
	"github.com/stormbench/stormbench/profiles"
)

// SourceDefault is the Source of a built-in default threshold.
const SourceDefault = "default"

// ThresholdSource says where one threshold the gate applies came from.
type ThresholdSource struct {
	// Threshold names it: "mutatingP99", "listP99", "maxOutageSeconds",
	// "recoveryP99" or "maxRegression[METRIC]" (METRIC "*" for every key
	// metric without its own).
	Threshold string `json:"threshold"`
	// Value is the threshold for people: "1s", "off", "+10.0%".
	Value string `json:"value"`
	// Source is SourceDefault, the ThresholdProfile's Source, or the flag
	// ("--max-regression").
	Source string `json:"source"`
}

// ThresholdProfile is a gates section the user chose explicitly, and where
// it came from ("profile quick", "the profile recorded in base.json").
type ThresholdProfile struct {
	// Source names the section for people.
	Source string
	// Gates is the section; nil sets nothing.
	Gates *profiles.Gates
	// Repetitions is the runs per variant the profile asks for; the gate
	// requires as many of both results (0: none beyond one).
	Repetitions int
}

// FlagThresholds are the thresholds given on the command line; a nil field
// was not given.
type FlagThresholds struct {
	// MaxRegression maps a metric ID (or AllMetrics) to an allowed relative
	// increase; nil or empty gives none.
	MaxRegression map[string]float64
	// MutatingP99, ListP99 and RecoveryP99 are latency SLOs; 0 turns one
	// off.
	MutatingP99, ListP99, RecoveryP99 *time.Duration
	// MaxOutageSeconds is the allowed outage; negative turns it off.
	MaxOutageSeconds *float64
}

// ResolveThresholds is the gate's threshold policy: the built-in defaults
// (DefaultOptions), then the gates section of an explicitly chosen profile
// (nil for none), then the flags, each overriding the one before threshold
// by threshold. A regression threshold is overridden per metric: a
// metric's own threshold from any source wins over AllMetrics. Nothing is
// taken from the result being judged. The Options it returns carry, in
// Sources, where every threshold came from. Thresholds are checked with
// the one parser of profiles and flags (profiles.ParseRegression,
// CheckSLO, CheckMaxOutageSeconds, CheckGateMetric).
func ResolveThresholds(profile *ThresholdProfile, flags FlagThresholds) (Options, error) {
	o := DefaultOptions()
	src := map[string]string{
		thMutating: SourceDefault, thList: SourceDefault, thOutage: SourceDefault, thRecovery: SourceDefault,
	}
	errs := applyProfileThresholds(&o, src, profile)
	errs = append(errs, applyFlagThresholds(&o, src, flags)...)
	if err := errors.Join(errs...); err != nil {
		return Options{}, err
	}
	o.Sources = sources(o, src)
	if profile != nil {
		o.Repetitions = profile.Repetitions
	}
	return o, nil
}

// applyProfileThresholds sets the thresholds the profile's gates section
// gives, each checked, recording the profile as their source in src.
func applyProfileThresholds(o *Options, src map[string]string, profile *ThresholdProfile) []error {
	if profile == nil || profile.Gates == nil {
		return nil
	}
	var errs []error
	g := profile.Gates
	for _, k := range slices.Sorted(maps.Keys(g.MaxRegression)) {
		f, err := profiles.ParseRegression(g.MaxRegression[k])
		if err = cmp.Or(profiles.CheckGateMetric(k), err); err != nil {
			errs = append(errs, fmt.Errorf("%s: gates.maxRegression[%s]: %w", profile.Source, k, err))
			continue
		}
		setRegression(o, src, k, f, profile.Source)
	}
	return append(errs, applySLOs(o, src, durationOf(g.MutatingP99), durationOf(g.ListP99), durationOf(g.RecoveryP99), g.MaxOutageSeconds,
		func(string) string { return profile.Source },
		func(th string, err error) error { return fmt.Errorf("%s: gates.%s: %w", profile.Source, th, err) })...)
}

// applyFlagThresholds sets the thresholds the flags give, each checked,
// over the profile's, recording the flag as their source in src.
func applyFlagThresholds(o *Options, src map[string]string, flags FlagThresholds) []error {
	var errs []error
	if _, ok := flags.MaxRegression[AllMetrics]; ok {
		// --max-regression X% is every metric's threshold: it overrides
		// the profile's, metric by metric, as the profile's own "*" would
		// not; a metric's own flag still wins over it.
		clear(o.MaxRegression)
		maps.DeleteFunc(src, func(th, _ string) bool { return strings.HasPrefix(th, thRegression+"[") })
	}
	for _, k := range slices.Sorted(maps.Keys(flags.MaxRegression)) {
		if err := profiles.CheckGateMetric(k); err != nil {
			errs = append(errs, fmt.Errorf("--max-regression: %w", err))
			continue
		}
		f := flags.MaxRegression[k]
		if f < 0 || math.IsNaN(f) || math.IsInf(f, 0) {
			errs = append(errs, fmt.Errorf("--max-regression %s: must be a non-negative percentage", k))
			continue
		}
		setRegression(o, src, k, f, "--max-regression")
	}
	flag := func(th string) string { return flagNames[th] }
	return append(errs, applySLOs(o, src, flags.MutatingP99, flags.ListP99, flags.RecoveryP99, flags.MaxOutageSeconds,
		flag, func(th string, err error) error { return fmt.Errorf("%s %w", flag(th), err) })...)
}

// flagNames are the flags of the SLO thresholds.
var flagNames = map[string]string{
	thMutating: "--max-mutating-p99", thList: "--max-list-p99", thRecovery: "--max-recovery-p99", thOutage: "--max-outage-seconds",
}

// applySLOs sets the SLO thresholds one layer gives (nil: not given), each
// checked, recording from(threshold) as their source in src; wrap says in
// an error which threshold of the layer it is.
func applySLOs(o *Options, src map[string]string, mutating, list, recovery *time.Duration, outage *float64,
	from func(th string) string, wrap func(th string, err error) error) []error {
	var errs []error
	for _, d := range []struct {
		th     string
		v, dst *time.Duration
	}{{thMutating, mutating, &o.MutatingP99}, {thList, list, &o.ListP99}, {thRecovery, recovery, &o.RecoveryP99}} {
		if d.v == nil {
			continue
		}
		if err := profiles.CheckSLO(*d.v); err != nil {
			errs = append(errs, wrap(d.th, err))
			continue
		}
		*d.dst, src[d.th] = *d.v, from(d.th)
	}
	if outage != nil {
		if err := profiles.CheckMaxOutageSeconds(*outage); err != nil {
			errs = append(errs, wrap(thOutage, err))
		} else {
			setOutage(o, *outage)
			src[thOutage] = from(thOutage)
		}
	}
	return errs
}

// Threshold names of ThresholdSource, the profile's field names.
const (
	thMutating   = "mutatingP99"
	thList       = "listP99"
	thOutage     = "maxOutageSeconds"
	thRecovery   = "recoveryP99"
	thRegression = "maxRegression"
)

func durationOf(d *metav1.Duration) *time.Duration {
	if d == nil {
		return nil
	}
	return &d.Duration
}

// setRegression sets metric k's threshold.
func setRegression(o *Options, src map[string]string, k string, f float64, from string) {
	if o.MaxRegression == nil {
		o.MaxRegression = map[string]float64{}
	}
	o.MaxRegression[k] = f
	src[thRegression+"["+k+"]"] = from
}

func setOutage(o *Options, v float64) {
	if v < 0 {
		o.MaxOutageSeconds = nil
		return
	}
	o.MaxOutageSeconds = &v
}

// sources lists every threshold of o with its source, SLOs first, then
// regressions with AllMetrics first.
func sources(o Options, src map[string]string) []ThresholdSource {
	dur := func(d time.Duration) string {
		if d == 0 {
			return "off"
		}
		return "≤ " + d.String()
	}
	outage := "off"
	if o.MaxOutageSeconds != nil {
		outage = "≤ " + compare.FormatValue(*o.MaxOutageSeconds, result.UnitSeconds)
	}
	out := []ThresholdSource{
		{thMutating, dur(o.MutatingP99), src[thMutating]},
		{thList, dur(o.ListP99), src[thList]},
		{thOutage, outage, src[thOutage]},
		{thRecovery, dur(o.RecoveryP99), src[thRecovery]},
	}
	// AllMetrics ("*") sorts before every metric ID, which starts with a
	// letter (profiles.CheckGateMetric).
	for _, k := range slices.Sorted(maps.Keys(o.MaxRegression)) {
		name := thRegression + "[" + k + "]"
		out = append(out, ThresholdSource{name, "≤ " + compare.FormatPercent(o.MaxRegression[k]), src[name]})
	}
	return out
}
