package cluster

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestLockPorts: a second taker of the port lock waits until the first
// releases it (flock on a second open file conflicts, in one process as in
// two), and gives up with ctx.
func TestLockPorts(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	release, err := lockPorts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := lockPorts(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second lock while the first is held: %v, want a deadline error", err)
	}
	got := make(chan error, 1)
	go func() {
		r, err := lockPorts(context.Background())
		if err == nil {
			r()
		}
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("the lock was taken while held (err %v)", err)
	case <-time.After(200 * time.Millisecond):
	}
	release()
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the lock was not taken after its release")
	}
}
