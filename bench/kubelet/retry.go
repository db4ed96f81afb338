package kubelet

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
	case apierrors.IsTooManyRequests(err), apierrors.IsServerTimeout(err), apierrors.IsTimeout(err),
		apierrors.IsInternalError(err), apierrors.IsServiceUnavailable(err), apierrors.IsUnexpectedServerError(err):
		return true
	}
	return false
}

// retry runs fn until it succeeds, fails with a non-transient error, or the
// session's sync timeout passes, backing off from 200ms to 5s, as the
// kubelet's registration loop and status updates keep trying while the API
// server is away. Retries are counted, not hidden.
func (s *session) retry(ctx context.Context, fn func() error) error {
	deadline := s.clk.Now().Add(s.syncTimeout)
	delay := 200 * time.Millisecond
	for {
		err := fn()
		if err == nil || !transient(err) || !s.clk.Now().Before(deadline) {
			return err
		}
		if s.retries != nil {
			s.retries.Add(1)
		}
		select {
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		case <-s.clk.After(delay):
		}
		delay = min(2*delay, 5*time.Second)
	}
}
