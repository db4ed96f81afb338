package registry

import (
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stormbench/stormbench/bench/measure"
	"github.com/stormbench/stormbench/bench/measure/apiserver"
	"github.com/stormbench/stormbench/bench/measure/churn"
	"github.com/stormbench/stormbench/bench/measure/clientlatency"
	"github.com/stormbench/stormbench/bench/measure/host"
	"github.com/stormbench/stormbench/bench/measure/recovery"
	"github.com/stormbench/stormbench/profiles"
)

func TestNewSetFromProfile(t *testing.T) {
	tests := []struct {
		name    string
		cfg     profiles.Measurements
		want    []string
		wantErr string
	}{
		{"none: client latency and host are always on", profiles.Measurements{}, []string{clientlatency.Name, host.Name}, ""},
		{"all", profiles.Measurements{
			APIServer:      &profiles.APIServerMeasurement{Interval: metav1.Duration{Duration: 2 * time.Second}},
			EndpointSlices: &profiles.EndpointSliceMeasurement{Watchers: 3},
			Recovery:       &profiles.RecoveryMeasurement{},
		}, []string{apiserver.Name, clientlatency.Name, churn.Name, host.Name, recovery.Name}, ""},
		{"invalid options fail before the run", profiles.Measurements{
			APIServer:      &profiles.APIServerMeasurement{Interval: metav1.Duration{Duration: -time.Second}},
			EndpointSlices: &profiles.EndpointSliceMeasurement{Watchers: -1},
		}, nil, "measurement apiserver: interval -1s must be positive\nmeasurement endpointSlices: watchers -1 must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := measure.NewSetFrom(Constructors(), tt.cfg)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("NewSet error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, m := range s.Measurements() {
				names = append(names, m.Name())
			}
			if !slices.Equal(names, tt.want) {
				t.Errorf("measurements = %v, want %v", names, tt.want)
			}
			if measure.Get[*clientlatency.Recorder](s) == nil {
				t.Error("no ClientLatency in the set")
			}
		})
	}
}
