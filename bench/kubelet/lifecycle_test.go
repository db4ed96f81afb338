package kubelet

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/stormbench/stormbench/bench/cluster"
	"github.com/stormbench/stormbench/bench/fleet"
	"github.com/stormbench/stormbench/bench/storm"
	"github.com/stormbench/stormbench/profiles"
)

// lifecycleLog records NodeLifecycle calls with the node's kubelet label
// at the time of the call.
type lifecycleLog struct {
	mu      sync.Mutex
	calls   []string
	harness *fake.Clientset
}

func (l *lifecycleLog) NodeDown(node string) { l.record("down", node) }

func (l *lifecycleLog) NodeUp(node string) { l.record("up", node) }

func (l *lifecycleLog) record(what, node string) {
	n, _ := l.harness.CoreV1().Nodes().Get(context.Background(), node, metav1.GetOptions{})
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, what+" "+node+" label="+n.Labels[cluster.KubeletLabel])
}

// TestLifecycleHooks: an interrupted restart of each kind tells the
// lifecycle what went down and that the node is back. The node goes down
// (after KWOK let go of it) in kubelet restarts and reboots, not in runtime
// restarts, and is up again once relabelled for KWOK, by the safety net of
// Restart here since the downtime is cut short.
func TestLifecycleHooks(t *testing.T) {
	for _, tc := range []struct {
		kind string
		want []string
	}{
		{profiles.StormKubelet, []string{"down n1 label=" + cluster.KubeletDown, "up n1 label=" + cluster.KubeletUp}},
		{profiles.StormReboot, []string{"down n1 label=" + cluster.KubeletDown, "up n1 label=" + cluster.KubeletUp}},
		{profiles.StormRuntime, []string{"up n1 label=" + cluster.KubeletUp}},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{fleet.RunLabel: "r", cluster.KubeletLabel: cluster.KubeletUp}}}
			harness := fake.NewSimpleClientset(node)
			log := &lifecycleLog{harness: harness}
			sim, err := NewSimulator(Config{
				Base: &rest.Config{Host: "https://127.0.0.1:1"}, Harness: harness, RunID: "r", Kind: tc.kind,
				Clock: clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), Lifecycle: log,
			})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			done := make(chan error, 1)
			go func() { done <- sim.Restart(ctx, storm.Restart{Node: "n1", Downtime: time.Minute}).Err }()
			select {
			case err := <-done:
				if err == nil {
					t.Fatal("an interrupted restart returned no error")
				}
			case <-time.After(30 * time.Second):
				t.Fatal("the interrupted restart did not return")
			}
			log.mu.Lock()
			defer log.mu.Unlock()
			if !slices.Equal(log.calls, tc.want) {
				t.Errorf("lifecycle calls %q, want %q", log.calls, tc.want)
			}
		})
	}
}

// TestLifecycleHandBack: the handback tells the lifecycle once the node is
// KWOK's again.
func TestLifecycleHandBack(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{cluster.KubeletLabel: cluster.KubeletDown}}}
	harness := fake.NewSimpleClientset(node)
	log := &lifecycleLog{harness: harness}
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	s := &Simulator{cfg: Config{Harness: harness, Clock: clk, Lifecycle: log}}
	if err := (&nodeRun{s: s, r: storm.Restart{Node: "n1"}, sess: &session{node: "n1", clk: clk}, stopLease: func() {}}).handBack(context.Background()); err != nil {
		t.Fatal(err)
	}
	if want := []string{"up n1 label=" + cluster.KubeletUp}; !slices.Equal(log.calls, want) {
		t.Errorf("lifecycle calls %q, want %q", log.calls, want)
	}
	// Without hooks nothing is called.
	s.cfg.Lifecycle = nil
	if err := (&nodeRun{s: s, r: storm.Restart{Node: "n1"}, sess: &session{node: "n1", clk: clk}, stopLease: func() {}}).handBack(context.Background()); err != nil {
		t.Fatal(err)
	}
}
