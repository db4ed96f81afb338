package kubelet

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/stormbench/stormbench/bench/cluster"
	"github.com/stormbench/stormbench/bench/storm"
)

// TestLeaseController checks the simulated kubelet's lease loop against the
// node lease controller: the first sync GETs (or creates) the lease and
// updates it, later syncs only update it, one every quarter of the lease's
// duration, and stop ends the loop.
func TestLeaseController(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	lease := func(seconds int32) *coordinationv1.Lease {
		holder := "n1"
		return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "n1", Namespace: nodeLeaseNamespace},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &seconds}}
	}
	for _, tc := range []struct {
		name      string
		existing  *coordinationv1.Lease
		wantFirst []string
		interval  time.Duration
	}{
		{"kubelet timing", lease(40), []string{"get", "update"}, 10 * time.Second},
		{"relaxed heartbeats", lease(200), []string{"get", "update"}, 50 * time.Second},
		{"no lease yet", nil, []string{"get", "create"}, 10 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var objs []runtime.Object
			if tc.existing != nil {
				objs = append(objs, tc.existing)
			}
			cs := fake.NewSimpleClientset(objs...)
			clk := clocktesting.NewFakeClock(t0)
			s := &session{node: "n1", heartbeat: cs, clk: clk}
			stop := s.startLeaseController(context.Background(), nil, 0)
			defer stop()

			verbs := func() []string {
				var v []string
				for _, a := range cs.Actions() {
					v = append(v, a.GetVerb())
				}
				return v
			}
			waitFor := func(n int) {
				t.Helper()
				deadline := time.Now().Add(10 * time.Second)
				for len(cs.Actions()) < n || !clk.HasWaiters() {
					if time.Now().After(deadline) {
						t.Fatalf("lease loop: want %d requests and a wait, have %v (waiting: %v)", n, verbs(), clk.HasWaiters())
					}
					time.Sleep(time.Millisecond)
				}
			}
			waitFor(len(tc.wantFirst))
			if got := verbs(); !slices.Equal(got, tc.wantFirst) {
				t.Fatalf("first sync: %v, want %v", got, tc.wantFirst)
			}
			clk.Step(tc.interval - time.Millisecond)
			// A timer that fired early leaves the loop without a waiter
			// until it has sent its renewal and waits again: wait for the
			// loop to be idle before counting, so an early renewal cannot
			// slip past the check.
			waitFor(len(tc.wantFirst))
			if got := len(cs.Actions()); got != len(tc.wantFirst) {
				t.Fatalf("renewed before a quarter of the lease duration: %v", verbs())
			}
			clk.Step(time.Millisecond)
			waitFor(len(tc.wantFirst) + 1)
			last := cs.Actions()[len(cs.Actions())-1]
			if last.GetVerb() != "update" {
				t.Fatalf("second sync: %v, want only an update", verbs())
			}
			l := last.(k8stesting.UpdateAction).GetObject().(*coordinationv1.Lease)
			if l.Spec.RenewTime == nil || !l.Spec.RenewTime.Time.Equal(t0.Add(tc.interval)) {
				t.Errorf("renewTime %v, want %v", l.Spec.RenewTime, t0.Add(tc.interval))
			}
			stop()
			n := len(cs.Actions())
			clk.Step(tc.interval)
			if clk.HasWaiters() || len(cs.Actions()) != n {
				t.Errorf("lease loop still running after stop: %v", verbs())
			}
		})
	}
}

// TestLeaseControllerRetries: a failed renewal is retried after a short
// backoff from a fresh GET, not a quarter of the lease later.
func TestLeaseControllerRetries(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	holder, seconds := "n1", int32(40)
	cs := fake.NewSimpleClientset(&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "n1", Namespace: nodeLeaseNamespace},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &seconds}})
	failures := 2
	cs.PrependReactor("update", "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
		if failures > 0 {
			failures--
			return true, nil, apierrors.NewTooManyRequests("slow down", 1)
		}
		return false, nil, nil
	})
	clk := clocktesting.NewFakeClock(t0)
	var retries atomic.Int64
	s := &session{node: "n1", heartbeat: cs, clk: clk, retries: &retries}
	stop := s.startLeaseController(context.Background(), nil, 0)
	defer stop()
	waitFor := func(n int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for len(cs.Actions()) < n || !clk.HasWaiters() {
			if time.Now().After(deadline) {
				t.Fatalf("want %d requests and a wait, have %d", n, len(cs.Actions()))
			}
			time.Sleep(time.Millisecond)
		}
	}
	waitFor(2) // GET, UPDATE (429)
	clk.Step(200 * time.Millisecond)
	waitFor(4) // GET, UPDATE (429) again
	clk.Step(400 * time.Millisecond)
	waitFor(6) // GET, UPDATE (ok)
	var verbs []string
	for _, a := range cs.Actions() {
		verbs = append(verbs, a.GetVerb())
	}
	if want := []string{"get", "update", "get", "update", "get", "update"}; !slices.Equal(verbs, want) {
		t.Errorf("requests %v, want %v", verbs, want)
	}
	if retries.Load() != 2 {
		t.Errorf("retries counted %d, want 2", retries.Load())
	}
	// Renewed: back to a quarter of the lease duration, UPDATE only.
	clk.Step(10*time.Second - time.Millisecond)
	if len(cs.Actions()) != 6 {
		t.Fatalf("renewed early after a success: %d requests", len(cs.Actions()))
	}
	clk.Step(time.Millisecond)
	waitFor(7)
	if v := cs.Actions()[6].GetVerb(); v != "update" {
		t.Errorf("renewal after success: %s, want update", v)
	}
}

// TestLeaseControllerFrom: a kubelet that keeps running (a runtime restart)
// holds its lease: it sends no GET, and renews after the rest of its
// interval, not at once.
func TestLeaseControllerFrom(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	holder, seconds := "n1", int32(40)
	l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "n1", Namespace: nodeLeaseNamespace},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &seconds}}
	cs := fake.NewSimpleClientset(l)
	clk := clocktesting.NewFakeClock(t0)
	s := &session{node: "n1", heartbeat: cs, clk: clk}
	stop := s.startLeaseController(context.Background(), l.DeepCopy(), 3*time.Second)
	defer stop()
	waitWaiter := func() {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !clk.HasWaiters() {
			if time.Now().After(deadline) {
				t.Fatal("lease loop is not waiting")
			}
			time.Sleep(time.Millisecond)
		}
	}
	waitWaiter()
	if n := len(cs.Actions()); n != 0 {
		t.Fatalf("%d requests before the first renewal is due", n)
	}
	clk.Step(3 * time.Second)
	deadline := time.Now().Add(10 * time.Second)
	for len(cs.Actions()) < 1 {
		if time.Now().After(deadline) {
			t.Fatal("no renewal after the first delay")
		}
		time.Sleep(time.Millisecond)
	}
	if a := cs.Actions()[0]; a.GetVerb() != "update" {
		t.Errorf("first request %s, want update (the lease is known)", a.GetVerb())
	}
}

// TestHandBackAtNextRenewal: the handback to KWOK stops the simulated lease
// loop at once and relabels the node when that loop would have renewed
// next (KWOK renews on takeover), not before; with no renewal yet it hands
// back at once. Table: time from the last renewal to the handback call.
func TestHandBackAtNextRenewal(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name     string
		renewed  bool
		elapsed  time.Duration
		wantWait time.Duration
	}{
		{"just renewed", true, 0, 10 * time.Second},
		{"mid interval", true, 7 * time.Second, 3 * time.Second},
		{"no renewal yet", false, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := clocktesting.NewFakeClock(t0)
			node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{cluster.KubeletLabel: cluster.KubeletDown}}}
			harness := fake.NewSimpleClientset(node)
			s := &Simulator{cfg: Config{Harness: harness, Clock: clk}}
			sess := &session{node: "n1", clk: clk}
			if tc.renewed {
				sess.leaseRenewed.Store(t0.UnixNano())
				sess.leaseInterval.Store(int64(10 * time.Second))
			}
			clk.Step(tc.elapsed)
			stopped := false
			done := make(chan error, 1)
			run := &nodeRun{s: s, r: storm.Restart{Node: "n1"}, sess: sess, stopLease: func() { stopped = true }}
			go func() { done <- run.handBack(context.Background()) }()
			label := func() string {
				n, err := harness.CoreV1().Nodes().Get(context.Background(), "n1", metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				return n.Labels[cluster.KubeletLabel]
			}
			if tc.wantWait > 0 {
				deadline := time.Now().Add(10 * time.Second)
				for !clk.HasWaiters() {
					if time.Now().After(deadline) {
						t.Fatal("handBack is not waiting for the next renewal")
					}
					time.Sleep(time.Millisecond)
				}
				clk.Step(tc.wantWait - time.Millisecond)
				time.Sleep(20 * time.Millisecond)
				if l := label(); l != cluster.KubeletDown {
					t.Fatalf("handed back %s before the next renewal (label %q)", time.Millisecond, l)
				}
				clk.Step(time.Millisecond)
			}
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("handBack did not return")
			}
			if !stopped {
				t.Error("the simulated lease loop was not stopped")
			}
			if l := label(); l != cluster.KubeletUp {
				t.Errorf("label %q after the handback, want %q", l, cluster.KubeletUp)
			}
			if _, ok := s.handedBack.Load("n1"); !ok {
				t.Error("handback not recorded: Restart would relabel the node a second time")
			}
		})
	}
}
