package kubelet

// This file holds the executor: it plays a restart's plan (plan.go) on the
// kubelet's session, sleeping on the simulator's clock until each step is
// due and sending it with the session's retries.

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/stormbench/stormbench/bench/poll"
)

// play plays plan from start, each step once its offset has passed, in the
// plan's order. A step that runs late delays the ones after it, as the
// kubelet's own loops would be. node is the kubelet's node (its events'
// object).
func (n *nodeRun) play(ctx context.Context, node *corev1.Node, start time.Time, plan Plan) error {
	clk := n.s.cfg.Clock
	// series holds the name of each pod event series' first event, for
	// the correlator's PATCHes of its repeats.
	series := map[string]string{}
	for _, st := range plan {
		if err := poll.Sleep(ctx, clk, st.At-clk.Since(start)); err != nil {
			return err
		}
		if err := n.do(ctx, node, st, series); err != nil {
			return err
		}
	}
	return nil
}

// do sends one step.
func (n *nodeRun) do(ctx context.Context, node *corev1.Node, st Step, series map[string]string) error {
	sess := n.sess
	switch st.Action {
	case ActionNodeStatus:
		if st.RuntimeVersion != "" {
			sess.newRuntimeVersion = st.RuntimeVersion
		}
		return sess.patchNodeReady(ctx, st.Ready, st.Reason, st.Message)
	case ActionNodeEvent:
		return sess.event(ctx, node.UID, st.EventType, st.Reason, st.Message)
	case ActionPodEvent:
		name, err := sess.podEvent(ctx, st.Pod, st.Container, series[st.Series], st.Count, st.EventType, st.Reason, st.Message)
		if err != nil {
			return err
		}
		series[st.Series] = name
		return nil
	case ActionWait:
		return nil
	}
	return fmt.Errorf("kubelet %s: step %v: no such action", sess.node, st.Action)
}
