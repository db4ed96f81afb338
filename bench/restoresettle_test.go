package bench

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stormbench/stormbench/bench/measure/apiserver"
	"github.com/stormbench/stormbench/profiles"
)

// TestRestoreSettle: the profile's restoreSettle reaches WaitSettled, and
// no rule leaves WaitSettled's defaults (4 windows of 10 s); the scrape
// interval WaitSettled derives from the window (TestSettleDefaults).
func TestRestoreSettle(t *testing.T) {
	sec := func(s int) metav1.Duration { return metav1.Duration{Duration: time.Duration(s) * time.Second} }
	for _, tc := range []struct {
		name string
		m    profiles.Measurements
		want apiserver.SettleOptions
	}{
		{"no apiserver measurement", profiles.Measurements{}, apiserver.SettleOptions{}},
		{"no rule", profiles.Measurements{APIServer: &profiles.APIServerMeasurement{}}, apiserver.SettleOptions{}},
		{"short windows", profiles.Measurements{APIServer: &profiles.APIServerMeasurement{RestoreSettle: &profiles.SettleWindows{Window: sec(4), Windows: 2}}},
			apiserver.SettleOptions{Window: 4 * time.Second, Windows: 2}},
		{"long windows", profiles.Measurements{APIServer: &profiles.APIServerMeasurement{RestoreSettle: &profiles.SettleWindows{Window: sec(20), Windows: 6}}},
			apiserver.SettleOptions{Window: 20 * time.Second, Windows: 6}},
		{"windows alone", profiles.Measurements{APIServer: &profiles.APIServerMeasurement{RestoreSettle: &profiles.SettleWindows{Windows: 3}}},
			apiserver.SettleOptions{Windows: 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := RestoreSettle(&profiles.Profile{Measurements: tc.m}); got != tc.want {
				t.Errorf("RestoreSettle = %+v, want %+v", got, tc.want)
			}
		})
	}
}
