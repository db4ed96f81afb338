package storm

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestByNode(t *testing.T) {
	var got []string
	record := func(side string, fail bool) Restarter {
		return RestarterFunc(func(_ context.Context, r Restart) error {
			got = append(got, side+":"+r.Node)
			if fail {
				return errors.New(side + " failed")
			}
			return nil
		})
	}
	isReal := func(node string) bool { return strings.HasPrefix(node, "real-") }
	rs := ByNode(isReal, record("real", true), record("sim", false))
	for _, node := range []string{"n-0", "real-0", "n-1"} {
		err := rs.Restart(context.Background(), Restart{Node: node})
		if want := node == "real-0"; (err != nil) != want {
			t.Errorf("%s: err = %v, want an error: %v", node, err, want)
		}
	}
	if want := "sim:n-0 real:real-0 sim:n-1"; strings.Join(got, " ") != want {
		t.Errorf("restarts went to %q, want %q", strings.Join(got, " "), want)
	}
}

func TestFailuresAndRestarts(t *testing.T) {
	at := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
	events := []Event{
		{Time: at, Type: EventWaveStart},
		{Time: at, Type: EventDown, Node: "n1", Kind: "kubelet"},
		{Time: at, Type: EventDown, Node: "n2", Kind: "kubelet", Real: true},
		{Time: at, Type: EventError, Node: "n2", Err: "real node: kubelet exited"},
		{Time: at, Type: EventStatusSyncDropped, Node: "n1", Pod: "ns/p", Err: "conflict"},
		{Time: at, Type: EventError, Node: "n3", Err: "real node not started by this run"},
	}
	if got := Failures(events); got != 2 {
		t.Errorf("Failures = %d, want 2 (Error events; a dropped status sync is not a failed restart)", got)
	}
	if got := Restarts(events); got != 2 {
		t.Errorf("Restarts = %d, want 2", got)
	}
	want := []string{"", "", "", "n2: real node: kubelet exited", "n1: ns/p: conflict", "n3: real node not started by this run"}
	for i, e := range events {
		if got := e.Failure(); got != want[i] {
			t.Errorf("event %d (%s): Failure() = %q, want %q", i, e.Type, got, want[i])
		}
	}
}
