package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/stormbench/stormbench/bench/cluster"
	"github.com/stormbench/stormbench/bench/fleet"
	"github.com/stormbench/stormbench/bench/result"
)

const interruptProfile = `apiVersion: stormbench.io/v1alpha1
kind: StormProfile
metadata: {name: interrupt}
fleet: {nodes: 10, podsPerNode: 5}
storm:
  kind: kubelet
  select: {count: 10}
  waves: {size: "2", interval: 5s}
  downtime: {type: fixed, value: 10s}
  featureGates: {ChangeContainerStatusOnKubeletRestart: true}
measurements:
  apiserver: {baseline: 2s}
  endpointSlices: {}
  recovery: {}
`

// TestInterruptMidStorm sends SIGINT to a stormbench process in the middle
// of a storm and checks it brings every node back, cleans up and writes a
// partial result that parses.
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
	cmd := exec.Command(bin, "run", "--profile", prof, "--kubeconfig", c.Kubeconfig(), "--context", c.Target.Context, "--yes",
		"--run-id", "interrupt", "--result", res)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	stormStarted := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		once := false
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
			if !once && strings.Contains(sc.Text(), "storm of 10 nodes") {
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
	if err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
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
	if code := cmd.ProcessState.ExitCode(); code != exitFailed {
		t.Errorf("exit code %d, want %d\n%s", code, exitFailed, log.String())
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
