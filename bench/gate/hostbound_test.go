package gate

import (
	"strings"
	"testing"
	"time"

	"github.com/stormbench/stormbench/bench/compare"
	"github.com/stormbench/stormbench/bench/measure/host"
	"github.com/stormbench/stormbench/bench/result"
)

// withHost gives a variant run host figures: a 100 s storm saturated for
// sat seconds, flagged as the run would.
func withHost(v *result.VariantRun, sat float64) {
	start := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	v.Measurements = append(v.Measurements, result.Measurement{Name: host.Name,
		Windows: []result.Window{{Name: result.WindowStorm, Start: start, End: start.Add(100 * time.Second)}},
		Values: []result.Value{
			{Name: host.SaturatedSeconds, Window: result.WindowStorm, Unit: result.UnitSeconds, Value: sat},
			{Name: host.SaturatedFraction, Window: result.WindowStorm, Unit: result.UnitRatio, Value: sat / 100},
		}})
	v.HostBound = host.Bound(v)
}

func TestCheckHostBound(t *testing.T) {
	for _, tc := range []struct {
		name       string
		saturated  []float64 // per repetition; nil: no host figures
		allow      bool
		want       Status
		wantDetail string
	}{
		{name: "idle host", saturated: []float64{0, 3}, want: Pass, wantDetail: "worst repetition 3% saturated"},
		{name: "exactly 10 %", saturated: []float64{10}, want: Pass},
		{name: "one repetition host-bound", saturated: []float64{2, 38}, want: Fail, wantDetail: "host-bound: #1: the host was at least 90 % busy for 38 s of the 100 s storm window (38 %, more than 10 %)"},
		{name: "allowed", saturated: []float64{38}, allow: true, want: Skip, wantDetail: "allowed by --allow-host-bound"},
		{name: "old result: no host gate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reps := tc.saturated
			if reps == nil {
				reps = []float64{0}
			}
			r := synthetic(t, "cur", map[string][]float64{"legacy": reps}, "legacy")
			if tc.saturated != nil {
				for i := range r.Variants {
					withHost(&r.Variants[i], tc.saturated[i])
				}
			}
			cur := compare.Input{Name: "cur.json", Result: r}
			rep, err := Evaluate(compare.Input{}, cur, Options{})
			if err != nil {
				t.Fatal(err)
			}
			failed, n := rep.Failed, len(rep.Results)
			CheckHostBound(rep, cur, tc.allow)
			if tc.saturated == nil {
				if len(rep.Results) != n {
					t.Fatalf("a host gate without host figures: %+v", rep.Results[n:])
				}
				return
			}
			g := rep.Results[len(rep.Results)-1]
			if g.Kind != KindHost || g.Variant != "legacy" || g.Status != tc.want || !strings.Contains(g.Detail, tc.wantDetail) {
				t.Fatalf("host gate = %+v, want %s with %q", g, tc.want, tc.wantDetail)
			}
			if wantFailed := failed + map[bool]int{true: 1}[tc.want == Fail]; rep.Failed != wantFailed || rep.OK() != (wantFailed == 0) {
				t.Errorf("failed = %d, want %d", rep.Failed, wantFailed)
			}
			if tc.want == Fail && !strings.Contains(FailureSummary(rep), "legacy host not saturated") {
				t.Errorf("failure summary %q does not name the host gate", FailureSummary(rep))
			}
		})
	}
}
