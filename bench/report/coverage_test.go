package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stormbench/stormbench/bench/compare"
	"github.com/stormbench/stormbench/bench/measure"
	"github.com/stormbench/stormbench/bench/measure/apiserver"
	"github.com/stormbench/stormbench/bench/result"
)

// withScrapes sets the API server's scrape counters of every variant run.
func withScrapes(r *result.Result, scheduled, scrapes, failures, maxGap float64) {
	lbl := result.Labels(result.LabelComponent, measure.ComponentAPIServer)
	for i := range r.Variants {
		for j := range r.Variants[i].Measurements {
			m := &r.Variants[i].Measurements[j]
			if m.Name != apiserver.Name {
				continue
			}
			m.Values = append(m.Values,
				result.Value{Name: apiserver.ScrapesScheduled, Labels: lbl, Unit: result.UnitCount, Value: scheduled},
				result.Value{Name: apiserver.Scrapes, Labels: lbl, Unit: result.UnitCount, Value: scrapes},
				result.Value{Name: apiserver.ScrapeFailures, Labels: lbl, Unit: result.UnitCount, Value: failures},
				result.Value{Name: apiserver.ScrapeMaxGap, Labels: lbl, Unit: result.UnitSeconds, Value: maxGap})
		}
	}
}

// TestLowScrapeCoverage: the key figures of a repetition whose scrapes
// mostly failed say so, in the report (HTML and markdown, with the key
// metrics) and in the run's summary; a run at or above the threshold, or
// one that did not record its scrapes, carries no warning.
func TestLowScrapeCoverage(t *testing.T) {
	for _, c := range []struct {
		name                       string
		scheduled, scrapes, failed float64
		record                     bool
		gappySeries                bool
		wantWarning                bool
		wantText                   string
	}{
		{"mostly failed", 600, 600, 480, true, false, true, "120 of 600 scheduled kube-apiserver scrapes landed (20%, below 80%), longest gap 1m35s"},
		{"just below", 100, 79, 0, true, false, true, "79 of 100"},
		{"at the threshold", 100, 80, 0, true, false, false, ""},
		{"all landed", 100, 100, 0, true, false, false, ""},
		{"not recorded", 0, 0, 0, false, false, false, ""},
		{"not recorded, series with gaps", 0, 0, 0, false, true, true, "the API request rate has points at 31 of about 101 scrape times (31%, below 80%), longest gap 1m11s"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := synthetic(t, "cov", map[string][]float64{"a": {1}}, "a")
			if c.record {
				withScrapes(r, c.scheduled, c.scrapes, c.failed, 95)
			}
			if c.gappySeries {
				// 0..30 s every second, then one point at 100 s.
				var pts []result.Point
				for i := range 30 {
					pts = append(pts, result.Point{T: float64(i), V: 10})
				}
				pts = append(pts, result.Point{T: 100, V: 10})
				api := &r.Variants[0].Measurements[0]
				api.Series = append(api.Series, result.Series{Name: apiserver.SeriesRequestRate, Unit: result.UnitRequestsPerSecond, Start: r.Variants[0].Start, Points: pts})
			}
			rep, err := Build(compare.Input{Name: "cov.json", Result: r}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var page, md, sum bytes.Buffer
			if err := WriteHTML(&page, rep); err != nil {
				t.Fatal(err)
			}
			if err := WriteMarkdown(&md, rep); err != nil {
				t.Fatal(err)
			}
			if err := WriteSummary(&sum, r); err != nil {
				t.Fatal(err)
			}
			for name, out := range map[string]string{"html": page.String(), "markdown": md.String(), "summary": sum.String()} {
				has := strings.Contains(out, "low scrape coverage")
				if has != c.wantWarning {
					t.Errorf("%s: low-coverage warning %t, want %t:\n%s", name, has, c.wantWarning, out)
				}
				if c.wantText != "" && !strings.Contains(out, c.wantText) {
					t.Errorf("%s lacks %q:\n%s", name, c.wantText, out)
				}
			}
			if c.wantWarning {
				// With the key metrics: before the table, not at the page's end.
				if i, j := strings.Index(page.String(), "low scrape coverage"), strings.Index(page.String(), `<table class="compare">`); i < 0 || j < 0 || i > j {
					t.Errorf("the warning is not above the key-metrics table")
				}
			}
		})
	}
}
