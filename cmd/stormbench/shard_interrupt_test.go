package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/stormbench/stormbench/bench/cluster"
	"github.com/stormbench/stormbench/bench/fleet"
	"github.com/stormbench/stormbench/bench/result"
)

// interruptProfile is the smallest storm an interrupt can land in: four
// nodes, the first wave of two down at once and held down far longer than
// the test takes to interrupt it, so that no restart has recovered when
// SIGINT comes (the progress line must then say 0 recovered).
const interruptProfile = `apiVersion: stormbench.io/v1alpha1
kind: StormProfile
metadata: {name: interrupt}
fleet: {nodes: 4, podsPerNode: 2}
storm:
  kind: kubelet
  select: {count: 4}
  waves: {size: "2", interval: 5s}
  downtime: {type: fixed, value: 60s}
  featureGates: {ChangeContainerStatusOnKubeletRestart: true}
measurements:
  apiserver: {baseline: 1s}
  endpointSlices: {}
  recovery: {}
`

// TestInterruptMidStorm sends SIGINT to a stormbench process as soon as the
// storm has taken its first node down and checks it brings every node
// back, cleans up, writes a partial result that parses, and says what
// happened: no restart recovered, the variant stopped (not done).
func TestInterruptMidStorm(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	c := sharedCluster.Get(t)
	dir := t.TempDir()
	bin := stormbenchBinary(t)
	prof := filepath.Join(dir, "interrupt.yaml")
	if err := os.WriteFile(prof, []byte(interruptProfile), 0o600); err != nil {
		t.Fatal(err)
	}
	res := filepath.Join(dir, "partial.json")
	// --start-at a few seconds on: the storm starts once the fleet is
	// provisioned and the baseline taken, without the 20 s wait for the
	// request rate to settle that only the figures need.
	cmd := exec.Command(bin, "run", "--profile", prof, "--kubeconfig", c.Kubeconfig(), "--context", c.Target.Context, "--yes",
		"--run-id", "interrupt", "--result", res, "--start-at", time.Now().Add(10*time.Second).UTC().Format(time.RFC3339))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var log syncBuilder
	stormStarted := make(chan struct{})
	logDone := make(chan struct{})
	go func() {
		defer close(logDone)
		sc := bufio.NewScanner(stderr)
		once := false
		for sc.Scan() {
			log.WriteString(time.Now().Format("15:04:05.0") + " " + sc.Text() + "\n")
			if !once && strings.Contains(sc.Text(), "storm of 4 nodes") {
				once = true
				close(stormStarted)
			}
		}
	}()
	select {
	case <-stormStarted:
	case <-time.After(5 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("storm did not start:\n%s", log.String())
	}
	// Interrupt once the first wave is down (a node relabelled down by the
	// storm), not after a guessed delay.
	if err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		down, err := c.Target.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: cluster.KubeletLabel + "=" + cluster.KubeletDown})
		if err != nil {
			return false, nil
		}
		return len(down.Items) > 0, nil
	}); err != nil {
		_ = cmd.Process.Kill()
		t.Fatalf("no node went down: %v\n%s", err, log.String())
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(5 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("stormbench did not stop within 5m of SIGINT:\n%s", log.String())
	}
	<-logDone
	t.Logf("stderr:\n%s", log.String())
	if code := cmd.ProcessState.ExitCode(); code != exitFailed {
		t.Errorf("exit code %d, want %d", code, exitFailed)
	}
	// Every restart was interrupted while its node was down: none
	// recovered, and the variant stopped.
	for _, w := range []string{"variant default: nodes restarted and recovered: 0/4 done", "Variant default (repetition 0) stopped", "gates ChangeContainerStatusOnKubeletRestart=true,"} {
		if !strings.Contains(log.String(), w) {
			t.Errorf("stderr lacks %q", w)
		}
	}
	if strings.Contains(log.String(), "map[") {
		t.Error("stderr prints a Go map")
	}
	r, err := result.ReadFile(res)
	if err != nil {
		t.Fatalf("partial result: %v\n%s", err, log.String())
	}
	if r.Complete {
		t.Error("interrupted run's result is marked complete")
	}
	ctx := context.Background()
	nodes, err := c.Target.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: cluster.KubeletLabel + "=" + cluster.KubeletDown})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) != 0 {
		t.Errorf("%d nodes left down after the interrupt", len(nodes.Items))
	}
	runs, err := fleet.ListRuns(ctx, c.Target.Client)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 0 {
		t.Errorf("leftovers after the interrupt: %+v", runs)
	}
}

// syncBuilder is a strings.Builder safe for a writer and a reader in
// different goroutines.
type syncBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuilder) WriteString(x string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b.WriteString(x)
}

func (s *syncBuilder) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
