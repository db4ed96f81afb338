package kubelet

// This file holds the executor: it plays a restart's plan (plan.go) on the
// kubelet's session, sleeping on the simulator's clock until each step is
// due and sending it with the session's retries.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stormbench/stormbench/bench/kubelet/plan"
	"github.com/stormbench/stormbench/bench/poll"
)

// play plays the plan steps from start: each actor's steps in order (the pods
// actor's as they fall due), each at its mark plus its At, the actors side
// by side. A step that runs late delays the later steps of its actor, as
// the kubelet's loop would be. node is the kubelet's node (its events'
// object). done, when set, is called as each actor finishes its steps
// without error (at once for an actor with none), from the actor's
// goroutine. An error of the node's actor cancels the others (the kubelet
// failed); a pod write's error is returned when its actor is done.
// Its events go to the session's event sender, which sends them on the
// restart's context (session.recordEvent), not on play's.
func (n *nodeRun) play(ctx context.Context, node *corev1.Node, start time.Time, steps plan.Plan, done func(plan.Actor)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	n.marks = newMarks(start)
	byActor := map[plan.Actor]plan.Plan{}
	for _, st := range steps {
		byActor[st.Actor] = append(byActor[st.Actor], st)
	}
	errs := make([]error, len(plan.Actors))
	var wg sync.WaitGroup
	for i, a := range plan.Actors {
		wg.Go(func() {
			if errs[i] = n.playActor(ctx, node, start, byActor[a]); errs[i] != nil {
				if a == plan.ActorNode {
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
	if errs[plan.ActorNode] != nil && errors.Is(errs[plan.ActorPods], context.Canceled) {
		// The pods actor was stopped by the node actor's failure: that
		// failure is the play's.
		return errs[plan.ActorNode]
	}
	return errors.Join(errs...)
}

// playActor plays one actor's steps, each once its mark is reached and
// its time has come. The pods actor takes its steps as they fall due
// (dueOrder). A run of pod statuses due one after another goes to the
// status manager's batches (statusManager.batch) as one. A pod write that
// fails does not stop the others: the first such error is returned at
// the end.
func (n *nodeRun) playActor(ctx context.Context, node *corev1.Node, start time.Time, steps plan.Plan) error {
	clk := n.s.cfg.Clock
	if len(steps) > 0 && steps[0].Actor == plan.ActorPods {
		var err error
		if steps, err = n.dueOrder(ctx, start, steps); err != nil {
			return fmt.Errorf("kubelet %s: waiting for its first syncs: %w", n.sess.node, err)
		}
	}
	// series holds the name of each pod event series' first event, for
	// the correlator's PATCHes of its repeats.
	series := map[string]string{}
	var podErr error
	for i := 0; i < len(steps); i++ {
		st := steps[i]
		if st.Action == plan.ActionPodStatus {
			var updates []plan.StatusUpdate
			for ; i < len(steps) && steps[i].Action == plan.ActionPodStatus; i++ {
				updates = append(updates, *steps[i].Update)
			}
			i--
			apply := func(u plan.StatusUpdate, ps *corev1.PodStatus, now metav1.Time) bool {
				return n.applyUpdate(node, u, ps, now)
			}
			podErr = cmp.Or(podErr, n.status.batch(ctx, start, updates, apply, n.updateEvents))
			continue
		}
		if st.Action == plan.ActionPodProbe && n.firstSyncs[st.Namespace+"/"+st.Name] == (firstSyncOutcome{}) {
			// Its first sync left it nothing to write.
			continue
		}
		at, err := n.marks.due(ctx, st)
		if err != nil {
			return fmt.Errorf("kubelet %s: waiting for %s: %w", n.sess.node, st.From, err)
		}
		if err := poll.SleepUntil(ctx, clk, at); err != nil {
			return fmt.Errorf("kubelet %s: waiting for its %s step at %v: %w", n.sess.node, st.Actor, st.At, err)
		}
		switch st.Action {
		case plan.ActionPodStartup, plan.ActionPodProbe:
			podErr = cmp.Or(podErr, n.writePod(ctx, at, st))
			continue
		case plan.ActionPodTerminal, plan.ActionPodDelete:
			podErr = cmp.Or(podErr, n.endPod(ctx, st))
			continue
		}
		if err := n.do(ctx, node, st, series); err != nil {
			return err
		}
	}
	return podErr
}

// writePod writes one pod step, due at at, through the status manager.
func (n *nodeRun) writePod(ctx context.Context, at time.Time, st plan.Step) error {
	if st.Action == plan.ActionPodStartup {
		step := plan.StatusStep{At: st.At, Container: st.Container, Started: st.Started, Ready: st.Ready, SetStarted: st.SetStarted}
		return n.status.write(ctx, st.Namespace, st.Name, func(ps *corev1.PodStatus, now metav1.Time) bool {
			return ps.Phase == corev1.PodRunning && applyStatusStep(ps, step, now)
		})
	}
	if n.firstSyncs[st.Namespace+"/"+st.Name].flip {
		return n.flip(ctx, at, st)
	}
	return n.status.write(ctx, st.Namespace, st.Name, probeSuccess)
}

// do sends one step of the node's actor, or a pod event.
func (n *nodeRun) do(ctx context.Context, node *corev1.Node, st plan.Step, series map[string]string) error {
	sess := n.sess
	switch st.Action {
	case plan.ActionNodeStatus:
		if st.RuntimeVersion != "" {
			sess.newRuntimeVersion = st.RuntimeVersion
		}
		return sess.patchNodeReady(ctx, st.Ready, st.Reason, st.Message)
	case plan.ActionNodeEvent:
		sess.event(st.EventType, st.Reason, st.Message)
		return nil
	case plan.ActionPodEvent:
		name := sess.podEvent(st.Pod, st.Container, series[st.Series], st.Count, st.EventType, st.Reason, st.Message)
		if st.Series != "" {
			series[st.Series] = name
		}
		return nil
	case plan.ActionCSINode:
		return sess.csiNode(ctx, node.UID)
	case plan.ActionResourceSliceWipe:
		sess.wipeResourceSlices(ctx)
		return nil
	case plan.ActionWait:
		return nil
	case plan.ActionObjectWatches:
		watches, err := sess.watchPodObjects(ctx, st.Pods)
		if err != nil {
			return err
		}
		n.s.Counters.ObjectWatches.Add(int64(watches))
		return nil
	case plan.ActionTokens:
		tokens, err := sess.requestTokens(ctx, st.Pods)
		n.s.Counters.TokenRequests.Add(int64(tokens))
		return err
	case plan.ActionPodsSynced:
		n.s.recorder(n.r).Synced(len(st.Pods))
		if n.s.cfg.CloseWatchesAfterSync {
			sess.stopWatches()
		}
		return nil
	case plan.ActionPodIPs:
		sess.reservePodIPs(node)
		return nil
	case plan.ActionMark:
		n.marks.reach(markKey{mark: st.Mark}, n.s.cfg.Clock.Now())
		return nil
	case plan.ActionPodReject:
		return n.rejectPod(ctx, st.Pod, st.Reason, st.Message)
	case plan.ActionPodFirstSync:
		began, err := n.marks.at(ctx, markKey{mark: plan.MarkPodSync})
		if err != nil {
			return err
		}
		return n.firstSync(ctx, node, st, metav1.NewTime(began))
	case plan.ActionPodObservedGeneration:
		_, err := n.status.sync(ctx, st.Pod.Namespace, st.Pod.Name, observedGeneration(st.Pod.Generation))
		return err
	}
	return fmt.Errorf("kubelet %s: step %v: no such action", sess.node, st.Action)
}

// dueOrder waits until every mark steps (the pods actor's) count from is
// reached and returns them as they fall due, each At an offset from start,
// steps due together in plan order: the status manager is one goroutine,
// so a probe's write does not wait for a status handed over after it
// (status_manager.go syncBatch takes what is cached when it runs). An
// ActionPodDelete is due at the end of the PLEG's first relist after its
// At (nextRelist).
func (n *nodeRun) dueOrder(ctx context.Context, start time.Time, steps plan.Plan) (plan.Plan, error) {
	out := slices.Clone(steps)
	for i := range out {
		st := &out[i]
		at, err := n.marks.due(ctx, *st)
		if err != nil {
			return nil, err
		}
		if st.Action == plan.ActionPodDelete {
			at = plan.NextRelist(n.sess.started, at)
		}
		st.At, st.From = at.Sub(start), plan.MarkPlan
		if st.Update != nil {
			u := *st.Update
			u.At = st.At
			st.Update = &u
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At < out[j].At })
	return out, nil
}

// markKey is a mark a plan reaches, and the pod it is of (MarkPodSynced).
type markKey struct {
	mark plan.Mark
	pod  string
}

// marks are the marks a plan in play has reached, and when; a step that
// counts from one waits for it.
type marks struct {
	mu      sync.Mutex
	reached map[markKey]time.Time
	waiting map[markKey]chan struct{}
}

// newMarks are the marks of a plan that starts at start (MarkPlan).
func newMarks(start time.Time) *marks {
	return &marks{reached: map[markKey]time.Time{{mark: plan.MarkPlan}: start}, waiting: map[markKey]chan struct{}{}}
}

// reach records that k was reached at t.
func (m *marks) reach(k markKey, t time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reached[k] = t
	if ch, ok := m.waiting[k]; ok {
		close(ch)
		delete(m.waiting, k)
	}
}

// at is when k was reached, once it is.
func (m *marks) at(ctx context.Context, k markKey) (time.Time, error) {
	m.mu.Lock()
	if t, ok := m.reached[k]; ok {
		m.mu.Unlock()
		return t, nil
	}
	ch, ok := m.waiting[k]
	if !ok {
		ch = make(chan struct{})
		m.waiting[k] = ch
	}
	m.mu.Unlock()
	select {
	case <-ch:
		return m.at(ctx, k)
	case <-ctx.Done():
		return time.Time{}, ctx.Err()
	}
}

// due is when st is due: its mark's time plus its At.
func (m *marks) due(ctx context.Context, st plan.Step) (time.Time, error) {
	k := markKey{mark: st.From}
	if st.From == plan.MarkPodSynced {
		k.pod = st.Namespace + "/" + st.Name
	}
	t, err := m.at(ctx, k)
	return t.Add(st.At), err
}
