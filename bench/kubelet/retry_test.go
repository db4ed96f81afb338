package kubelet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestTransient(t *testing.T) {
	urlErr := func(err error) error {
		return &url.Error{Op: "Get", URL: "https://127.0.0.1:6443/api/v1/nodes/n1", Err: err}
	}
	pods := schema.GroupResource{Resource: "pods"}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"connection refused", urlErr(syscall.ECONNREFUSED), true},
		{"connection reset", urlErr(syscall.ECONNRESET), true},
		{"EOF", urlErr(io.EOF), true},
		// The API server killed mid-request: another request's write error
		// closes the shared HTTP/2 connection under this one.
		{"h2 connection force closed", urlErr(errors.New("http2: client connection force closed via ClientConn.Close")), true},
		{"h2 connection lost", urlErr(errors.New("http2: client connection lost")), true},
		{"GOAWAY", urlErr(errors.New("http2: server sent GOAWAY and closed the connection; LastStreamID=1")), true},
		{"429", apierrors.NewTooManyRequests("slow down", 1), true},
		{"503", apierrors.NewServiceUnavailable("restarting"), true},
		{"wrapped 500", fmt.Errorf("kubelet n1: %w", apierrors.NewInternalError(errors.New("etcd"))), true},
		{"not found", apierrors.NewNotFound(pods, "p"), false},
		{"forbidden", apierrors.NewForbidden(pods, "p", errors.New("no relationship")), false},
		{"conflict", apierrors.NewConflict(pods, "p", errors.New("changed")), false},
		{"invalid", errors.New("pod p is invalid"), false},
	}
	for _, tt := range tests {
		if got := transient(tt.err); got != tt.want {
			t.Errorf("%s: transient(%v) = %v, want %v", tt.name, tt.err, got, tt.want)
		}
	}
}

// TestSettlingAuth: 401s and 403s are retried for authSettle from the
// first one (a restarted API server's authorizers warming up), then
// returned; other errors pass through at once.
func TestSettlingAuth(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "nodes"}, "n1", errors.New("not yet"))
	for _, tc := range []struct {
		name    string
		errs    []error // fn's answers, in order
		step    time.Duration
		calls   int
		wantErr bool
	}{
		{"forbidden, then through", []error{forbidden, forbidden, nil}, time.Second, 3, false},
		{"unauthorized, then through", []error{apierrors.NewUnauthorized("warming"), nil}, time.Second, 2, false},
		{"forbidden for good", []error{forbidden, forbidden, forbidden, forbidden}, 20 * time.Second, 3, true},
		{"not found at once", []error{apierrors.NewNotFound(schema.GroupResource{Resource: "nodes"}, "n1")}, time.Second, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := clocktesting.NewFakeClock(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
			calls := 0
			fn := settlingAuth(clk, func() error {
				err := tc.errs[min(calls, len(tc.errs)-1)]
				calls++
				clk.Step(tc.step)
				return err
			})
			var err error
			for range 10 {
				if err = fn(); !transient(err) {
					break
				}
			}
			if calls != tc.calls || (err != nil) != tc.wantErr {
				t.Errorf("%d calls, error %v; want %d calls, error %t", calls, err, tc.calls, tc.wantErr)
			}
		})
	}
}

// TestRetryBackoff: retries wait 200 ms, doubling to at most 5 s.
func TestRetryBackoff(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakeClock(t0)
	var calls []time.Time
	done := make(chan error, 1)
	go func() {
		done <- retryTransient(context.Background(), clk, time.Time{}, nil, func() error {
			calls = append(calls, clk.Now())
			if len(calls) < 9 {
				return apierrors.NewTooManyRequests("busy", 0)
			}
			return nil
		})
	}()
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			want := []time.Duration{200, 400, 800, 1600, 3200, 5000, 5000, 5000}
			if len(calls) != len(want)+1 {
				t.Fatalf("%d calls, want %d", len(calls), len(want)+1)
			}
			for i, w := range want {
				if got := calls[i+1].Sub(calls[i]); got != w*time.Millisecond {
					t.Errorf("wait %d: %s, want %s", i, got, w*time.Millisecond)
				}
			}
			return
		default:
		}
		if clk.HasWaiters() {
			clk.Step(100 * time.Millisecond)
		} else {
			time.Sleep(time.Millisecond)
		}
	}
}
