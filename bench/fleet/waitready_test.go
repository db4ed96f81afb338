package fleet

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/stormbench/stormbench/bench/poll"
)

// TestWaitReady runs the readiness wait on a fake API server in a synctest
// bubble: the informers feed the tally, the wait ends when the last pod
// turns Ready, a stale pod on a Ready node goes to the fixer, and a wait
// that gives up says what is not Ready.
func TestWaitReady(t *testing.T) {
	setup := func(t *testing.T, pods ...*corev1.Pod) (*Fleet, *fake.Clientset) {
		client := fake.NewClientset()
		ctx := context.Background()
		plan := &Plan{RunID: "r", Namespace: "ns", Nodes: 2, ExpectedPods: 3, StandalonePods: []string{"c"},
			KWOKNodes: []NodeSpec{{}, {}}}
		for _, n := range []*corev1.Node{node("n1", true), node("n2", true)} {
			n.Labels = map[string]string{RunLabel: "r"}
			if _, err := client.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		for _, p := range pods {
			if _, err := client.CoreV1().Pods("ns").Create(ctx, p, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		f, err := FromPlan(client, plan, Options{CreateParallelism: 1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return f, client
	}
	// Pods marked not Ready a minute before the bubble's start: stale.
	stalePod := func(name, nodeName string) *corev1.Pod {
		p := pod(name, nodeName, false)
		for i := range p.Status.Conditions {
			p.Status.Conditions[i].LastTransitionTime = metav1.NewTime(time.Now().Add(-time.Minute))
		}
		return p
	}
	t.Run("the last pod turns Ready, a stale one is fixed", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			f, client := setup(t, pod("a", "n1", true), stalePod("b", "n2"), pod("c", "n2", true))
			var fixes atomic.Int64
			f.SetStaleReadinessFixer(func(ctx context.Context, p *corev1.Pod) error {
				if p.Name != "b" {
					t.Errorf("fixer called for %s", p.Name)
				}
				fixes.Add(1)
				return errors.New("not this time")
			})
			done := make(chan error, 1)
			go func() { done <- f.WaitReady(context.Background(), time.Minute) }()
			time.Sleep(3 * time.Second)
			synctest.Wait()
			select {
			case err := <-done:
				t.Fatalf("the wait ended with pod b not Ready: %v", err)
			default:
			}
			if fixes.Load() == 0 {
				t.Error("the stale pod was not handed to the fixer")
			}
			if _, err := client.CoreV1().Pods("ns").UpdateStatus(context.Background(), pod("b", "n2", true), metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := <-done; err != nil {
				t.Errorf("the wait: %v", err)
			}
		})
	})
	t.Run("gives up and says why", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			// c, standalone, is lost; b's node is not Ready, so b is not stale.
			f, client := setup(t, pod("a", "n1", true), stalePod("b", "n2"))
			if _, err := client.CoreV1().Nodes().UpdateStatus(context.Background(), func() *corev1.Node {
				n := node("n2", false)
				n.Labels = map[string]string{RunLabel: "r"}
				return n
			}(), metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			f.SetStaleReadinessFixer(func(context.Context, *corev1.Pod) error {
				t.Error("a pod of a not-Ready node was handed to the fixer")
				return nil
			})
			err := f.WaitReady(context.Background(), 10*time.Second)
			want := "1/2 nodes not Ready (n2); 1/2 pods not Ready: 1 Running (not ready)"
			if !errors.Is(err, poll.ErrTimeout) || !strings.HasSuffix(err.Error(), want) {
				t.Errorf("the wait: %v\nwant a timeout ending %q", err, want)
			}
		})
	})
}
