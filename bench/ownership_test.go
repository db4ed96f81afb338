package bench_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/stormbench/stormbench/bench"
	"github.com/stormbench/stormbench/bench/cluster"
	"github.com/stormbench/stormbench/bench/fleet"
	"github.com/stormbench/stormbench/bench/kubelet"
	"github.com/stormbench/stormbench/bench/storm"
)

// TestOwnership: a node and a pod stormbench did not create survive a storm,
// a direct restart attempt and the cleanup of every run.
func TestOwnership(t *testing.T) {
	c := sharedCluster.Get(t)
	ctx := context.Background()
	client := c.Target.Client
	// A foreign node that KWOK manages too (it carries the management
	// label), and a foreign pod bound to it.
	foreign := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "foreign-node", Labels: map[string]string{
		cluster.KubeletLabel: cluster.KubeletUp, "type": "kwok"},
		Annotations: map[string]string{fleet.KwokAnnotation: "fake"}}}
	_, err := client.CoreV1().Nodes().Create(ctx, foreign, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The cluster is shared: the foreign objects go when the test ends.
	t.Cleanup(func() {
		ctx := context.Background()
		if err := client.CoreV1().Namespaces().Delete(ctx, "foreign", metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting the foreign namespace: %v", err)
		}
		if err := client.CoreV1().Nodes().Delete(ctx, "foreign-node", metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting the foreign node: %v", err)
		}
	})
	if _, err = client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "foreign"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "foreign-pod", Namespace: "foreign"}, Spec: corev1.PodSpec{
		NodeName: "foreign-node", AutomountServiceAccountToken: new(bool),
		Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}}}
	// Pods are admitted once the controller manager created the
	// namespace's default ServiceAccount.
	var created *corev1.Pod
	deadline := time.Now().Add(time.Minute)
	for {
		created, err = client.CoreV1().Pods("foreign").Create(ctx, pod, metav1.CreateOptions{})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// KWOK brings the foreign pod up: wait for it to run, so that the
	// snapshot below is of a settled node and pod.
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		p, err := client.CoreV1().Pods("foreign").Get(ctx, created.Name, metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodRunning, nil
	}); err != nil {
		t.Fatalf("foreign pod not running: %v", err)
	}
	// The node-lifecycle controller takes the node's not-ready taint off
	// once KWOK reports it Ready, which can come after the pod runs (the
	// pod names its node, so the taint does not hold it back): wait for
	// that too, or the snapshot catches the controller's change.
	var before *corev1.Node
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		n, err := client.CoreV1().Nodes().Get(ctx, "foreign-node", metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		before = n
		for _, t := range n.Spec.Taints {
			if t.Key == corev1.TaintNodeNotReady || t.Key == corev1.TaintNodeUnreachable {
				return false, nil
			}
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady {
				return c.Status == corev1.ConditionTrue, nil
			}
		}
		return false, nil
	}); err != nil {
		t.Fatalf("foreign node not Ready and untainted: %v", err)
	}

	p := mustProfile(t, `
apiVersion: stormbench.io/v1alpha1
kind: StormProfile
metadata: {name: owner}
fleet: {nodes: 5, podsPerNode: 4}
storm:
  kind: reboot
  select: {fraction: 1}
  downtime: {type: fixed, value: 2s}
`)
	if _, err := bench.Run(ctx, bench.Options{Profile: p, RunID: "owner", Target: c.Target, Embedded: c.Embedded, Logf: t.Logf}); err != nil {
		t.Fatal(err)
	}
	// A direct attempt on the foreign node is refused.
	sim, err := kubelet.NewSimulator(kubelet.Config{Base: c.Target.Config, Harness: client, RunID: "owner", Kind: "kubelet"})
	if err != nil {
		t.Fatal(err)
	}
	if o := sim.Restart(ctx, storm.Restart{Node: "foreign-node"}); o.Err == nil || o.Restarted() {
		t.Errorf("restarting a node without the run label was not refused: %+v", o)
	}
	// Cleaning up every run leaves it alone too.
	runs, err := fleet.ListRuns(ctx, client)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if err := fleet.Delete(ctx, client, r.RunID, 5*time.Minute, nil); err != nil {
			t.Fatal(err)
		}
	}
	after, err := client.CoreV1().Nodes().Get(ctx, "foreign-node", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("foreign node: %v", err)
	}
	if !reflect.DeepEqual(before.Labels, after.Labels) || !reflect.DeepEqual(before.Spec, after.Spec) {
		t.Errorf("foreign node changed:\nbefore %v %v\nafter  %v %v", before.Labels, before.Spec, after.Labels, after.Spec)
	}
	got, err := client.CoreV1().Pods("foreign").Get(ctx, "foreign-pod", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("foreign pod: %v", err)
	}
	if got.DeletionTimestamp != nil || got.UID != created.UID {
		t.Errorf("foreign pod disturbed: %+v", got.ObjectMeta)
	}
	for _, cs := range got.Status.ContainerStatuses {
		if cs.RestartCount != 0 {
			t.Errorf("foreign pod's container restarted %d times", cs.RestartCount)
		}
	}
}
