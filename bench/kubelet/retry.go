package kubelet

import (
	"context"
	"errors"
	"io"
	"math"
	"net"
	"strings"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/clock"
)

// transient reports errors a kubelet retries: the API server unreachable or
// restarting, timeouts, 429s (client-go already honours Retry-After) and
// 5xx answers.
func transient(err error) bool {
	if err == nil {
		return false
	}
	var ne net.Error
	var re *retryableError
	switch {
	case errors.As(err, &re):
		return true
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return true
	case errors.As(err, &ne) && ne.Timeout():
		return true
	case utilnet.IsProbableEOF(err), connectionLost(err):
		return true
	case apierrors.IsTooManyRequests(err), apierrors.IsServerTimeout(err), apierrors.IsTimeout(err),
		apierrors.IsInternalError(err), apierrors.IsServiceUnavailable(err), apierrors.IsUnexpectedServerError(err):
		return true
	}
	return false
}

// connectionLost: the HTTP/2 connection under a request died, for example
// with the API server killed mid-request (net/http's h2 bundle: "client
// connection force closed via ClientConn.Close" after a write error, or
// "client connection lost" after a failed health ping). The errors are not
// exported, so they are matched by text, as apimachinery's IsProbableEOF
// matches its own.
func connectionLost(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "http2: client connection force closed") || strings.Contains(msg, "http2: client connection lost")
}

// retryTransient calls fn until it succeeds or fails with an error that is
// not transient, backing off on clk from 200ms to 5s between tries. It gives
// up, returning fn's last error joined with ctx's, when ctx ends, and when
// deadline (if set) has passed. retried, if set, is told of every retry.
func retryTransient(ctx context.Context, clk clock.Clock, deadline time.Time, retried func(), fn func() error) error {
	backoff := wait.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Cap: 5 * time.Second, Steps: math.MaxInt32}
	for {
		err := fn()
		if err == nil || !transient(err) || (!deadline.IsZero() && !clk.Now().Before(deadline)) {
			return err
		}
		if retried != nil {
			retried()
		}
		select {
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		case <-clk.After(backoff.Step()):
		}
	}
}

// authSettle is how long a 401 or 403 is retried: an API server that has
// just restarted answers them until its authorizers' caches (RBAC, the Node
// authorizer's graph) have synced, and the kubelet's loops, which retry
// every error, get through once they have. A lasting denial still fails,
// this much later.
const authSettle = 30 * time.Second

// settlingAuth wraps fn so that its 401s and 403s are transient for
// authSettle from the first one: the window a restarted API server needs.
func settlingAuth(clk clock.Clock, fn func() error) func() error {
	var first time.Time
	return func() error {
		err := fn()
		if !apierrors.IsForbidden(err) && !apierrors.IsUnauthorized(err) {
			return err
		}
		if first.IsZero() {
			first = clk.Now()
		}
		if clk.Since(first) < authSettle {
			return &retryableError{msg: err.Error()}
		}
		return err
	}
}

// retry runs fn as the kubelet's registration loop and status updates do
// while the API server is away: retryTransient until the session's sync
// timeout, retries counted, not hidden.
func (s *session) retry(ctx context.Context, fn func() error) error {
	var retried func()
	if s.retries != nil {
		retried = func() { s.retries.Add(1) }
	}
	return retryTransient(ctx, s.clk, s.clk.Now().Add(s.syncTimeout), retried, settlingAuth(s.clk, fn))
}
