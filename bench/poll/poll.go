// Package poll is stormbench's one way to wait: a sleep, and a poll loop
// that says what was left when it gives up. Both run on an injected clock
// (k8s.io/utils/clock), so code that waits can be driven by a fake clock in
// tests, and no other package writes its own poll loop or sleep helper.
//
// The loop follows apimachinery's wait.PollUntilContextTimeout (the
// condition is checked at once, then every interval; a condition's error
// ends the wait), with two differences that loop cannot give: the clock is
// the caller's, not the real one, and the error of a wait that timed out or
// was cancelled names what was awaited and what the last check found
// missing ("waiting for the fleet to be Ready: not done within 10m0s: 37/2000
// pods not Ready").
package poll

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/utils/clock"
)

// ErrTimeout is wrapped by the error of a wait whose Timeout passed.
var ErrTimeout = errors.New("timed out")

// Sleep waits d on clk, or until ctx is done (then it returns ctx's error).
// A d of zero or less returns at once, with ctx's error if it is done.
func Sleep(ctx context.Context, clk clock.Clock, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := clk.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C():
		return nil
	}
}

// SleepUntil waits until clk reads at or after t, or until ctx is done.
func SleepUntil(ctx context.Context, clk clock.Clock, t time.Time) error {
	return Sleep(ctx, clk, t.Sub(clk.Now()))
}

// Condition is one check of a wait. It reports whether the wait is over
// and, when it is not, what is left ("3/10 pods not Ready"), which the
// wait's error quotes if it gives up. A non-nil error ends the wait with
// that error.
type Condition func(ctx context.Context) (done bool, left string, err error)

// Wait describes a poll loop.
type Wait struct {
	// Clock is the clock the loop reads and sleeps on; nil means the real
	// clock.
	Clock clock.Clock
	// Interval is the time between the end of one check and the start of
	// the next (a sliding interval, as apimachinery's poll loops have).
	Interval time.Duration
	// Timeout, when positive, bounds the wait on Clock: the condition is
	// checked once more at the deadline, then the wait fails with
	// ErrTimeout. Zero waits until the context is done.
	Timeout time.Duration
	// What is awaited, as the start of an error message: "waiting for real
	// node n-1 to be Ready".
	What string
}

// Until checks cond at once and then every Interval until it reports done
// (nil), returns an error (that error, as is), the Timeout passes (an error
// wrapping ErrTimeout) or ctx is done (an error wrapping ctx's error). The
// two last errors start with What and end with the last check's left.
func (w Wait) Until(ctx context.Context, cond Condition) error {
	clk := cmp.Or[clock.Clock](w.Clock, clock.RealClock{})
	start := clk.Now()
	var deadline time.Time
	if w.Timeout > 0 {
		deadline = start.Add(w.Timeout)
	}
	for {
		done, left, err := cond(ctx)
		if err != nil || done {
			return err
		}
		d := w.Interval
		if !deadline.IsZero() {
			rest := deadline.Sub(clk.Now())
			if rest <= 0 {
				return w.fail(ErrTimeout, fmt.Sprintf("not done within %s", w.Timeout), left)
			}
			d = min(d, rest)
		}
		if err := Sleep(ctx, clk, max(d, time.Millisecond)); err != nil {
			return w.fail(err, fmt.Sprintf("%v after %s", err, clk.Since(start).Round(time.Millisecond)), left)
		}
	}
}

func (w Wait) fail(cause error, how, left string) error {
	msg := how
	if w.What != "" {
		msg = w.What + ": " + how
	}
	if left != "" {
		msg += ": " + left
	}
	return &waitError{msg: msg, cause: cause}
}

// waitError keeps the message as written and unwraps to its cause, so
// errors.Is finds ErrTimeout, context.Canceled or
// context.DeadlineExceeded.
type waitError struct {
	msg   string
	cause error
}

func (e *waitError) Error() string { return e.msg }
func (e *waitError) Unwrap() error { return e.cause }
