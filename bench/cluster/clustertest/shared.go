package clustertest

import (
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"

	"github.com/stormbench/stormbench/profiles"
)

// Shared is an embedded cluster that the tests of one package share: the
// first test that asks for it starts it, and it stays up until the package's
// TestMain stops it (Finish), or until a test starts a cluster of its own:
// a test process keeps at most one cluster started by this package up at a
// time, so a test with its own cluster does not run beside an idle shared
// one, and the shared one starts again when a test asks for it next. Tests
// on a shared cluster must leave nothing of their run behind (fleets,
// namespaces, foreign objects they created) and must not change the control
// plane: those keep a cluster of their own (Start).
type Shared struct {
	// Name says which shared cluster this is, in logs.
	Name string
	// Profile gives the cluster's timing and control-plane settings and the
	// client's QPS; nil: defaults.
	Profile *profiles.Profile
	// Options adjust the cluster before it starts.
	Options []Option

	mu    sync.Mutex
	c     *Cluster
	stop  func() error
	err   error // the last start's or stop's error
	boots int
}

var (
	sharedMu  sync.Mutex
	sharedAll []*Shared
)

// Get returns the shared cluster, starting it when it is not up. With -short
// it skips the test; when the cluster cannot start it fails the test.
func (s *Shared) Get(tb testing.TB) *Cluster {
	tb.Helper()
	if testing.Short() {
		tb.Skip("integration test: skipped in -short mode")
	}
	stopShared(s)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.c == nil {
		sharedMu.Lock()
		if !slices.Contains(sharedAll, s) {
			sharedAll = append(sharedAll, s)
		}
		sharedMu.Unlock()
		var p *profiles.Profile
		if s.Profile != nil {
			cp := *s.Profile
			p = &cp
		}
		// Not a test's log: the cluster outlives the test that started it.
		logf := func(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
		c, stop, err := start("sbb", "shared", logf, func(_ string, err error) bool { return err != nil }, p, s.Options...)
		if err != nil {
			if stop != nil {
				_ = stop()
			}
			tb.Fatalf("starting the shared embedded cluster %s: %v", s.Name, err)
		}
		s.c, s.stop = c, stop
		s.boots++
		tb.Logf("shared cluster %s up (boot %d of this process)", s.Name, s.boots)
	}
	return s.c
}

// Stop tears the shared cluster down if it is up, and reports a failed
// teardown: an error from the components, or a process that survived it.
func (s *Shared) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stop == nil {
		return nil
	}
	err := s.stop()
	s.c, s.stop = nil, nil
	if err != nil {
		return fmt.Errorf("shared cluster %s: %w", s.Name, err)
	}
	return nil
}

// stopShared stops every shared cluster but keep, so that a test process has
// one cluster of this package up at a time. A failed teardown is kept for
// Main to report.
func stopShared(keep *Shared) {
	sharedMu.Lock()
	all := append([]*Shared(nil), sharedAll...)
	sharedMu.Unlock()
	for _, s := range all {
		if s == keep {
			continue
		}
		if err := s.Stop(); err != nil {
			s.mu.Lock()
			s.err = err
			s.mu.Unlock()
		}
	}
}

// StopShared stops every shared cluster that is up: for a test that starts
// clusters some other way (the CLI's own embedded cluster), so that it does
// not run beside an idle shared one.
func StopShared() { stopShared(nil) }

// Finish stops every shared cluster after a package's tests ran (from its
// TestMain, with m.Run's code) and returns the exit code for os.Exit: 1 when a
// teardown failed (a component survived it) although every test passed.
func Finish(code int) int {
	stopShared(nil)
	sharedMu.Lock()
	defer sharedMu.Unlock()
	for _, s := range sharedAll {
		if s.err != nil {
			fmt.Fprintf(os.Stderr, "FAIL: tearing down: %v\n", s.err)
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}
