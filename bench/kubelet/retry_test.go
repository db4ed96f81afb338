package kubelet

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"syscall"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
