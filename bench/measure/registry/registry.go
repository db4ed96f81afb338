package registry

import (
	"k8s.io/utils/ptr"

	"github.com/stormbench/stormbench/bench/measure"
	"github.com/stormbench/stormbench/bench/measure/apiserver"
	"github.com/stormbench/stormbench/bench/measure/churn"
	"github.com/stormbench/stormbench/bench/measure/clientlatency"
	"github.com/stormbench/stormbench/bench/measure/host"
	"github.com/stormbench/stormbench/bench/measure/recovery"
	"github.com/stormbench/stormbench/bench/measure/self"
	"github.com/stormbench/stormbench/bench/result"
	"github.com/stormbench/stormbench/profiles"
)

// Constructors returns stormbench's measurements by registered name. It is
// built on every call (no package-level registry) so that tests and tools
// can add or replace entries without affecting each other.
func Constructors() map[string]measure.Constructor {
	return map[string]measure.Constructor{
		apiserver.Name: func(cfg profiles.Measurements) (measure.Measurement, error) {
			if cfg.APIServer == nil {
				return nil, nil
			}
			return apiserver.New(apiserver.Options{
				Interval:    cfg.APIServer.Interval.Duration,
				Baseline:    cfg.APIServer.Baseline.Duration,
				MaxInFlight: cfg.APIServer.MaxInFlight,
			})
		},
		clientlatency.Name: func(profiles.Measurements) (measure.Measurement, error) {
			// Always on: recording costs nanoseconds per request.
			return clientlatency.New(clientlatency.Options{}), nil
		},
		host.Name: func(profiles.Measurements) (measure.Measurement, error) {
			// Always on: a figure taken on a saturated machine must say so.
			return host.New(host.Options{}), nil
		},
		churn.Name: func(cfg profiles.Measurements) (measure.Measurement, error) {
			if cfg.EndpointSlices == nil {
				return nil, nil
			}
			return churn.New(churn.Options{Watchers: cfg.EndpointSlices.Watchers})
		},
		recovery.Name: func(cfg profiles.Measurements) (measure.Measurement, error) {
			if cfg.Recovery == nil {
				return nil, nil
			}
			return recovery.New(recovery.Options{PerPod: ptr.Deref(cfg.Recovery.PerPod, true)}), nil
		},
	}
}

// MergeRules returns how result.Merge combines each measurement's figures
// across the shards of a sharded run, by registered name: one entry per
// constructor, plus the storm measurement (Simulator and SelfCost, which
// the run adds to every set). Like
// Constructors it is built on every call.
func MergeRules() result.MergeRules {
	return result.MergeRules{
		apiserver.Name:     apiserver.Merge(),
		clientlatency.Name: clientlatency.Merge(),
		churn.Name:         churn.Merge(),
		host.Name:          host.Merge(),
		recovery.Name:      recovery.Merge(),
		self.Name:          self.Merge(),
	}
}
