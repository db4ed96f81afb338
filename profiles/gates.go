package profiles

import (
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/stormbench/stormbench/bench/result"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// AllGateMetrics is the gates.maxRegression key (and --max-regression
// value without METRIC=) that applies to every key metric without a
// threshold of its own.
const AllGateMetrics = "*"

// flowMetricID is the shape of a flow's metric ID, "excess.<flow>"
// (excess.kubelet, excess.endpointslice-controller).
var flowMetricID = regexp.MustCompile("^" + regexp.QuoteMeta(result.FlowMetricPrefix) + "[a-z0-9]([a-z0-9-]*[a-z0-9])?$")

// ParseRegression parses an allowed regression, a percentage written with
// %, into a fraction: "10%" is 0.10, "0%" allows no increase. It is the one
// parser of gates.maxRegression and `gate --max-regression`: a bare number
// ("0.1", "10") is refused in both, since "0.1" could mean 10 % or 0.1 %.
func ParseRegression(s string) (float64, error) {
	v, reason := parseRegression(s)
	if reason != "" {
		return 0, fmt.Errorf("%q: %s", truncate(s), reason)
	}
	return v, nil
}

// parseRegression is ParseRegression with the reason alone, for a field
// error that shows the value already.
func parseRegression(s string) (float64, string) {
	num, ok := strings.CutSuffix(strings.TrimSpace(s), "%")
	if !ok {
		return 0, "give a percentage with %, such as 10%"
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, "must be a non-negative percentage such as 10%"
	}
	return v / 100, ""
}

// CheckSLO checks an absolute latency SLO (gates.mutatingP99, listP99,
// recoveryP99 and their flags): 0 turns the gate off, a negative duration
// is an error.
func CheckSLO(d time.Duration) error {
	if d < 0 {
		return fmt.Errorf("%s: must not be negative (0s turns the gate off)", d)
	}
	return nil
}

// CheckMaxOutageSeconds checks gates.maxOutageSeconds and
// --max-outage-seconds: a finite number of seconds; a negative one turns the
// gate off.
func CheckMaxOutageSeconds(v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("%v: must be a finite number of seconds (0 allows no outage, a negative number turns the gate off)", v)
	}
	return nil
}

// CheckGateMetric checks a regression threshold's metric: "*", a key
// metric ID or a flow's metric ID.
func CheckGateMetric(id string) error {
	if reason := gateMetricReason(id); reason != "" {
		return fmt.Errorf("unknown metric %q: %s", truncate(id), reason)
	}
	return nil
}

func gateMetricReason(id string) string {
	if id == AllGateMetrics || slices.Contains(result.KeyMetricIDs, id) {
		return ""
	}
	// A flow's excess per restart (compare.FlowMetric): which flows exist
	// is bench/cluster's to say (cluster.Flows), and the gate refuses an
	// unknown one with the list.
	if flowMetricID.MatchString(id) {
		return ""
	}
	msg := "give \"*\" or a key metric ID (`stormbench compare --list-metrics` lists them)"
	if prefix, _, ok := strings.Cut(id, "."); ok {
		var same []string
		for _, k := range result.KeyMetricIDs {
			if strings.HasPrefix(k, prefix+".") {
				same = append(same, k)
			}
		}
		if len(same) > 0 && len(same) <= 4 {
			msg += "; " + prefix + ": " + strings.Join(same, ", ")
		}
	}
	return msg
}

// truncate shortens a user's value for an error message, so that a message
// stays short whatever the input.
func truncate(s string) string {
	const maxLen = 60
	if len(s) <= maxLen {
		return s
	}
	return s[:maxLen] + "…"
}

// validateCIGates checks the gates section with the parsers the gate flags
// use.
func validateCIGates(g *Gates, gp *field.Path) field.ErrorList {
	if g == nil {
		return nil
	}
	var errs field.ErrorList
	rp := gp.Child("maxRegression")
	for _, k := range slices.Sorted(maps.Keys(g.MaxRegression)) {
		if reason := gateMetricReason(k); reason != "" {
			errs = append(errs, field.Invalid(rp.Key(truncate(k)), truncate(k), "unknown metric: "+reason))
		}
		if _, reason := parseRegression(g.MaxRegression[k]); reason != "" {
			errs = append(errs, field.Invalid(rp.Key(truncate(k)), truncate(g.MaxRegression[k]), reason))
		}
	}
	for _, d := range []struct {
		name string
		v    *metav1.Duration
	}{{"mutatingP99", g.MutatingP99}, {"listP99", g.ListP99}, {"recoveryP99", g.RecoveryP99}} {
		if d.v != nil {
			errs = append(errs, invalidIf(CheckSLO(d.v.Duration) != nil, gp.Child(d.name), d.v.Duration.String(), "must not be negative (0s turns the gate off)")...)
		}
	}
	if v := g.MaxOutageSeconds; v != nil {
		errs = append(errs, invalidIf(CheckMaxOutageSeconds(*v) != nil, gp.Child("maxOutageSeconds"), fmt.Sprint(*v), "must be a finite number of seconds (0 allows no outage, a negative number turns the gate off)")...)
	}
	return errs
}
