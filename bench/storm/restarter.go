package storm

import "context"

// Restarter carries out one scheduled restart of a node: the simulated
// kubelet (kubelet.Simulator) or a real one (the run's real kubelet
// nodes). It records what happened in the run's event log, an Error event
// included when it fails, and returns the failure.
type Restarter interface {
	Restart(ctx context.Context, r Restart) error
}

// RestarterFunc is a function as a Restarter.
type RestarterFunc func(ctx context.Context, r Restart) error

// Restart calls f.
func (f RestarterFunc) Restart(ctx context.Context, r Restart) error { return f(ctx, r) }

// ByNode is the one driver of a storm whose nodes are simulated and real:
// each restart goes to real when isReal says its node has a real kubelet,
// to simulated otherwise.
func ByNode(isReal func(node string) bool, real, simulated Restarter) Restarter {
	return RestarterFunc(func(ctx context.Context, r Restart) error {
		if isReal(r.Node) {
			return real.Restart(ctx, r)
		}
		return simulated.Restart(ctx, r)
	})
}
