package report

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/stormbench/stormbench/bench/compare"
	"github.com/stormbench/stormbench/bench/gate"
	"github.com/stormbench/stormbench/bench/measure/apiserver"
	"github.com/stormbench/stormbench/bench/result"
)

// sweepMaxMutatingP99 is the storm-window p99 of mutating API calls a safe
// restart wave keeps to: the Kubernetes API call latency SLO, the gate's
// default
// (https://github.com/kubernetes/community/blob/master/sig-scalability/slos/api_call_latency.md).
var sweepMaxMutatingP99 = gate.DefaultOptions().MutatingP99

// sweepCriteria says, in the verdicts, what safe means.
const sweepCriteria = "mutating p99 ≤ 1s, no 429s, no service outage"

// SweepSeries is the capacity sweep of one base variant: the figures a
// capacity planner checks at every wave size tried, and the largest safe
// wave.
type SweepSeries struct {
	// Variant is the base variant's name, without the "/wave=<size>" suffix.
	Variant string
	// Rows hold one wave size each, smallest first.
	Rows []SweepRow
	// MaxSafeWave is the largest wave size that was safe with every smaller
	// size tried safe too; 0 when the smallest was not. Capacity must hold
	// for any smaller wave, so a safe size above an unsafe one does not
	// count: it is noise, not headroom.
	MaxSafeWave int
}

// SweepRow is one wave size of a capacity sweep. Figures come from the
// worst repetition of the size; a figure no repetition measured is NaN.
type SweepRow struct {
	// WaveSize is the number of nodes restarted at once.
	WaveSize int
	// Repetitions is the number of runs at this size.
	Repetitions int
	// Complete is true when every run at this size completed.
	Complete bool
	// MutatingP99 is the storm-window p99 of mutating API calls, in
	// seconds.
	MutatingP99 float64
	// Throttled is the number of 429 responses in the storm window.
	Throttled float64
	// OutageSeconds are the storm window's service-outage seconds (a
	// Service without a ready endpoint).
	OutageSeconds float64
	// PeakRate is the storm window's peak API request rate, in requests
	// per second.
	PeakRate float64
	// Safe is true when every run completed, mutating p99 stayed within
	// sweepMaxMutatingP99, and there were no 429s and no outage.
	Safe bool
	// Unsafe says why the size is not safe; empty when it is.
	Unsafe []string
}

// Sweep analyses the capacity sweep variants ("<variant>/wave=<size>") of
// a result, one series per base variant in run order; nil when the result
// holds none. A figure that was not measured makes its size unsafe: a
// verdict that cannot see must not pass.
func Sweep(r *result.Result) []SweepSeries {
	var out []SweepSeries
	runs := map[string]map[int][]*result.VariantRun{}
	for i := range r.Variants {
		v := &r.Variants[i]
		step, ok := v.SweepOf()
		if !ok {
			continue
		}
		base, size := step.Variant, step.WaveSize
		if runs[base] == nil {
			runs[base] = map[int][]*result.VariantRun{}
			out = append(out, SweepSeries{Variant: base})
		}
		runs[base][size] = append(runs[base][size], v)
	}
	for i := range out {
		s := &out[i]
		bySize := runs[s.Variant]
		broken := false
		for _, size := range slices.Sorted(maps.Keys(bySize)) {
			row := sweepRow(size, bySize[size])
			s.Rows = append(s.Rows, row)
			if !row.Safe {
				broken = true
			}
			if !broken {
				s.MaxSafeWave = size
			}
		}
	}
	return out
}

// sweepRow judges one wave size on the worst of its runs.
func sweepRow(size int, runs []*result.VariantRun) SweepRow {
	p99 := worst(runs, mutatingP99)
	throttled := worst(runs, extractor(result.MetricThrottled))
	outage := worst(runs, extractor(result.MetricOutageSeconds))
	row := SweepRow{
		WaveSize: size, Repetitions: len(runs), Complete: true,
		MutatingP99: p99.value, Throttled: throttled.value, OutageSeconds: outage.value,
		PeakRate: worst(runs, extractor(result.MetricRequestRatePeak)).value,
	}
	for _, v := range runs {
		row.Complete = row.Complete && v.Complete
	}
	var why []string
	if !row.Complete {
		why = append(why, "incomplete")
	}
	limit := sweepMaxMutatingP99.Seconds()
	switch {
	case p99.missing:
		why = append(why, "mutating p99 not measured")
	case p99.value > limit:
		why = append(why, fmt.Sprintf("mutating p99 %s > %s", compare.FormatSeconds(p99.value), sweepMaxMutatingP99))
	}
	switch {
	case throttled.missing:
		why = append(why, "429s not measured")
	case throttled.value == 1:
		why = append(why, "1 429 response")
	case throttled.value > 0:
		why = append(why, fmt.Sprintf("%s 429 responses", compare.FormatNumber(throttled.value)))
	}
	switch {
	case outage.missing:
		why = append(why, "service outage not measured")
	case outage.value > 0:
		why = append(why, fmt.Sprintf("%s service outage", compare.FormatSeconds(outage.value)))
	}
	row.Safe, row.Unsafe = len(why) == 0, why
	return row
}

// mutatingP99 reads the storm-window p99 of mutating API calls. Unlike
// the key metric, a histogram without requests has a p99 (0: nothing was
// slow), as in the latency SLO gate; only a missing histogram is not
// measured.
func mutatingP99(v *result.VariantRun) (float64, bool) {
	h := v.Measurement(apiserver.Name).Histogram(apiserver.RequestDuration, result.WindowStorm, result.LabelClass, apiserver.ClassMutating)
	if h == nil {
		return 0, false
	}
	return h.Summary.P99, true
}

// extractor returns the extractor of a key metric (the sweep's, the APF peak). An
// unknown ID reads as not measured, which makes every size unsafe.
func extractor(id string) func(*result.VariantRun) (float64, bool) {
	ms, err := compare.LookupMetrics(id)
	if err != nil {
		return func(*result.VariantRun) (float64, bool) { return 0, false }
	}
	return ms[0].Extract
}

// worstFigure is the highest value of a figure across runs; missing is
// true when any run did not measure it, and value is then the highest of
// the others or NaN.
type worstFigure struct {
	value   float64
	missing bool
}

func worst(runs []*result.VariantRun, extract func(*result.VariantRun) (float64, bool)) worstFigure {
	w := worstFigure{value: math.NaN()}
	for _, v := range runs {
		x, ok := extract(v)
		if !ok {
			w.missing = true
			continue
		}
		if math.IsNaN(w.value) || x > w.value {
			w.value = x
		}
	}
	return w
}

// Verdict states the series' largest safe restart wave, or that no size
// tried was safe, as one line.
func (s SweepSeries) Verdict() string {
	if s.MaxSafeWave == 0 {
		return fmt.Sprintf("%s: no wave size tried was safe (%s)", s.Variant, sweepCriteria)
	}
	return fmt.Sprintf("%s: max safe restart wave: %d nodes (%s)", s.Variant, s.MaxSafeWave, sweepCriteria)
}
