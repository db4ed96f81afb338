package kubelet

import (
	"context"
	"fmt"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/stormbench/stormbench/bench/poll"
)

// A simulated kubelet's node lease controller.

// defaultLeaseDuration is the kubelet's nodeLeaseDurationSeconds default,
// used when the lease has none.
const defaultLeaseDuration = 40 * time.Second

// renewLeaseOnce renews the node's lease. With the lease last written
// (latest) it sends only the UPDATE, as the lease controller does once it
// holds a lease; without, or on a conflict, it GETs (creating the lease if
// missing) first. It returns the lease as written.
func (s *session) renewLeaseOnce(ctx context.Context, latest *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	leases := s.heartbeat.CoordinationV1().Leases(nodeLeaseNamespace)
	renew := func(l *coordinationv1.Lease) (*coordinationv1.Lease, error) {
		now := metav1.NewMicroTime(s.clk.Now())
		l.Spec.RenewTime = &now
		return leases.Update(ctx, l, metav1.UpdateOptions{})
	}
	if latest != nil {
		out, err := renew(latest.DeepCopy())
		if err == nil {
			return out, nil
		}
		if !apierrors.IsConflict(err) {
			return nil, fmt.Errorf("kubelet %s: renewing lease: %w", s.node, err)
		}
	}
	l, err := leases.Get(ctx, s.node, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		now := metav1.NewMicroTime(s.clk.Now())
		l = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: s.node, Namespace: nodeLeaseNamespace},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(s.node), LeaseDurationSeconds: ptr.To(int32(defaultLeaseDuration / time.Second)), RenewTime: &now}}
		return leases.Create(ctx, l, metav1.CreateOptions{})
	}
	if err != nil {
		return nil, fmt.Errorf("kubelet %s: getting lease: %w", s.node, err)
	}
	out, err := renew(l)
	if err != nil {
		if apierrors.IsConflict(err) {
			// Someone else wrote it between our GET and UPDATE; the next
			// renewal starts from a fresh GET.
			return nil, nil
		}
		return nil, fmt.Errorf("kubelet %s: renewing lease: %w", s.node, err)
	}
	return out, nil
}

// startLeaseController runs the node lease controller while the kubelet
// starts up, as Kubelet.Run does (kubelet.go: `go
// kl.nodeLeaseController.Run(...)`, started before and independently of the
// informers' sync): the first renewal at once, then one every quarter of the
// lease's duration (nodeLeaseRenewIntervalFraction 0.25), sending only the
// UPDATE once it holds the lease. A kubelet that renewed only after its
// informers synced would leave its lease stale for the whole sync, and on a
// busy API server past the node-monitor grace period, so the node-lifecycle
// controller would mark the node Unknown and its pods not ready.
//
// A failed renewal (or a conflict) is retried after a backoff from 200 ms
// doubling up to 7 s, starting again from a GET, as the lease controller's
// backoffEnsureLease does. The returned stop ends the loop and waits for
// it; call it before handing the node back to KWOK.
//
// The lease controller of a kubelet that is already running (a runtime
// restart) knows its lease (latest, as read by the harness), so it sends no
// GET, and its next renewal comes after first (the rest of its renew
// interval), not at once. A starting kubelet passes nil and 0.
func (s *session) startLeaseController(ctx context.Context, latest *coordinationv1.Lease, first time.Duration) (stop func()) {
	const minBackoff, maxBackoff = 200 * time.Millisecond, 7 * time.Second
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if first > 0 && poll.Sleep(ctx, s.clk, first) != nil {
			return
		}
		backoff := minBackoff
		for {
			l, err := s.renewLeaseOnce(ctx, latest)
			if ctx.Err() != nil {
				return
			}
			latest = l
			wait := defaultLeaseDuration / 4
			if err != nil || l == nil {
				if err != nil && s.retries != nil {
					s.retries.Add(1)
				}
				wait, backoff = backoff, min(2*backoff, maxBackoff)
			} else {
				if d := l.Spec.LeaseDurationSeconds; d != nil && *d > 0 {
					wait = time.Duration(*d) * time.Second / 4
				}
				s.leaseRenewed.Store(s.clk.Now().UnixNano())
				s.leaseInterval.Store(int64(wait))
				backoff = minBackoff
			}
			if poll.Sleep(ctx, s.clk, wait) != nil {
				return
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { cancel(); <-done }) }
}

// nextLeaseRenewal is when the lease controller would renew the lease
// next, after its last renewal; zero before the first one.
func (s *session) nextLeaseRenewal() time.Time {
	last := s.leaseRenewed.Load()
	if last == 0 {
		return time.Time{}
	}
	return time.Unix(0, last).Add(time.Duration(s.leaseInterval.Load()))
}
