// Package reachfile is the file scripts/reach writes (results/host/reach.json)
// and scripts/figures describes: one owner for its format.
package reachfile

import (
	"time"

	"github.com/stormbench/stormbench/bench/result"
)

// Kind marks a reach file among the results.
const Kind = "ReachResult"

// Trial is one size tried.
type Trial struct {
	Nodes int `json:"nodes"`
	Pods  int `json:"pods"`
	// Passed: the run exited 0, every storm completed without errors and
	// none was host-bound. Why says what failed otherwise.
	Passed bool   `json:"passed"`
	Why    string `json:"why,omitempty"`
	// HostSaturated is the largest share of a storm's window the host was
	// at least 90 % busy (host.SaturatedFraction).
	HostSaturated float64 `json:"hostSaturated"`
	// Figures are the storm's figures by compare's metric ID (fleet
	// recovered, kube-apiserver CPU, stormbench's standing and marginal
	// CPU), the largest over the storms; a figure the run did not measure
	// is absent.
	Figures map[string]float64 `json:"figures,omitempty"`
	// Seconds is the run's wall time, provisioning included.
	Seconds float64 `json:"seconds"`
}

// Reach is the search's outcome, the file scripts/reach writes.
type Reach struct {
	// Kind is Kind, for the results catalogue (scripts/figures).
	Kind string `json:"kind"`
	// Tool is the stormbench revision of the runs; Start when the first
	// began.
	Tool    string          `json:"tool"`
	Start   time.Time       `json:"start"`
	Profile string          `json:"profile"`
	Machine *result.Machine `json:"machine"`
	// Min, Max and Resolution are the search's bounds (-min, -max,
	// -resolution): the answer is within Resolution of the truth, and a
	// fleet larger than Max was not tried.
	Min        int     `json:"min"`
	Max        int     `json:"max"`
	Resolution float64 `json:"resolution"`
	// Largest is the largest size that passed, 0 when none did; Smallest
	// Failed the smallest that failed, 0 when none did (-max passed).
	Largest        int     `json:"largest"`
	SmallestFailed int     `json:"smallestFailed,omitempty"`
	Trials         []Trial `json:"trials"`
}
