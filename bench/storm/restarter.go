package storm

import "context"

// Restarter carries out one scheduled restart of a node: the simulated
// kubelet (kubelet.Simulator) or a real one (the run's real kubelet
// nodes). It returns the restart's typed result, its failure included
// (Outcome.Err).
type Restarter interface {
	Restart(ctx context.Context, r Restart) Outcome
}

// RestarterFunc is a function as a Restarter.
type RestarterFunc func(ctx context.Context, r Restart) Outcome

// Restart calls f.
func (f RestarterFunc) Restart(ctx context.Context, r Restart) Outcome { return f(ctx, r) }

// ByNode is the one driver of a storm whose nodes are simulated and real:
// each restart goes to real when isReal says its node has a real kubelet,
// to simulated otherwise.
func ByNode(isReal func(node string) bool, real, simulated Restarter) Restarter {
	return RestarterFunc(func(ctx context.Context, r Restart) Outcome {
		if isReal(r.Node) {
			return real.Restart(ctx, r)
		}
		return simulated.Restart(ctx, r)
	})
}
