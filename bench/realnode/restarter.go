package realnode

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/stormbench/stormbench/bench/storm"
)

// Restarter carries out a storm's restarts on real nodes, for a run and a
// calibration alike (a storm.Restarter beside the simulator's): it marks
// Down, restarts the node (Runner.Restart), marks KubeletStart and, when
// Recover is set, waits for the node's recovery, which marks the steps it
// reaches. A failed restart carries the kubelet's log.
type Restarter struct {
	// Node finds a real node by name: nil for one this process did not
	// start.
	Node func(name string) Runner
	// Kind and RuntimeMode are the storm's (profiles.Storm).
	Kind, RuntimeMode string
	// Gates are the restarted kubelet's feature gates, those its release
	// has (kubeversion.Version.KubeletGates).
	Gates map[string]bool
	// Now times the outcome's steps.
	Now func() time.Time
	// Recover, when set, waits for the node's recovery after its kubelet
	// came back at back.
	Recover func(ctx context.Context, n Runner, r storm.Restart, back time.Time, rec *storm.Recorder) error
}

var _ storm.Restarter = Restarter{}

// Restart restarts r's node and returns its outcome.
func (x Restarter) Restart(ctx context.Context, r storm.Restart) storm.Outcome {
	rec := storm.NewRecorder(r, x.Kind, true, x.Now)
	n := x.Node(r.Node)
	if n == nil {
		return rec.Outcome(errors.New("real node not started by this process"))
	}
	rec.Mark(storm.StepDown)
	back, err := n.Restart(ctx, x.Kind, x.RuntimeMode, r.Downtime, x.Gates)
	if err == nil {
		rec.Mark(storm.StepKubeletStart)
		if x.Recover != nil {
			err = x.Recover(ctx, n, r, back, rec)
		}
	}
	if err != nil {
		return rec.Outcome(fmt.Errorf("real node: %w (kubelet log: %s)", err, n.KubeletLog()))
	}
	return rec.Outcome(nil)
}
