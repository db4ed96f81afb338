package poll

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"
)

// drive runs wait in a goroutine and steps clk by step each time the wait
// sleeps, until the wait returns; it returns the wait's error and how far
// the clock moved.
func drive(t *testing.T, clk *testingclock.FakeClock, step time.Duration, wait func() error) (error, time.Duration) {
	t.Helper()
	start := clk.Now()
	done := make(chan error, 1)
	go func() { done <- wait() }()
	for {
		select {
		case err := <-done:
			return err, clk.Since(start)
		default:
		}
		if clk.HasWaiters() {
			clk.Step(step)
			continue
		}
		time.Sleep(time.Millisecond)
	}
}

func TestUntil(t *testing.T) {
	boom := errors.New("kubelet exited")
	tests := []struct {
		name string
		wait Wait
		// doneAt: the check (1-based) that reports done; failAt: the one
		// that returns boom; 0 for never.
		doneAt, failAt int
		wantChecks     int
		wantElapsed    time.Duration
		wantErr        string
		wantIs         error
	}{
		{name: "done at once", wait: Wait{Interval: time.Second}, doneAt: 1, wantChecks: 1},
		{name: "done at the third check", wait: Wait{Interval: time.Second, Timeout: time.Minute}, doneAt: 3, wantChecks: 3, wantElapsed: 2 * time.Second},
		{name: "condition error ends it as is", wait: Wait{Interval: time.Second, What: "waiting"}, failAt: 2, wantChecks: 2, wantElapsed: time.Second, wantErr: "kubelet exited", wantIs: boom},
		{
			name: "timeout names what and what was left", wait: Wait{Interval: 2 * time.Second, Timeout: 5 * time.Second, What: "waiting for node n-1 to be Ready"},
			// Checks at 0, 2, 4 and at the deadline (5).
			wantChecks: 4, wantElapsed: 5 * time.Second,
			wantErr: "waiting for node n-1 to be Ready: not done within 5s: 4 left", wantIs: ErrTimeout,
		},
		{name: "timeout without what", wait: Wait{Interval: time.Second, Timeout: time.Second}, wantChecks: 2, wantElapsed: time.Second, wantErr: "not done within 1s: 2 left", wantIs: ErrTimeout},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clk := testingclock.NewFakeClock(time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC))
			tc.wait.Clock = clk
			checks := 0
			err, elapsed := drive(t, clk, time.Second, func() error {
				return tc.wait.Until(context.Background(), func(context.Context) (bool, string, error) {
					checks++
					if checks == tc.failAt {
						return false, "", boom
					}
					return checks == tc.doneAt, fmt.Sprintf("%d left", checks), nil
				})
			})
			if checks != tc.wantChecks || elapsed != tc.wantElapsed {
				t.Errorf("%d checks over %s, want %d over %s", checks, elapsed, tc.wantChecks, tc.wantElapsed)
			}
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("err = %v, want nil", err)
			case tc.wantErr != "" && (err == nil || err.Error() != tc.wantErr):
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			case tc.wantIs != nil && !errors.Is(err, tc.wantIs):
				t.Errorf("errors.Is(%v, %v) = false", err, tc.wantIs)
			}
		})
	}
}

func TestUntilCancelled(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC))
	ctx, cancel := context.WithCancel(context.Background())
	checks := 0
	err := Wait{Clock: clk, Interval: time.Second, What: "waiting for the fleet"}.Until(ctx, func(context.Context) (bool, string, error) {
		checks++
		clk.Step(3 * time.Second) // the check itself took 3 s
		cancel()
		return false, "3/10 pods not Ready", nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if want := "waiting for the fleet: context canceled after 3s: 3/10 pods not Ready"; err.Error() != want || checks != 1 {
		t.Errorf("err = %q after %d checks, want %q after 1", err, checks, want)
	}
}

func TestSleep(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC))
	if err := Sleep(context.Background(), clk, 0); err != nil {
		t.Errorf("Sleep(0) = %v", err)
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Sleep(cancelled, clk, 0); !errors.Is(err, context.Canceled) {
		t.Errorf("Sleep(0) on a cancelled context = %v, want context.Canceled", err)
	}
	if err := Sleep(cancelled, clk, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("Sleep(1h) on a cancelled context = %v, want context.Canceled", err)
	}
	if clk.HasWaiters() {
		t.Error("a cancelled Sleep left its timer on the clock")
	}
	err, elapsed := drive(t, clk, 250*time.Millisecond, func() error {
		return SleepUntil(context.Background(), clk, clk.Now().Add(time.Second))
	})
	if err != nil || elapsed != time.Second {
		t.Errorf("SleepUntil(now+1s) = %v after %s, want nil after 1s", err, elapsed)
	}
}
