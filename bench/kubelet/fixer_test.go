package kubelet_test

import (
	"context"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/stormbench/stormbench/bench/fleet"
	"github.com/stormbench/stormbench/bench/kubelet"
)

// TestStaleReadinessFixer runs the fixer against the embedded cluster: a
// KWOK pod that the node-lifecycle controller would have marked not ready
// (Ready=False, ContainersReady=True) is written Ready again under its
// node's identity, concurrent fixes of one node share a session, and a
// pod bound to another node is refused by NodeRestriction (the fix really
// goes out as the pod's kubelet, not as the harness).
func TestStaleReadinessFixer(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the embedded cluster")
	}
	c := kubelet.SharedTestCluster.Get(t)
	client := c.Target.Client
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// The cluster is shared: the test's nodes and pods go when it ends.
	t.Cleanup(func() {
		ctx := context.Background()
		for _, name := range []string{"a", "b", "c"} {
			_ = client.CoreV1().Pods(metav1.NamespaceDefault).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)})
		}
		for i := range 2 {
			_ = client.CoreV1().Nodes().Delete(ctx, fleet.NodeName("fixer", i), metav1.DeleteOptions{})
		}
	})

	var nodes []*corev1.Node
	for i := range 2 {
		n, err := fleet.BuildNode(fleet.NodeSpec{RunID: "fixer", Index: i, CPU: "8", Memory: "16Gi", Pods: 10})
		if err != nil {
			t.Fatal(err)
		}
		if n, err = client.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, n)
	}
	// The ServiceAccount admission needs the namespace's default account,
	// which the controller manager creates just after start.
	if err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(context.Context) (bool, error) {
		_, err := client.CoreV1().ServiceAccounts(metav1.NamespaceDefault).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	}); err != nil {
		t.Fatalf("no default service account: %v", err)
	}
	var pods []*corev1.Pod
	for _, name := range []string{"a", "b", "c"} {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault},
			Spec: corev1.PodSpec{NodeName: nodes[0].Name, Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}},
				Tolerations: []corev1.Toleration{{Key: fleet.KwokTaintKey, Operator: corev1.TolerationOpExists}}},
		}
		p, err := client.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pods = append(pods, p)
	}
	ready := func(p *corev1.Pod) (podReady, containersReady corev1.ConditionStatus) {
		for _, cond := range p.Status.Conditions {
			switch cond.Type {
			case corev1.PodReady:
				podReady = cond.Status
			case corev1.ContainersReady:
				containersReady = cond.Status
			}
		}
		return podReady, containersReady
	}
	get := func(name string) *corev1.Pod {
		t.Helper()
		p, err := client.CoreV1().Pods(metav1.NamespaceDefault).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	// KWOK runs them.
	for i, p := range pods {
		if err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(context.Context) (bool, error) {
			pods[i] = get(p.Name)
			r, _ := ready(pods[i])
			return pods[i].Status.Phase == corev1.PodRunning && r == corev1.ConditionTrue, nil
		}); err != nil {
			t.Fatalf("KWOK did not run pod %s: %v", p.Name, err)
		}
	}
	// What MarkPodsNotReady leaves: Ready False, containers still ready.
	markNotReady := func(name string) *corev1.Pod {
		t.Helper()
		p := get(name)
		for j := range p.Status.Conditions {
			if p.Status.Conditions[j].Type == corev1.PodReady {
				p.Status.Conditions[j].Status = corev1.ConditionFalse
				p.Status.Conditions[j].LastTransitionTime = metav1.NewTime(time.Now().Add(-time.Minute))
			}
		}
		p, err := client.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	for i, p := range pods {
		pods[i] = markNotReady(p.Name)
	}

	fix := kubelet.StaleReadinessFixer(c.Target.Config, nil)
	var wg sync.WaitGroup
	errs := make([]error, len(pods))
	for i, p := range pods {
		wg.Go(func() { errs[i] = fix(ctx, p) })
	}
	wg.Wait()
	for i, p := range pods {
		if errs[i] != nil {
			t.Errorf("fixing %s: %v", p.Name, errs[i])
		}
		if r, cr := ready(get(p.Name)); r != corev1.ConditionTrue || cr != corev1.ConditionTrue {
			t.Errorf("pod %s after the fix: Ready %s, ContainersReady %s; want both True", p.Name, r, cr)
		}
	}
	// The node's session was closed with its last fix; a later fix opens
	// a new one and still works.
	if err := fix(ctx, pods[0]); err != nil {
		t.Errorf("second round: %v", err)
	}

	// A pod claiming another node: the fix goes out as that node's kubelet,
	// the Node authorizer refuses it (no relationship to the pod), and the
	// fixer drops the pod as a status manager drops one no longer bound to
	// it. It must not have been written.
	stranger := markNotReady(pods[1].Name)
	stranger.Spec.NodeName = nodes[1].Name
	if err := fix(ctx, stranger); err != nil {
		t.Errorf("fix of a pod bound elsewhere, as %s: %v; want it dropped", nodes[1].Name, err)
	}
	if r, _ := ready(get(stranger.Name)); r != corev1.ConditionFalse {
		t.Errorf("pod %s written Ready %s by another node's kubelet", stranger.Name, r)
	}
}
