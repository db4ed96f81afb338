package kubelet

import (
	"testing"
	"time"

	"k8s.io/utils/clock"
	"sigs.k8s.io/kwok/pkg/utils/queue"
)

// TestKWOKQueueDuplicateStall pins the KWOK 0.8.0 behaviour that
// kwokRequeueAfter works around: a node queued twice in the lease
// controller's delaying queue (a renewal in flight when it was relabelled
// down, requeued after it was relabelled up and queued again) leaves an
// entry the queue cannot remove, and no node behind it comes out again.
// When a KWOK upgrade fixes the queue this test fails: then the wait in
// handBack can go.
func TestKWOKQueueDuplicateStall(t *testing.T) {
	for _, tc := range []struct {
		name      string
		duplicate bool
	}{
		{"queued once: every node comes out", false},
		{"queued twice: the nodes behind it stall", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := queue.NewWeightDelayingQueue[string](clock.RealClock{})
			// The lease controller's renewals are queued with weight 2
			// (node_lease_controller.go syncWorker).
			q.AddWeightAfter("node-a", 2, 10*time.Millisecond)
			if tc.duplicate {
				q.AddWeightAfter("node-a", 2, 20*time.Millisecond)
			}
			q.AddWeightAfter("node-b", 2, 30*time.Millisecond)
			items := drain(q, 2*time.Second)
			gotB := false
			for _, item := range items {
				gotB = gotB || item == "node-b"
			}
			switch {
			case !tc.duplicate && !gotB:
				t.Fatalf("out of the queue in 2 s: %v, want node-b too", items)
			case tc.duplicate && gotB:
				t.Fatalf("node-b came out of the queue (%v): KWOK's delaying queue no longer stalls on a duplicate; drop handBack's kwokRequeueAfter wait", items)
			}
			t.Logf("out of the queue in 2 s: %v", items)
		})
	}
}

// drain returns what comes out of q within d.
func drain(q queue.WeightDelayingQueue[string], d time.Duration) []string {
	done := make(chan struct{})
	got := make(chan string, 10)
	go func() {
		for {
			item, ok := q.GetOrWaitWithDone(done)
			if !ok {
				return
			}
			got <- item
		}
	}()
	deadline := time.After(d)
	var items []string
	for {
		select {
		case item := <-got:
			items = append(items, item)
		case <-deadline:
			close(done)
			return items
		}
	}
}
