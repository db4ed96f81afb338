package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/stormbench/stormbench/bench/compare"
	"github.com/stormbench/stormbench/bench/measure"
	"github.com/stormbench/stormbench/bench/measure/apiserver"
	"github.com/stormbench/stormbench/bench/result"
)

// How much of a run's scrapes landed, and the summary's number formats.

// scrapeCoverage is how many of kube-apiserver's scheduled /metrics
// scrapes succeeded, and the longest time between two that did: the
// coverage of every API figure above.
func scrapeCoverage(v *result.VariantRun) string {
	landed, sched, gap, ok := ScrapeCoverage(v)
	if !ok {
		return missing
	}
	return fmt.Sprintf("%s/%s (%.0f%%), %s", fmtCount(landed), fmtCount(sched), 100*min(landed, sched)/sched, fmtSeconds(gap))
}

// LowScrapeCoverage is the share of kube-apiserver's scheduled /metrics
// scrapes below which a repetition's API figures are flagged: below 80 %
// one scrape in five is missing, so rates and peaks are averages over
// gaps and a short burst can fall between two scrapes unseen.
const LowScrapeCoverage = 0.8

// LowCoverage says, in a sentence, that v's API figures rest on few
// scrapes (fewer than LowScrapeCoverage of those scheduled landed), or
// returns "" when coverage is fine or was not recorded.
func LowCoverage(v *result.VariantRun) string {
	landed, sched, gap, ok := ScrapeCoverage(v)
	what := fmt.Sprintf("%s of %s scheduled kube-apiserver scrapes landed (%.0f%%", fmtCount(max(landed, 0)), fmtCount(sched), 100*max(min(landed, sched), 0)/sched)
	if !ok {
		// A result from before the scrape counters: the request rate's
		// points against the scrape times its span and typical step imply.
		landed, sched, gap, ok = seriesCoverage(v)
		what = fmt.Sprintf("the API request rate has points at %s of about %s scrape times (%.0f%%", fmtCount(landed), fmtCount(sched), 100*landed/sched)
	}
	if !ok || landed >= LowScrapeCoverage*sched {
		return ""
	}
	return fmt.Sprintf("%s#%d: low scrape coverage: %s, below %.0f%%), longest gap %s; its API figures (requests, rates, peaks, latency) are averages over the gaps or missing",
		v.Variant, v.Repetition, what, 100*LowScrapeCoverage, fmtSeconds(gap))
}

// seriesCoverage estimates scrape coverage from the unlabelled API request
// rate series: its points, against the points its span would hold at its
// typical (median) step, and its longest step.
func seriesCoverage(v *result.VariantRun) (landed, expected, maxGapSeconds float64, ok bool) {
	m := v.Measurement(apiserver.Name)
	if m == nil {
		return 0, 0, 0, false
	}
	s := m.SeriesNamed(apiserver.SeriesRequestRate)
	if s == nil || len(s.Points) < 3 {
		return 0, 0, 0, false
	}
	steps := make([]float64, 0, len(s.Points)-1)
	for i := 1; i < len(s.Points); i++ {
		steps = append(steps, s.Points[i].T-s.Points[i-1].T)
	}
	slices.Sort(steps)
	typical := steps[len(steps)/2]
	if typical <= 0 {
		return 0, 0, 0, false
	}
	span := s.Points[len(s.Points)-1].T - s.Points[0].T
	return float64(len(s.Points)), math.Round(span/typical) + 1, steps[len(steps)-1], true
}

// ScrapeCoverage is how many of the API server's scheduled scrapes landed,
// and the longest gap between two that did; ok is false when the run did
// not record them.
func ScrapeCoverage(v *result.VariantRun) (landed, scheduled, maxGapSeconds float64, ok bool) {
	m := v.Measurement(apiserver.Name)
	lbl := []string{result.LabelComponent, measure.ComponentAPIServer}
	sched, ok1 := m.Value(apiserver.ScrapesScheduled, "", lbl...)
	n, ok2 := m.Value(apiserver.Scrapes, "", lbl...)
	failed, _ := m.Value(apiserver.ScrapeFailures, "", lbl...)
	gap, ok3 := m.Value(apiserver.ScrapeMaxGap, "", lbl...)
	if !ok1 || !ok2 || !ok3 || sched <= 0 {
		return 0, 0, 0, false
	}
	return n - failed, sched, gap, true
}

func fmtCount(x float64) string { return strconv.FormatInt(int64(math.Round(x)), 10) }

func fmtRate(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }

// fmtSeconds formats seconds as compare.FormatSeconds does, a negative
// figure as 0s.
func fmtSeconds(s float64) string { return compare.FormatSeconds(max(s, 0)) }
