package fleet

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestFixQueue checks that stale-readiness fixes run beside the readiness
// loop: add never blocks, at most fixParallelism fixes are in flight, a pod
// being fixed is not fixed twice at once, failed fixes are not counted, and
// wait cancels what is in flight.
func TestFixQueue(t *testing.T) {
	pods := make([]*corev1.Pod, 3*fixParallelism)
	for i := range pods {
		pods[i] = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%d", i), UID: types.UID(fmt.Sprintf("u%d", i))}}
	}
	// Fixes block until their round's gate opens.
	var gate atomic.Pointer[chan struct{}]
	round1 := make(chan struct{})
	gate.Store(&round1)
	var mu sync.Mutex
	calls := map[types.UID]int{}
	var inFlight, maxInFlight atomic.Int64
	fix := func(ctx context.Context, p *corev1.Pod) error {
		// Counted and gated before it shows in inFlight, which the test
		// waits on.
		mu.Lock()
		calls[p.UID]++
		mu.Unlock()
		g := *gate.Load()
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			m := maxInFlight.Load()
			if n <= m || maxInFlight.CompareAndSwap(m, n) {
				break
			}
		}
		select {
		case <-g:
		case <-ctx.Done():
			return ctx.Err()
		}
		if p.Name == "p0" {
			return errors.New("conflict")
		}
		return nil
	}
	var fixed atomic.Int64
	q := newFixQueue(context.Background(), fix, &fixed)

	done := make(chan struct{})
	go func() {
		q.add(pods)
		q.add(pods) // the same pods again while their fixes are in flight
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("add blocked on fixes in flight")
	}
	waitUntil(t, func() bool { return inFlight.Load() == fixParallelism })
	mu.Lock()
	for uid, n := range calls {
		if n != 1 {
			t.Errorf("pod %s fixed %d times at once", uid, n)
		}
	}
	if len(calls) != fixParallelism {
		t.Errorf("%d pods being fixed, want %d (the rest wait for a later add)", len(calls), fixParallelism)
	}
	mu.Unlock()

	// Every slot free: the whole weight can be taken (and is given back).
	slotsFree := func() bool {
		if !q.sem.TryAcquire(fixParallelism) {
			return false
		}
		q.sem.Release(fixParallelism)
		return true
	}
	round2 := make(chan struct{})
	gate.Store(&round2)
	close(round1)
	// Finished: the fixes returned and their slots are free again.
	waitUntil(t, func() bool { return inFlight.Load() == 0 && slotsFree() })
	q.add(pods) // the first pods are still stale and go again
	waitUntil(t, func() bool { return inFlight.Load() == fixParallelism })
	close(round2)
	waitUntil(t, func() bool { return inFlight.Load() == 0 && slotsFree() })
	q.wait()
	if got := maxInFlight.Load(); got > fixParallelism {
		t.Errorf("%d fixes in flight, want at most %d", got, fixParallelism)
	}
	mu.Lock()
	total := 0
	for _, n := range calls {
		total += n
	}
	mu.Unlock()
	if total != 2*fixParallelism {
		t.Errorf("%d fixes run, want %d", total, 2*fixParallelism)
	}
	// p0's fixes fail; every other fix returned nil.
	if got, want := fixed.Load(), int64(total-calls["u0"]); got != want || calls["u0"] != 2 {
		t.Errorf("fixed counter %d, want %d (p0 fixed %d times, want 2)", got, want, calls["u0"])
	}
}

func TestFixQueueWaitCancels(t *testing.T) {
	started := make(chan struct{}, 1)
	fix := func(ctx context.Context, p *corev1.Pod) error {
		started <- struct{}{}
		<-ctx.Done()
		return ctx.Err()
	}
	var fixed atomic.Int64
	q := newFixQueue(context.Background(), fix, &fixed)
	q.add([]*corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Name: "p", UID: "u"}}})
	<-started
	returned := make(chan struct{})
	go func() { q.wait(); close(returned) }()
	select {
	case <-returned:
	case <-time.After(10 * time.Second):
		t.Fatal("wait did not cancel the fix in flight")
	}
	if fixed.Load() != 0 {
		t.Errorf("a cancelled fix was counted")
	}
	// A queue without a fixer does nothing.
	newFixQueue(context.Background(), nil, &fixed).add([]*corev1.Pod{{}})
}

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 10s")
		}
		time.Sleep(time.Millisecond)
	}
}
