package bench_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/stormbench/stormbench/bench"
	"github.com/stormbench/stormbench/bench/cluster"
	"github.com/stormbench/stormbench/bench/cluster/clustertest"
	"github.com/stormbench/stormbench/bench/measure/apiserver"
	"github.com/stormbench/stormbench/bench/measure/self"
	"github.com/stormbench/stormbench/bench/result"
)

// TestFaultInjection kills the kwok controller, then kube-apiserver, in the
// middle of a storm, and starts them again: the run completes, the result
// says what happened, and the metrics scrape marks the API server's gap.
func TestFaultInjection(t *testing.T) {
	c := clustertest.Start(t, nil)
	p := mustProfile(t, `
apiVersion: stormbench.io/v1alpha1
kind: StormProfile
metadata: {name: faults}
fleet: {nodes: 10, podsPerNode: 5}
storm:
  kind: kubelet
  select: {count: 10}
  waves: {size: "2", interval: 6s}
  downtime: {type: fixed, value: 5s}
  featureGates: {ChangeContainerStatusOnKubeletRestart: true}
measurements:
  apiserver: {baseline: 2s}
  endpointSlices: {}
  recovery: {}
`)
	started := make(chan struct{})
	var once sync.Once
	logf := func(format string, a ...any) {
		msg := fmt.Sprintf(format, a...)
		t.Log(msg)
		if strings.Contains(msg, "storm of 10 nodes") {
			once.Do(func() { close(started) })
		}
	}
	type outcome struct {
		res *result.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
		defer cancel()
		res, err := bench.Run(ctx, bench.Options{Profile: p, RunID: "faults", Target: c.Target, Embedded: c.Embedded, Logf: logf})
		done <- outcome{res, err}
	}()
	select {
	case <-started:
	case o := <-done:
		t.Fatalf("run ended before its storm: %v", o.err)
	}
	ctx := context.Background()
	for _, comp := range []string{"kwok-controller", "kube-apiserver"} {
		// Restarts in flight: a node the storm took down.
		if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
			down, err := c.Target.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: cluster.KubeletLabel + "=" + cluster.KubeletDown})
			return err == nil && len(down.Items) > 0, nil
		}); err != nil {
			t.Fatalf("before killing %s: no node down: %v", comp, err)
		}
		pid := c.PIDs()[comp]
		if pid == 0 {
			t.Fatalf("no pid for %s", comp)
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		time.Sleep(3 * time.Second) // the outage
		if err := c.Start(ctx); err != nil {
			t.Fatalf("restarting %s: %v", comp, err)
		}
	}
	o := <-done
	if o.err != nil {
		t.Fatalf("run did not survive the faults: %v", o.err)
	}
	v := &o.res.Variants[0]
	all := strings.Join(v.Errors, "\n")
	for _, want := range []string{"kwok-controller (pid", "kube-apiserver (pid", "kwok-controller came back", "kube-apiserver came back"} {
		if !strings.Contains(all, want) {
			t.Errorf("result does not say %q; it says:\n%s", want, all)
		}
	}
	if v.Restarts != 10 {
		t.Errorf("%d restarts, want 10", v.Restarts)
	}
	if got, _ := v.Measurement(apiserver.Name).Value(apiserver.ScrapeFailures, "", result.LabelComponent, "kube-apiserver"); got == 0 {
		t.Error("no failed API server scrape recorded for the gap")
	}
	if got, _ := v.Measurement(self.Name).Value(self.Retries, result.WindowStorm); got == 0 {
		t.Log("no kubelet request needed a retry (the API server was away between requests)")
	}
}
