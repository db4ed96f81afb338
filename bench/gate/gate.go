package gate

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"golang.org/x/perf/benchmath"

	"github.com/stormbench/stormbench/bench/compare"
	"github.com/stormbench/stormbench/bench/measure/apiserver"
	"github.com/stormbench/stormbench/bench/measure/recovery"
	"github.com/stormbench/stormbench/bench/result"
	"github.com/stormbench/stormbench/profiles"
)

// AllMetrics is the MaxRegression key that applies to every key metric
// without a threshold of its own.
const AllMetrics = profiles.AllGateMetrics

// Options are the thresholds `stormbench gate` checks.
type Options struct {
	// MaxRegression maps a metric ID (or AllMetrics) to the allowed relative
	// increase of the current median over the baseline median: 0.10 allows
	// +10 %.
	MaxRegression map[string]float64
	// MutatingP99 is the SLO on the storm-window p99 of mutating API calls
	// (the Kubernetes API call latency SLO: 1 s); 0 disables it.
	MutatingP99 time.Duration
	// ListP99 is the SLO on the storm-window p99 of LIST calls (30 s for
	// cluster-scoped LISTs in the same SLO); 0 disables it.
	ListP99 time.Duration
	// MaxOutageSeconds is the allowed service-outage seconds (a Service with
	// no ready endpoint); nil disables it.
	MaxOutageSeconds *float64
	// RecoveryP99 is the allowed node recovery p99; 0 disables it.
	RecoveryP99 time.Duration
	// Variants restricts the gates to these variants of the current result;
	// empty means all.
	Variants []string
	// Alpha is the family-wise significance level (Holm) below which a
	// relative regression between samples large enough to tell is taken as
	// real; default 0.05.
	Alpha float64
	// Repetitions is the runs per variant the gate requires of both
	// results: the repetitions of the profile named for the thresholds, or
	// of the profile the baseline recorded (Request.Resolve); never taken
	// from the result being judged. 0 takes the baseline's recorded
	// profile's, else requires none beyond one.
	Repetitions int
	// Sources says where each threshold came from (ResolveThresholds); the
	// report shows it.
	Sources []ThresholdSource
}

// DefaultOptions returns the Kubernetes scalability SLOs stormbench
// gates on without further configuration: mutating p99 ≤ 1 s, LIST p99 ≤
// 30 s and no service outage
// (https://github.com/kubernetes/community/blob/master/sig-scalability/slos/api_call_latency.md).
func DefaultOptions() Options {
	zero := 0.0
	return Options{
		MutatingP99:      time.Second,
		ListP99:          30 * time.Second,
		MaxOutageSeconds: &zero,
	}
}

// Kind is the kind of a gate.
type Kind string

// Gate kinds.
const (
	// KindComplete checks that the current run completed without failed
	// measurements, so that its figures are whole.
	KindComplete Kind = "complete"
	// KindSLO checks an absolute threshold on the current run's worst
	// repetition.
	KindSLO Kind = "slo"
	// KindRegression checks the relative change of the current median from
	// the baseline median.
	KindRegression Kind = "regression"
	// KindVariant checks that a variant is in both documents, with the
	// repetitions each one's profile asked for: a comparison with a side
	// missing, or with runs lost, must not pass.
	KindVariant Kind = "variant"
)

// Status is a gate's outcome.
type Status string

// Gate outcomes.
const (
	Pass Status = "pass"
	Fail Status = "FAIL"
	Skip Status = "skip"
)

// Check is one checked gate.
type Check struct {
	// Variant is the current result's variant the gate checked.
	Variant string `json:"variant"`
	// Kind is the gate's kind.
	Kind Kind `json:"kind"`
	// Metric is the metric ID ("" for KindComplete).
	Metric string `json:"metric,omitempty"`
	// Name names the gate for people and JUnit.
	Name string `json:"name"`
	// Unit is the unit of Value, Baseline and Limit.
	Unit string `json:"unit,omitempty"`
	// Value is the current figure: the worst repetition for an SLO, the
	// median for a regression.
	Value float64 `json:"value"`
	// NoValue is set when the current result holds no figure for the gate
	// (not measured, or its variant missing); Value is then 0, shown as "-".
	NoValue bool `json:"noValue,omitempty"`
	// Baseline is the baseline median of a regression gate.
	Baseline *float64 `json:"baseline,omitempty"`
	// Change is the relative change from the baseline; nil when infinite.
	Change *float64 `json:"change,omitempty"`
	// MaxRegression is a regression gate's allowed relative change.
	MaxRegression *float64 `json:"maxRegression,omitempty"`
	// Limit is the threshold Value is held to, in Unit.
	Limit *float64 `json:"limit,omitempty"`
	// Threshold is the threshold for people ("≤ 1s", "≤ +10% (≤ 1779)").
	Threshold string `json:"threshold"`
	// Status is pass, FAIL or skip.
	Status Status `json:"status"`
	// Detail says by how much the gate passed or failed, or why it was
	// skipped.
	Detail string `json:"detail"`
	// P is a regression gate's raw Mann–Whitney U p-value, and PAdjusted
	// the same after Holm's correction over the variant's regression gates
	// (the family whose verdict the gate gives); nil when not tested.
	P         *float64 `json:"p,omitempty"`
	PAdjusted *float64 `json:"pAdjusted,omitempty"`
	// TooFew is set on a regression gate whose runs are too few for the
	// corrected test to call any change significant: it was judged on the
	// medians against the threshold alone.
	TooFew bool `json:"tooFewRepetitions,omitempty"`
	// Samples are a regression gate's current and baseline medians with
	// their intervals and n, for display; nil for other gates.
	Samples *Samples `json:"samples,omitempty"`
}

// Report is the outcome of Evaluate.
type Report struct {
	// Baseline and Current describe the two documents.
	Baseline *compare.InputInfo `json:"baseline,omitempty"`
	Current  compare.InputInfo  `json:"current"`
	// Results are the gates, per variant: completeness, SLOs, regressions.
	Results []Check `json:"results"`
	// Passed, Failed and Skipped count Results.
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Skipped int `json:"skipped"`
	// Thresholds say where each threshold came from: defaults, an
	// explicitly chosen profile, flags.
	Thresholds []ThresholdSource `json:"thresholds,omitempty"`
	// Warnings are caveats about the inputs.
	Warnings []string `json:"warnings,omitempty"`
}

// OK reports whether no gate failed.
func (r *Report) OK() bool { return r.Failed == 0 }

// FailedGates returns the failed gates.
func (r *Report) FailedGates() []Check {
	var out []Check
	for _, g := range r.Results {
		if g.Status == Fail {
			out = append(out, g)
		}
	}
	return out
}

// Evaluate checks current against opts: per variant, that the run is
// complete with the repetitions its profile asked for, the absolute SLOs on
// its worst repetition, and, with a baseline, that the variant is in both
// documents and the relative regressions of its medians from baseline's
// (which may be nil when no regression is configured). A variant on one
// side only is a failed gate, not an error. Evaluate returns an error only
// for unusable input: an unknown metric, an unknown --variant, a regression
// gate without a baseline, a recorded profile that does not decode.
func Evaluate(baseline, current compare.Input, opts Options) (*Report, error) {
	if current.Result == nil {
		return nil, errors.New("gating: no current result")
	}
	if opts.Alpha == 0 {
		opts.Alpha = benchmath.DefaultThresholds.CompareAlpha
	}
	regressions, err := regressionMetrics(opts.MaxRegression)
	if err != nil {
		return nil, fmt.Errorf("gating: %w", err)
	}
	if len(regressions) > 0 && baseline.Result == nil {
		return nil, errors.New("gating: relative regression thresholds need a baseline result")
	}
	// The current result's own profile can only add failures (a run that
	// lost repetitions or variants), never lower what the gate requires.
	own, err := compare.RecordedProfile(current)
	if err != nil {
		return nil, fmt.Errorf("gating: %w", err)
	}
	curInfo, err := compare.Describe(current)
	if err != nil {
		return nil, fmt.Errorf("gating: %w", err)
	}
	rep := &Report{Current: curInfo, Thresholds: opts.Sources}
	rep.Warnings = compare.InputWarnings(current)
	var base []compare.Group
	want := opts.Repetitions
	if baseline.Result != nil {
		b, err := compare.Describe(baseline)
		if err != nil {
			return nil, fmt.Errorf("gating: %w", err)
		}
		rep.Baseline = &b
		if !baseline.Result.Complete {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("baseline %s is incomplete", baseline.Name))
		}
		base = compare.GroupRuns([]compare.Input{baseline}, compare.GroupByVariant)
		if want == 0 {
			p, err := compare.RecordedProfile(baseline)
			if err != nil {
				return nil, fmt.Errorf("gating: %w", err)
			}
			want = p.Repetitions.Count
		}
	}
	cur, err := selectVariants(current, opts.Variants)
	if err != nil {
		return nil, err
	}
	for _, g := range cur {
		rep.Results = append(rep.Results, completeGate(current.Result, g, own.Repetitions.Count))
		rep.Results = append(rep.Results, sloGates(g, opts)...)
		if baseline.Result == nil {
			continue
		}
		i := slices.IndexFunc(base, func(b compare.Group) bool { return b.Name == g.Name })
		if i < 0 {
			rep.Results = append(rep.Results, variantGate(g.Name, len(g.VariantRuns()), -1, want,
				fmt.Sprintf("missing from the baseline %s (it has: %s)", baseline.Name, shortList(compare.GroupNames(base)))))
			continue
		}
		bg := base[i]
		rep.Results = append(rep.Results, variantGate(g.Name, len(g.VariantRuns()), len(bg.VariantRuns()), want, ""))
		var family []Check
		for _, rm := range regressions {
			family = append(family, regressionGate(bg, g, rm))
		}
		rep.Results = append(rep.Results, judgeRegressions(family, opts.Alpha)...)
	}
	if len(opts.Variants) == 0 {
		rep.Results = append(rep.Results, profileVariantGates(current.Name, own, cur)...)
	}
	// A variant the baseline has and the current result lacks fails: a
	// current run that lost a variant must not pass on the others.
	for _, bg := range base {
		if len(opts.Variants) > 0 && !slices.Contains(opts.Variants, bg.Name) {
			continue
		}
		if !slices.ContainsFunc(cur, func(g compare.Group) bool { return g.Name == bg.Name }) {
			rep.Results = append(rep.Results, variantGate(bg.Name, -1, len(bg.VariantRuns()), want,
				fmt.Sprintf("in the baseline %s, missing from the current result %s", baseline.Name, current.Name)))
		}
	}
	rep.count()
	return rep, nil
}

// selectVariants groups current's runs by variant, only the variants named
// (all when none is).
func selectVariants(current compare.Input, variants []string) ([]compare.Group, error) {
	cur := compare.GroupRuns([]compare.Input{current}, compare.GroupByVariant)
	if len(cur) == 0 {
		return nil, fmt.Errorf("gating: current result %s holds no variant runs", current.Name)
	}
	if len(variants) == 0 {
		return cur, nil
	}
	var sel []compare.Group
	for _, name := range variants {
		i := slices.IndexFunc(cur, func(g compare.Group) bool { return g.Name == name })
		if i < 0 {
			return nil, fmt.Errorf("gating: current result %s has no variant %q (have: %s)", current.Name, name, strings.Join(compare.GroupNames(cur), ", "))
		}
		sel = append(sel, cur[i])
	}
	return sel, nil
}

// count counts the report's results by status, afresh.
func (rep *Report) count() {
	rep.Passed, rep.Failed, rep.Skipped = 0, 0, 0
	for _, r := range rep.Results {
		switch r.Status {
		case Pass:
			rep.Passed++
		case Fail:
			rep.Failed++
		case Skip:
			rep.Skipped++
		}
	}
}

// variantGate checks that a variant is on both sides (a count of -1 is
// missing) with at least the repetitions the gate requires (want, from the
// baseline or the profile named; 0 requires one): a comparison of fewer
// runs than the thresholds were set for is not that comparison.
func variantGate(name string, curN, baseN, want int, missing string) Check {
	want = max(want, 1)
	gr := Check{Variant: name, Kind: KindVariant, Name: "in both, repetitions", Value: float64(max(curN, 0)), NoValue: curN < 0,
		Threshold: fmt.Sprintf("in both, ≥ %d each", want), Status: Pass}
	if baseN >= 0 {
		b := float64(baseN)
		gr.Baseline = &b
	}
	lim := float64(want)
	gr.Limit = &lim
	var problems []string
	if missing != "" {
		problems = append(problems, missing)
	}
	if curN >= 0 && baseN >= 0 {
		if baseN < want {
			problems = append(problems, fmt.Sprintf("the baseline has %d of the %d repetitions the gate requires", baseN, want))
		}
		if curN < want {
			problems = append(problems, fmt.Sprintf("the current result has %d of the %d repetitions the gate requires", curN, want))
		}
	}
	if len(problems) > 0 {
		gr.Status = Fail
		gr.Detail = strings.Join(problems, "; ")
		return gr
	}
	gr.Detail = fmt.Sprintf("n=%d+%d", baseN, curN)
	return gr
}

// profileVariantGates fails every variant the current result's own
// profile (p, recorded in the result named current) lists and the result
// lacks (a sweep's "<variant>/wave=<size>" runs count as their variant's),
// with or without a baseline: a run that lost a variant must not pass on
// the others.
func profileVariantGates(current string, p *profiles.Profile, groups []compare.Group) []Check {
	var out []Check
	for _, v := range p.Variants {
		if slices.ContainsFunc(groups, func(g compare.Group) bool {
			return g.Name == v.Name || strings.HasPrefix(g.Name, v.Name+"/wave=")
		}) {
			continue
		}
		lim := 1.0
		out = append(out, Check{Variant: v.Name, Kind: KindVariant, Name: "in its profile, ran", Limit: &lim,
			Threshold: "every variant of the profile", Status: Fail,
			Detail: fmt.Sprintf("listed by the profile recorded in %s, missing from its runs (it has: %s)", current, shortList(compare.GroupNames(groups)))})
	}
	return out
}

// shortList joins names, at most five of them, so that a message stays
// short.
func shortList(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	if len(names) > 5 {
		return strings.Join(names[:5], ", ") + fmt.Sprintf(" and %d more", len(names)-5)
	}
	return strings.Join(names, ", ")
}

type regressionMetric struct {
	compare.Metric
	max      float64
	explicit bool
}

// regressionMetrics resolves MaxRegression into metrics in display order:
// AllMetrics covers every key metric, and a metric's own entry wins.
func regressionMetrics(m map[string]float64) ([]regressionMetric, error) {
	ids := slices.DeleteFunc(slices.Sorted(maps.Keys(m)), func(k string) bool { return k == AllMetrics })
	named, err := compare.LookupMetrics(ids...)
	if err != nil {
		return nil, err
	}
	var out []regressionMetric
	for _, km := range compare.KeyMetrics() {
		if f, ok := m[km.ID]; ok {
			out = append(out, regressionMetric{km, f, true})
		} else if f, ok := m[AllMetrics]; ok {
			out = append(out, regressionMetric{km, f, false})
		}
	}
	// A flow's metric ("excess.<flow>", compare.FlowMetric) is no key
	// metric: it is gated when named, after them, by ID.
	for _, fm := range named {
		if strings.HasPrefix(fm.ID, result.FlowMetricPrefix) {
			out = append(out, regressionMetric{fm, m[fm.ID], true})
		}
	}
	return out, nil
}

func completeGate(r *result.Result, g compare.Group, wantReps int) Check {
	gr := Check{Variant: g.Name, Kind: KindComplete, Name: "run complete", Threshold: "complete, no failed measurement", Status: Pass, Detail: "complete"}
	var problems []string
	if !r.Complete {
		problems = append(problems, "the run stopped early")
	}
	if n := len(g.VariantRuns()); wantReps > 0 && n < wantReps {
		problems = append(problems, fmt.Sprintf("%d of the %d repetitions its profile asked for", n, wantReps))
	}
	for _, v := range g.VariantRuns() {
		tag := fmt.Sprintf("#%d", v.Repetition)
		if !v.Complete && r.Complete {
			problems = append(problems, tag+" incomplete")
		}
		for _, m := range v.Measurements {
			if m.Error != "" {
				problems = append(problems, fmt.Sprintf("%s measurement %s failed: %s", tag, m.Name, m.Error))
			}
		}
		for _, e := range v.Errors {
			problems = append(problems, fmt.Sprintf("%s: %s", tag, e))
		}
	}
	if len(problems) > 0 {
		gr.Status = Fail
		gr.Value = 1
		gr.Detail = strings.Join(problems, "; ")
	}
	return gr
}

func sloGates(g compare.Group, o Options) []Check {
	var out []Check
	if o.MutatingP99 > 0 {
		out = append(out, latencySLO(g, result.MetricMutatingP99, "SLO API p99 mutating (storm)", apiserver.ClassMutating, o.MutatingP99))
	}
	if o.ListP99 > 0 {
		out = append(out, latencySLO(g, result.MetricListP99, "SLO API p99 LIST (storm)", apiserver.ClassList, o.ListP99))
	}
	if o.MaxOutageSeconds != nil {
		m, _ := compare.LookupMetrics(result.MetricOutageSeconds)
		out = append(out, valueSLO(g, m[0], "SLO service outage seconds", *o.MaxOutageSeconds, "no outage recorded"))
	}
	if o.RecoveryP99 > 0 {
		out = append(out, recoverySLO(g, o.RecoveryP99))
	}
	return out
}

// latencySLO checks the worst repetition's server-side p99 of a verb class.
func latencySLO(g compare.Group, id, name, class string, limit time.Duration) Check {
	return histogramSLO(g, id, name, limit, "no such requests in the storm window", func(v *result.VariantRun) (*result.Histogram, string) {
		return v.Measurement(apiserver.Name).Histogram(apiserver.RequestDuration, result.WindowStorm, result.LabelClass, class), ""
	})
}

func recoverySLO(g compare.Group, limit time.Duration) Check {
	return histogramSLO(g, result.MetricNodeReadyP99, "SLO node recovery p99", limit, "no node went not-ready", func(v *result.VariantRun) (*result.Histogram, string) {
		m := v.Measurement(recovery.Name)
		if u, ok := m.Value(recovery.Unrecovered, result.WindowStorm, result.LabelKind, "node"); ok && u > 0 {
			return m.Histogram(recovery.Node, result.WindowStorm), compare.FormatNumber(u) + " nodes never recovered"
		}
		return m.Histogram(recovery.Node, result.WindowStorm), ""
	})
}

// histogramSLO checks the worst repetition's p99 of the storm-window
// histogram hist reads, with empty as the detail when no repetition had a
// sample. A repetition without the histogram (its measurement off) fails,
// as does one of which hist says what failed: a gate that cannot see must
// not pass.
func histogramSLO(g compare.Group, id, name string, limit time.Duration, empty string, hist func(*result.VariantRun) (*result.Histogram, string)) Check {
	lim := limit.Seconds()
	gr := Check{Variant: g.Name, Kind: KindSLO, Metric: id, Name: name, Unit: result.UnitSeconds, Limit: &lim, Threshold: "≤ " + limit.String()}
	worst, n := 0.0, int64(0)
	for _, v := range g.VariantRuns() {
		h, failed := hist(v)
		if h == nil {
			return notMeasured(gr, v)
		}
		n += h.Summary.Count
		if h.Summary.Count > 0 {
			worst = max(worst, h.Summary.P99)
		}
		if failed != "" {
			gr.Value, gr.Status, gr.Detail = worst, Fail, fmt.Sprintf("#%d: %s", v.Repetition, failed)
			return gr
		}
	}
	gr.Value = worst
	judgeAbsolute(&gr, worst, lim)
	if n == 0 {
		gr.Detail = empty
	}
	return gr
}

func valueSLO(g compare.Group, m compare.Metric, name string, lim float64, zeroDetail string) Check {
	gr := Check{Variant: g.Name, Kind: KindSLO, Metric: m.ID, Name: name, Unit: m.Unit, Limit: &lim, Threshold: "≤ " + compare.FormatValue(lim, m.Unit)}
	worst := math.Inf(-1)
	for _, v := range g.VariantRuns() {
		x, ok := m.Extract(v)
		if !ok {
			return notMeasured(gr, v)
		}
		worst = max(worst, x)
	}
	gr.Value = worst
	judgeAbsolute(&gr, worst, lim)
	if worst == 0 && gr.Status == Pass {
		gr.Detail = zeroDetail
	}
	return gr
}

func notMeasured(gr Check, v *result.VariantRun) Check {
	gr.Status, gr.NoValue = Fail, true
	gr.Detail = fmt.Sprintf("not measured in repetition #%d (is its measurement enabled?)", v.Repetition)
	return gr
}

// judgeAbsolute sets Status and a Detail saying by how much value is over
// or under the limit.
func judgeAbsolute(gr *Check, value, limit float64) {
	diff := value - limit
	if diff > 0 {
		gr.Status = Fail
		gr.Detail = "over by " + compare.FormatValue(diff, gr.Unit)
		if limit > 0 {
			gr.Detail += " (" + compare.FormatPercent(diff/limit) + ")"
		}
		return
	}
	gr.Status = Pass
	gr.Detail = compare.FormatValue(-diff, gr.Unit) + " headroom"
}

// regressionGate measures one metric's relative change of the medians from
// the baseline's and the U test's p-value; judgeRegressions gives the
// verdict once the variant's family of p-values is known. A gate left
// without Status is pending.
func regressionGate(base, cur compare.Group, rm regressionMetric) Check {
	maxReg := rm.max
	bv, cv := base.Values(rm.Metric), cur.Values(rm.Metric)
	gr := Check{
		Variant: cur.Name, Kind: KindRegression, Metric: rm.ID, Name: "regression " + rm.Label, Unit: rm.Unit,
		MaxRegression: &maxReg, Threshold: "≤ " + compare.FormatPercent(rm.max), NoValue: len(cv) == 0,
	}
	switch {
	case len(cv) == 0 && rm.explicit && len(bv) > 0:
		gr.Status = Fail
		gr.Detail = "not measured in the current run"
		return gr
	case len(cv) == 0:
		gr.Status = Skip
		gr.Detail = "no value in the current run (not measured, or no samples)"
		return gr
	case len(bv) == 0:
		gr.Status = Skip
		gr.Detail = "no baseline value"
		return gr
	}
	bs, cs := benchmath.NewSample(bv, &benchmath.DefaultThresholds), benchmath.NewSample(cv, &benchmath.DefaultThresholds)
	bm := benchmath.AssumeNothing.Summary(bs, 0.95).Center
	cm := benchmath.AssumeNothing.Summary(cs, 0.95).Center
	gr.Value, gr.Baseline = cm, &bm
	gr.Samples = &Samples{Current: compare.MedianInterval(cv, 0.95), Baseline: compare.MedianInterval(bv, 0.95)}
	limit := bm * (1 + rm.max)
	gr.Limit = &limit
	gr.Threshold = fmt.Sprintf("≤ %s (%s)", compare.FormatPercent(rm.max), compare.FormatValue(limit, rm.Unit))
	change := compare.RelChange(bm, cm)
	if !math.IsInf(change, 0) {
		gr.Change = &change
	}
	p := benchmath.AssumeNothing.Compare(bs, cs).P
	gr.P = &p
	return gr
}

// judgeRegressions gives the verdict of a variant's pending regression
// gates as one family. A change within its threshold passes. A change
// beyond it fails unless the U test, corrected for the family by Holm's
// method (bounding the chance that any of the family's gates fails on
// noise), finds it not significant; and the test may spare a change only
// when the runs are enough for it to call one significant: when the
// smallest p the runs allow (compare.MinUTestP), times the family's size,
// is within alpha. With fewer runs (1 against 5: 0.333) the medians
// against the threshold are the verdict, and the gate says so.
func judgeRegressions(family []Check, alpha float64) []Check {
	var ps []float64
	var idx []int
	for i, g := range family {
		if g.P != nil {
			ps, idx = append(ps, *g.P), append(idx, i)
		}
	}
	adj := compare.Holm(ps)
	for k, i := range idx {
		a := adj[k]
		family[i].PAdjusted = &a
	}
	m := len(ps)
	for i := range family {
		g := &family[i]
		if g.Status != "" {
			continue
		}
		n1, n2 := g.Samples.Baseline.N, g.Samples.Current.N
		n := fmt.Sprintf("n=%d+%d", n1, n2)
		from := compare.FormatValue(*g.Baseline, g.Unit)
		change := math.Inf(1)
		if g.Change != nil {
			change = *g.Change
		}
		if change <= *g.MaxRegression {
			g.Status = Pass
			g.Detail = fmt.Sprintf("%s from %s", compare.FormatPercent(change), from)
			continue
		}
		minP := compare.MinUTestP(n1, n2) * float64(m)
		g.TooFew = minP > alpha
		pText := fmt.Sprintf("p=%.3f, Holm-adjusted over %d gates %.3f, %s", *g.P, m, *g.PAdjusted, n)
		if !g.TooFew && *g.PAdjusted > alpha {
			// Enough runs to tell, and the corrected test cannot tell the
			// samples apart: noise, not a regression.
			g.Status = Pass
			g.Detail = fmt.Sprintf("%s from %s, not significant (%s)", compare.FormatPercent(change), from, pText)
			continue
		}
		g.Status = Fail
		if g.Change == nil {
			g.Detail = fmt.Sprintf("%s from 0 (any increase from 0 is a regression)", compare.FormatValue(g.Value, g.Unit))
		} else {
			g.Detail = fmt.Sprintf("%s from %s: %.1f points over the allowed %s", compare.FormatPercent(change), from, (change-*g.MaxRegression)*100, compare.FormatPercent(*g.MaxRegression))
		}
		if g.TooFew {
			g.Detail += fmt.Sprintf(" (judged on the medians: %s is too few for the U test: its smallest p, %.3f, times %d gates (Holm) is above α %.3g)", n, compare.MinUTestP(n1, n2), m, alpha)
		} else {
			g.Detail += " (" + pText + ")"
		}
	}
	return family
}
