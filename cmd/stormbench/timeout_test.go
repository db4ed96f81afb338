package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// stallingServer is a loopback API server that answers /version and then
// takes every other request without ever answering it, as an overloaded or
// wedged API server does. Each stalled request is announced on stalled.
type stallingServer struct {
	*httptest.Server
	stalled chan string
}

func newStallingServer(t *testing.T) *stallingServer {
	t.Helper()
	release := make(chan struct{})
	s := &stallingServer{stalled: make(chan string, 100)}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/version" {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"major":"1","minor":"36","gitVersion":"v1.36.3"}`)
			return
		}
		select {
		case s.stalled <- r.Method + " " + r.URL.Path:
		default:
		}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	// Cleanups run last-in first-out: release the handlers, then close.
	t.Cleanup(s.Close)
	t.Cleanup(func() { close(release) })
	return s
}

// kubeconfig writes a kubeconfig for the server with the context "stall".
func (s *stallingServer) kubeconfig(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "stall.kubeconfig")
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %q}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: stall, context: {cluster: c, user: u}}]
current-context: stall
`, s.URL)
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// runCLIContext runs the CLI with ctx and fails the test, rather than
// hanging it, if the command has not returned after a minute: a guard
// against a hang, far above any --timeout given here, not a measure of
// speed.
// interruptWhenStalled is a context cancelled, as by Ctrl-C, once a request
// to s is waiting.
func (s *stallingServer) interruptWhenStalled(t *testing.T) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		<-s.stalled
		cancel()
	}()
	return ctx
}

func runCLIContext(t *testing.T, ctx context.Context, args ...string) (int, string, string) {
	t.Helper()
	type out struct {
		code           int
		stdout, stderr string
	}
	done := make(chan out, 1)
	go func() {
		var stdout, stderr bytes.Buffer
		code := run(ctx, &stdout, &stderr, args)
		done <- out{code, stdout.String(), stderr.String()}
	}()
	select {
	case o := <-done:
		return o.code, o.stdout, o.stderr
	case <-time.After(time.Minute):
		t.Fatalf("stormbench %s hangs", strings.Join(args, " "))
		return 0, "", ""
	}
}

// TestStalledAPIServer: every command that talks to a cluster gives up on
// an API server that takes requests and never answers, within its
// --timeout, with a message that says so, and exits 3 (the run failed).
func TestStalledAPIServer(t *testing.T) {
	s := newStallingServer(t)
	kc := s.kubeconfig(t)
	workdir := t.TempDir()
	target := []string{"--kubeconfig", kc, "--context", "stall", "--workdir", workdir, "--yes"}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"preflight", []string{"preflight", "--timeout", "1s"}, "running the preflight checks: the API server did not answer within --timeout 1s"},
		{"preflight -o json", []string{"preflight", "--timeout", "1s", "-o", "json"}, "did not answer within --timeout 1s"},
		{"cleanup --list", []string{"cleanup", "--list", "--timeout", "1s"}, "listing what runs left behind: the API server did not answer within --timeout 1s"},
		{"cleanup --run-id", []string{"cleanup", "--run-id", "r1", "--timeout", "1s"}, "listing what runs left behind: the API server did not answer within --timeout 1s"},
		{"cleanup --all", []string{"cleanup", "--all", "--timeout", "1s"}, "the API server did not answer within --timeout 1s"},
		{"fleet down", []string{"fleet", "down", "--run-id", "r1", "--timeout", "1s"}, `deleting fleet "r1": listing run namespaces`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append(append([]string{}, tc.args...), target...)
			if tc.name == "preflight" || tc.name == "preflight -o json" {
				args = args[:len(args)-1] // preflight has no --yes
			}
			code, stdout, stderr := runCLIContext(t, context.Background(), args...)
			if code != exitFailed || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, exitFailed, tc.want)
			}
			if strings.Contains(stdout+stderr, "missing") {
				t.Errorf("an unanswered check reported as missing:\n%s%s", stdout, stderr)
			}
			if len(stderr) > 500 {
				t.Errorf("message of %d characters: %q", len(stderr), stderr)
			}
		})
	}
}

// TestPreflightInterrupted: Ctrl-C while preflight waits for the API server
// says "interrupted", never that each permission is missing.
func TestPreflightInterrupted(t *testing.T) {
	s := newStallingServer(t)
	// Interrupted once the first permission check is waiting.
	ctx := s.interruptWhenStalled(t)
	code, stdout, stderr := runCLIContext(t, ctx, "preflight", "--kubeconfig", s.kubeconfig(t), "--context", "stall", "--workdir", t.TempDir())
	if code != exitFailed || !strings.Contains(stderr, "interrupted while running the preflight checks") {
		t.Errorf("exit %d, stderr %q; want %d and interrupted", code, stderr, exitFailed)
	}
	if strings.Contains(stdout+stderr, "missing") || strings.Contains(stdout, "CHECK") {
		t.Errorf("an interrupted preflight printed findings:\n%s%s", stdout, stderr)
	}
}

// TestCleanupInterrupted: Ctrl-C while cleanup lists leftovers says
// "interrupted".
func TestCleanupInterrupted(t *testing.T) {
	s := newStallingServer(t)
	ctx := s.interruptWhenStalled(t)
	code, _, stderr := runCLIContext(t, ctx, "cleanup", "--list", "--kubeconfig", s.kubeconfig(t), "--context", "stall", "--workdir", t.TempDir(), "--yes")
	if code != exitFailed || !strings.Contains(stderr, "interrupted while listing what runs left behind") {
		t.Errorf("exit %d, stderr %q; want %d and interrupted", code, stderr, exitFailed)
	}
}

// TestRunTimeout: run --timeout bounds a run against an API server that
// takes requests and never answers: it stops at the deadline, exits 3 and
// names the first request that went unanswered, rather than waiting 70 s
// for each request and dropping the first failure.
func TestRunTimeout(t *testing.T) {
	s := newStallingServer(t)
	dir := t.TempDir()
	res := filepath.Join(dir, "r.json")
	for _, cmd := range []string{"run", "sweep"} {
		t.Run(cmd, func(t *testing.T) {
			args := []string{cmd, "--profile", "quick", "--kubeconfig", s.kubeconfig(t), "--context", "stall", "--yes", "--workdir", dir, "--result", res, "--timeout", "1s"}
			if cmd == "sweep" {
				args = append(args, "--wave-sizes", "5,10")
			}
			start := time.Now()
			code, _, stderr := runCLIContext(t, context.Background(), args...)
			want := "run stopped at --timeout 1s: no variant finished, no result written: listing other runs' leftovers: listing nodes"
			if code != exitFailed || !strings.Contains(stderr, want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, exitFailed, want)
			}
			// A bound far above the second, not a measure of speed.
			if took := time.Since(start); took > 30*time.Second {
				t.Errorf("took %s with --timeout 1s", took)
			}
			if _, err := os.Stat(res); err == nil {
				t.Errorf("a result was written")
			}
		})
	}
	code, _, stderr := runCLI(t, "run", "--profile", "quick", "--dry-run", "--timeout", "-1s")
	if code != exitUsage || !strings.Contains(stderr, "--timeout -1s: give a duration") {
		t.Errorf("--timeout -1s: exit %d, stderr %q; want %d", code, stderr, exitUsage)
	}
}
