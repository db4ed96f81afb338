package gate

import (
	"strings"
	"testing"
	"time"

	"github.com/stormbench/stormbench/bench/compare"
	"github.com/stormbench/stormbench/bench/result"
)

// recorded is a baseline whose result recorded a profile with gates.
func recorded(name, profileJSON string) compare.Input {
	r := &result.Result{}
	r.Run.Profile = []byte(profileJSON)
	return compare.Input{Name: name, Result: r}
}

func TestRequestResolve(t *testing.T) {
	tenPct := map[string]float64{AllMetrics: 0.10}
	withGates := recorded("base.json", `{"metadata":{"name":"ci"},"gates":{"maxRegression":{"*":"25%"},"mutatingP99":"0s","listP99":"5s"}}`)
	tests := []struct {
		name string
		req  Request
		base compare.Input
		// wantErr is a part of the error; "" for none.
		wantErr string
		// wantRegression, wantMutating, wantList check the options.
		wantRegression float64
		wantMutating   time.Duration
		wantList       time.Duration
		wantSource     string
	}{
		{name: "alpha out of range", req: Request{Alpha: 1}, wantErr: "--alpha 1: must be between 0 and 1"},
		{name: "profile and from-baseline", req: Request{Alpha: 0.05, FromBaseline: true, Baseline: "b.json", Profile: &ThresholdProfile{Source: "profile quick"}}, wantErr: "give one"},
		{name: "from-baseline without a baseline", req: Request{Alpha: 0.05, FromBaseline: true}, wantErr: "--thresholds-from-baseline needs --baseline"},
		{name: "regression without a baseline", req: Request{Alpha: 0.05, Flags: FlagThresholds{MaxRegression: tenPct}}, wantErr: "relative regression thresholds need --baseline"},
		{name: "baseline without regression", req: Request{Alpha: 0.05, Baseline: "results/b.json"}, base: withGates, wantErr: "--baseline results/b.json without regression thresholds would compare nothing"},
		{name: "baseline that recorded no profile", req: Request{Alpha: 0.05, Baseline: "b.json", FromBaseline: true}, base: recorded("b.json", ""), wantErr: "the baseline b.json recorded no profile"},
		{name: "baseline whose profile does not decode", req: Request{Alpha: 0.05, Baseline: "b.json", FromBaseline: true},
			base: recorded("b.json", `{"metadata":{"name":"ci"},"gates":{"maxRegresion":{"*":"25%"}}}`), wantErr: "invalid profile recorded in b.json: 1 error(s):\n  gates.maxRegresion: Invalid value: unknown field"},
		{
			name: "defaults", req: Request{Alpha: 0.05},
			wantMutating: time.Second, wantList: 30 * time.Second,
		},
		{
			name: "the baseline's recorded thresholds; a recorded 0s keeps the default", req: Request{Alpha: 0.05, Baseline: "b.json", FromBaseline: true}, base: withGates,
			wantRegression: 0.25, wantMutating: time.Second, wantList: 5 * time.Second, wantSource: "profile ci recorded in the baseline base.json",
		},
		{
			name: "a flag over the recorded thresholds", req: Request{Alpha: 0.05, Baseline: "b.json", FromBaseline: true, Flags: FlagThresholds{MaxRegression: tenPct}}, base: withGates,
			wantRegression: 0.10, wantMutating: time.Second, wantList: 5 * time.Second, wantSource: "--max-regression",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, err := tc.req.Resolve(tc.base)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Resolve = %v, want an error with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if o.MaxRegression[AllMetrics] != tc.wantRegression || o.MutatingP99 != tc.wantMutating || o.ListP99 != tc.wantList {
				t.Errorf("regression %v, mutating %s, list %s; want %v, %s, %s", o.MaxRegression[AllMetrics], o.MutatingP99, o.ListP99, tc.wantRegression, tc.wantMutating, tc.wantList)
			}
			if o.Alpha != tc.req.Alpha {
				t.Errorf("alpha %v, want %v", o.Alpha, tc.req.Alpha)
			}
			if tc.wantSource != "" {
				found := false
				for _, s := range o.Sources {
					found = found || (strings.HasPrefix(s.Threshold, "maxRegression") && s.Source == tc.wantSource)
				}
				if !found {
					t.Errorf("no regression threshold from %q in %+v", tc.wantSource, o.Sources)
				}
			}
		})
	}
}
