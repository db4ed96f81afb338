package kubelet

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	"github.com/stormbench/stormbench/bench/kubelet/plan"
	"github.com/stormbench/stormbench/bench/poll"
)

// statusManager is a simulated kubelet's status manager
// (pkg/kubelet/status/status_manager.go): the one goroutine through which
// every pod status of a restart goes to the API server. Each write is a
// sync of one pod (syncPod: GET, merge, PATCH when the status changed,
// session.syncPodStatus), and its PATCHes are counted here, once
// (Counters.PodStatusPatches). It coalesces as syncBatch does, writing a
// pod's latest cached status, in two places:
//   - batch: the updates handed over while it was busy with other pods go
//     out as one write per pod (Counters.StatusUpdatesCoalesced);
//   - a legacy flip whose Failure and Success were both handed over while
//     it was busy (busyAt) goes out as one write (nodeRun.flip,
//     Counters.ReadyFlipsCoalesced).
//
// The two are one mechanism in the kubelet; see the package doc for why
// they are two here.
type statusManager struct {
	sess     *session
	counters *Counters
	clk      clock.Clock
}

// sync is one syncPod of a pod: GET, mutate the status, PATCH it when it
// changed. It counts the PATCH and reports whether one was sent.
func (m statusManager) sync(ctx context.Context, ns, name string, mutate func(st *corev1.PodStatus) bool) (bool, error) {
	patched, err := m.sess.syncPodStatus(ctx, ns, name, mutate)
	if patched {
		m.counters.PodStatusPatches.Add(1)
	}
	return patched, err
}

// write is a sync of one pod with mutate applied now, counting the
// readiness transitions across it. A pod gone meanwhile is not an error.
func (m statusManager) write(ctx context.Context, ns, name string, mutate func(ps *corev1.PodStatus, now metav1.Time) bool) error {
	_, err := m.sync(ctx, ns, name, func(ps *corev1.PodStatus) bool {
		was := podReady(ps)
		changed := mutate(ps, metav1.NewTime(m.clk.Now()))
		m.counters.countFlip(was, podReady(ps))
		return changed
	})
	if err != nil && !apierrors.IsNotFound(errors.Unwrap(err)) {
		return err
	}
	return nil
}

// busyAt reports whether the status manager was still busy at t: its last
// sync ended after t.
func (m statusManager) busyAt(t time.Time) bool {
	return m.sess.statusIdleAt.Load() > t.UnixNano()
}

// batch plays the status manager over updates, measured from start. It
// runs in batches, as status_manager.go syncBatch does: a batch takes
// every pod with a status newer than the one it last wrote and syncs each
// (a GET and a PATCH) at its latest status, so what a pod's worker hands
// over while the status manager is busy with other pods goes out as one
// write (counted in Counters.StatusUpdatesCoalesced). A pod gone meanwhile
// is not an error; the first other error is returned at the end. apply
// applies an update to a pod's status; the events of an update are sent
// when a batch first finds it due: on time while the status manager keeps
// up, with the batch when it is behind.
func (m statusManager) batch(ctx context.Context, start time.Time, updates []plan.StatusUpdate, apply func(plan.StatusUpdate, *corev1.PodStatus, metav1.Time) bool, events func(plan.StatusUpdate)) error {
	sort.SliceStable(updates, func(i, j int) bool { return updates[i].At < updates[j].At })
	var firstErr error
	for len(updates) > 0 {
		if err := poll.Sleep(ctx, m.clk, updates[0].At-m.clk.Since(start)); err != nil {
			return fmt.Errorf("kubelet %s: waiting for pod status: %w", m.sess.node, err)
		}
		now := m.clk.Since(start)
		type key struct{ ns, name string }
		var order []key
		due := map[key][]plan.StatusUpdate{}
		var rest []plan.StatusUpdate
		for _, u := range updates {
			if u.At > now {
				rest = append(rest, u)
				continue
			}
			k := key{u.Pod.Namespace, u.Pod.Name}
			if _, ok := due[k]; !ok {
				order = append(order, k)
			}
			due[k] = append(due[k], u)
			events(u)
		}
		for _, k := range order {
			us := due[k]
			m.counters.StatusUpdatesCoalesced.Add(int64(len(us) - 1))
			_, err := m.sync(ctx, k.ns, k.name, func(st *corev1.PodStatus) bool {
				now := metav1.NewTime(m.clk.Now())
				changed := false
				for _, u := range us {
					changed = apply(u, st, now) || changed
				}
				return changed
			})
			if err != nil && !apierrors.IsNotFound(errors.Unwrap(err)) && firstErr == nil {
				firstErr = err
			}
		}
		updates = rest
	}
	return firstErr
}
