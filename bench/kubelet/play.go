package kubelet

// This file holds the executor: it plays a restart's plan (plan.go) on the
// kubelet's session, sleeping on the simulator's clock until each step is
// due and sending it with the session's retries.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stormbench/stormbench/bench/poll"
)

// play plays plan from start: each actor's steps in order, the actors side
// by side. A step that runs late delays the later steps of its actor, as
// the kubelet's loop would be. node is the kubelet's node (its events'
// object). done, when set, is called as each actor finishes its steps
// without error (at once for an actor with none), from the actor's
// goroutine. An error of the node's actor cancels the others (the kubelet
// failed); a pod write's error is returned when its actor is done.
// Its events go to the session's event sender, which sends them on the
// restart's context (session.recordEvent), not on play's.
func (n *nodeRun) play(ctx context.Context, node *corev1.Node, start time.Time, plan Plan, done func(Actor)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	byActor := map[Actor]Plan{}
	for _, st := range plan {
		byActor[st.Actor] = append(byActor[st.Actor], st)
	}
	errs := make([]error, len(actors))
	var wg sync.WaitGroup
	for i, a := range actors {
		wg.Go(func() {
			if errs[i] = n.playActor(ctx, node, start, byActor[a]); errs[i] != nil {
				if a == ActorNode {
					cancel()
				}
				return
			}
			if done != nil {
				done(a)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// playActor plays one actor's steps. A run of pod statuses goes to the
// status manager's batches (statusManager.batch) as one. A pod write that fails
// does not stop the others: the first such error is returned at the end.
func (n *nodeRun) playActor(ctx context.Context, node *corev1.Node, start time.Time, steps Plan) error {
	clk := n.s.cfg.Clock
	// series holds the name of each pod event series' first event, for
	// the correlator's PATCHes of its repeats.
	series := map[string]string{}
	var podErr error
	for i := 0; i < len(steps); i++ {
		st := steps[i]
		if st.Action == ActionPodStatus {
			var updates []statusUpdate
			for ; i < len(steps) && steps[i].Action == ActionPodStatus; i++ {
				updates = append(updates, *steps[i].Update)
			}
			i--
			apply := func(u statusUpdate, ps *corev1.PodStatus, now metav1.Time) bool {
				return n.applyUpdate(node, u, ps, now)
			}
			podErr = cmp.Or(podErr, n.status.batch(ctx, start, updates, apply, n.updateEvents))
			continue
		}
		if err := poll.Sleep(ctx, clk, st.At-clk.Since(start)); err != nil {
			return fmt.Errorf("kubelet %s: waiting for its %s step at %v: %w", n.sess.node, st.Actor, st.At, err)
		}
		switch st.Action {
		case ActionPodStartup, ActionPodReady, ActionPodFlip:
			podErr = cmp.Or(podErr, n.writePod(ctx, start, st))
			continue
		case ActionPodTerminal, ActionPodDelete:
			podErr = cmp.Or(podErr, n.endPod(ctx, st))
			continue
		}
		if err := n.do(ctx, node, st, series); err != nil {
			return err
		}
	}
	return podErr
}

// writePod writes one pod step through the status manager.
func (n *nodeRun) writePod(ctx context.Context, start time.Time, st Step) error {
	switch st.Action {
	case ActionPodStartup:
		step := statusStep{at: st.At, container: st.Container, started: st.Started, ready: st.Ready, setStarted: st.SetStarted}
		return n.status.write(ctx, st.Namespace, st.Name, func(ps *corev1.PodStatus, now metav1.Time) bool {
			return ps.Phase == corev1.PodRunning && applyStatusStep(ps, step, now)
		})
	case ActionPodFlip:
		return n.flip(ctx, start, st)
	default:
		return n.status.write(ctx, st.Namespace, st.Name, probeSuccess)
	}
}

// do sends one step of the node's actor, or a pod event.
func (n *nodeRun) do(ctx context.Context, node *corev1.Node, st Step, series map[string]string) error {
	sess := n.sess
	switch st.Action {
	case ActionNodeStatus:
		if st.RuntimeVersion != "" {
			sess.newRuntimeVersion = st.RuntimeVersion
		}
		return sess.patchNodeReady(ctx, st.Ready, st.Reason, st.Message)
	case ActionNodeEvent:
		return sess.event(node.UID, st.EventType, st.Reason, st.Message)
	case ActionPodEvent:
		name, err := sess.podEvent(st.Pod, st.Container, series[st.Series], st.Count, st.EventType, st.Reason, st.Message)
		if err != nil {
			return err
		}
		series[st.Series] = name
		return nil
	case ActionCSINode:
		return sess.csiNode(ctx, node.UID)
	case ActionResourceSliceWipe:
		sess.wipeResourceSlices(ctx)
		return nil
	case ActionWait:
		return nil
	}
	return fmt.Errorf("kubelet %s: step %v: no such action", sess.node, st.Action)
}
