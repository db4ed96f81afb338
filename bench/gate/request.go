package gate

import (
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stormbench/stormbench/bench/compare"
)

// Request is what a gate was asked for, before anything is read: where its
// thresholds come from and what it checks. The gate command fills one from
// its flags; Check refuses a contradictory one, and Resolve turns it into
// Options once the baseline is read.
type Request struct {
	// Profile is the thresholds' profile the user named (--profile); nil
	// for none.
	Profile *ThresholdProfile
	// FromBaseline takes the thresholds' profile from the one the
	// baseline recorded (--thresholds-from-baseline).
	FromBaseline bool
	// Baseline is the baseline result's path (--baseline); "" for none.
	Baseline string
	// Flags are the thresholds given one by one.
	Flags FlagThresholds
	// Alpha is the significance level (--alpha).
	Alpha float64
	// Variants restricts the gate to these variants of the current
	// result; nil for all.
	Variants []string
}

// Check refuses a request whose parts contradict each other, before any
// file is read.
func (r Request) Check() error {
	if r.Alpha <= 0 || r.Alpha >= 1 {
		return fmt.Errorf("--alpha %v: must be between 0 and 1", r.Alpha)
	}
	if r.FromBaseline && r.Profile != nil {
		return errors.New("--profile and --thresholds-from-baseline both name the thresholds' profile: give one")
	}
	if r.FromBaseline && r.Baseline == "" {
		return errors.New("--thresholds-from-baseline needs --baseline")
	}
	return nil
}

// Resolve is the gate's threshold policy applied to a request: the
// thresholds' profile is the one named, or the one the baseline recorded
// (base; the zero Input without a baseline), never one from the result
// being judged; ResolveThresholds layers it between the defaults and the
// flags. A regression threshold without a baseline, or a baseline with no
// regression threshold (it would compare nothing), is refused.
func (r Request) Resolve(base compare.Input) (Options, error) {
	if err := r.Check(); err != nil {
		return Options{}, err
	}
	tp := r.Profile
	if r.FromBaseline {
		var err error
		if tp, err = RecordedThresholds(base); err != nil {
			return Options{}, err
		}
	}
	opts, err := ResolveThresholds(tp, r.Flags)
	if err != nil {
		return Options{}, err
	}
	opts.Alpha, opts.Variants = r.Alpha, r.Variants
	if len(opts.MaxRegression) > 0 && r.Baseline == "" {
		return Options{}, errors.New("relative regression thresholds need --baseline")
	}
	if r.Baseline != "" && len(opts.MaxRegression) == 0 {
		return Options{}, fmt.Errorf("--baseline %s without regression thresholds would compare nothing: give --max-regression 10%% (or METRIC=10%%), --profile with gates.maxRegression, or --thresholds-from-baseline", r.Baseline)
	}
	return opts, nil
}

// RecordedThresholds is the gates section of the profile the baseline
// recorded, for --thresholds-from-baseline: chosen by the user, and taken
// from the reviewed baseline, never from the result being judged.
func RecordedThresholds(base compare.Input) (*ThresholdProfile, error) {
	if base.Result == nil {
		return nil, errors.New("--thresholds-from-baseline needs --baseline")
	}
	if len(base.Result.Run.Profile) == 0 {
		return nil, fmt.Errorf("--thresholds-from-baseline: the baseline %s recorded no profile", base.Name)
	}
	rec, err := compare.RecordedProfile(base)
	if err != nil {
		return nil, fmt.Errorf("--thresholds-from-baseline: %w", err)
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
	return &ThresholdProfile{Source: fmt.Sprintf("profile %s recorded in the baseline %s", name, base.Name), Gates: rec.Gates, Repetitions: rec.Repetitions.Count}, nil
}
