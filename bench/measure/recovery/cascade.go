package recovery

import (
	"sync"
	"time"

	"github.com/stormbench/stormbench/bench/result"
	"github.com/stormbench/stormbench/bench/storm"
)

// LeaseTracker records the node-lease renewals of the fleet, so that a
// storm's collateral damage shows: the healthy nodes, the ones the storm
// did not restart, whose heartbeats came late because the API server was
// overloaded. It is the first step of the restart-storm cascade (late
// renewals, then healthy nodes NotReady, then their pods not ready; the
// last two are the recovery measurement's unattributed node and pod
// counts).
//
// A renewal is late when it comes more than 1.5 renew intervals after the
// previous one; the renew interval is a quarter of the lease's duration
// (kubelet's renewIntervalFraction 0.25, pkg/kubelet/kubelet.go; KWOK's
// lease controller uses the same fraction). A gap longer than the lease
// duration let the lease expire.
type LeaseTracker struct {
	mu    sync.Mutex
	nodes map[string]*leaseState
}

type leaseState struct {
	duration time.Duration
	last     time.Time // the latest renewTime seen
	gaps     []leaseGap
}

type leaseGap struct {
	end time.Time // the renewal that closed the gap
	gap time.Duration
}

// NewLeaseTracker returns an empty tracker.
func NewLeaseTracker() *LeaseTracker { return &LeaseTracker{nodes: map[string]*leaseState{}} }

// Observe records a lease as a watch saw it: the node it belongs to, its
// spec.leaseDurationSeconds and spec.renewTime.
func (t *LeaseTracker) Observe(node string, duration time.Duration, renew time.Time) {
	if renew.IsZero() {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.nodes[node]
	if s == nil {
		t.nodes[node] = &leaseState{duration: duration, last: renew}
		return
	}
	s.duration = duration
	if renew.After(s.last) {
		s.gaps = append(s.gaps, leaseGap{end: renew, gap: renew.Sub(s.last)})
		s.last = renew
	}
}

// LeaseFigures are the renewal figures of the healthy nodes.
type LeaseFigures struct {
	// Nodes is how many healthy nodes' leases were watched.
	Nodes int
	// Renewals counts their renewals in the window.
	Renewals int
	// Late counts renewals (or, at the end, leases not yet renewed) more
	// than 1.5 renew intervals after the previous renewal.
	Late int
	// Expired counts gaps longer than the lease duration.
	Expired int
	// LateNodes counts healthy nodes with at least one late renewal.
	LateNodes int
	// MaxGap is the longest gap between renewals.
	MaxGap time.Duration
}

// Compute returns the figures of the nodes that no outcome restarted, for
// the renewals after from; a lease not renewed by end counts as a gap up
// to end.
func (t *LeaseTracker) Compute(outcomes []storm.Outcome, from, end time.Time) LeaseFigures {
	restarted := map[string]bool{}
	for i := range outcomes {
		if outcomes[i].Restarted() {
			restarted[outcomes[i].Node] = true
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	var f LeaseFigures
	for node, s := range t.nodes {
		if restarted[node] {
			continue
		}
		f.Nodes++
		late := func(gap time.Duration) bool { return s.duration > 0 && gap > s.duration*3/8 }
		lateNode := false
		count := func(gap time.Duration) {
			f.MaxGap = max(f.MaxGap, gap)
			if late(gap) {
				f.Late++
				lateNode = true
			}
			if s.duration > 0 && gap > s.duration {
				f.Expired++
			}
		}
		for _, g := range s.gaps {
			if g.end.After(from) {
				f.Renewals++
				count(g.gap)
			}
		}
		if open := end.Sub(s.last); end.After(from) && late(open) {
			count(open)
		}
		if lateNode {
			f.LateNodes++
		}
	}
	return f
}

// values turns the figures into result values of the storm window.
func (f LeaseFigures) values() []result.Value {
	v := func(name, unit string, x float64) result.Value {
		return result.Value{Name: name, Window: result.WindowStorm, Unit: unit, Value: x}
	}
	return []result.Value{
		v(HealthyLeaseNodes, result.UnitCount, float64(f.Nodes)),
		v(HealthyLeaseRenewals, result.UnitCount, float64(f.Renewals)),
		v(HealthyLeaseLate, result.UnitCount, float64(f.Late)),
		v(HealthyLeaseLateNodes, result.UnitCount, float64(f.LateNodes)),
		v(HealthyLeaseExpired, result.UnitCount, float64(f.Expired)),
		v(HealthyLeaseMaxGap, result.UnitSeconds, f.MaxGap.Seconds()),
	}
}
