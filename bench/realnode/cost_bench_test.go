package realnode_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/stormbench/stormbench/bench/cluster"
	"github.com/stormbench/stormbench/bench/cluster/clustertest"
	"github.com/stormbench/stormbench/bench/realnode"
)

// costWindow is how long after a kubelet restart its cost is counted:
// the start-up burst and the first status and lease syncs.
const costWindow = 30 * time.Second

// BenchmarkNodeCost measures what one real node costs this machine, for
// the hollow kubelet (kubelet code, fake CRI) and the kubelet on
// containerd (kubelet, containerd and the shims of its 5 pods, each with
// an exec readiness probe every 10 s), against the embedded cluster:
//   - rss-MiB: the resident memory of the node's processes, idle;
//   - idle-cpu-ms/s: their CPU per second over 30 s of idle;
//   - restart-cpu-s/op: their CPU in the 30 s after a kubelet restart
//     (2 s down), less the idle CPU of those 30 s.
//
// The containers' own processes are not counted. Run it as root with
// -benchtime=3x (an operation takes about 35 s):
//
//	go test ./bench/realnode -run '^$' -bench NodeCost -benchtime 3x
func BenchmarkNodeCost(b *testing.B) {
	for _, backend := range []string{"hollow", "containerd"} {
		b.Run(backend, func(b *testing.B) {
			c := clustertest.Start(b, nil)
			comps := c.Components()
			clustertest.SkipUnlessRoot(b, comps.CheckRealNodes)
			if backend == "containerd" {
				clustertest.SkipUnlessRoot(b, func() error { return realnode.CheckContainerdHost(comps) })
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
			defer cancel()
			name := "cost-" + backend
			opts := realnode.Options{
				Components: comps, AdminKubeconfig: c.Embedded.Kubeconfig(), Context: c.Target.Context,
				Dir: filepath.Join(c.Dir(), cluster.RealNodesDir, name), Name: name, PodCIDR: "10.244.9.0/24",
				Labels: map[string]string{"type": backend},
			}
			var n realnode.Runner
			if err := realnode.Start(opts, backend == "containerd", func(r realnode.Runner) {
				n = r
				b.Cleanup(func() { _ = r.Stop() })
			}); err != nil {
				b.Fatal(err)
			}
			cs := c.Target.Client
			if err := costPods(ctx, cs, name, 5); err != nil {
				b.Fatalf("%v\n%s", err, tailFile(n.KubeletLog(), 30))
			}
			ready := func() error { return waitNodeAndPods(ctx, cs, name) }
			if err := ready(); err != nil {
				b.Fatalf("%v\n%s", err, tailFile(n.KubeletLog(), 30))
			}
			total := func() (cpu float64, rss int64, kubelet float64) {
				parts, err := n.Cost()
				if err != nil {
					b.Fatal(err)
				}
				for _, u := range parts {
					cpu += u.CPUSeconds
					rss += u.RSSBytes
				}
				return cpu, rss, parts[realnode.PartKubelet].CPUSeconds
			}
			// Idle: every pod Ready, probes running.
			time.Sleep(10 * time.Second)
			cpu0, _, _ := total()
			time.Sleep(costWindow)
			cpu1, rss, _ := total()
			idle := (cpu1 - cpu0) / costWindow.Seconds()
			if parts, err := n.Cost(); err == nil {
				for part, u := range parts {
					b.Logf("%s idle: %s RSS %.0f MiB, CPU %.2f s since start", backend, part, float64(u.RSSBytes)/(1<<20), u.CPUSeconds)
				}
			}

			b.ResetTimer()
			var restartCPU float64
			for range b.N {
				before, _, kubeletBefore := total()
				start := time.Now()
				if _, err := n.Restart(ctx, "kubelet", "", 2*time.Second, nil); err != nil {
					b.Fatal(err)
				}
				if err := ready(); err != nil {
					b.Fatalf("after a restart: %v\n%s", err, tailFile(n.KubeletLog(), 30))
				}
				time.Sleep(time.Until(start.Add(costWindow)))
				after, _, _ := total()
				// The kubelet is a new process: its CPU counts from its
				// start, and the old one's is gone from the total.
				used := after - (before - kubeletBefore)
				restartCPU += used - idle*costWindow.Seconds()
			}
			b.StopTimer()
			b.ReportMetric(float64(rss)/(1<<20), "rss-MiB")
			b.ReportMetric(idle*1000, "idle-cpu-ms/s")
			b.ReportMetric(restartCPU/float64(b.N), "restart-cpu-s/op")
		})
	}
}

// costPods creates n pods bound to node, each with an exec readiness
// probe every 10 s, in a namespace of their own.
func costPods(ctx context.Context, cs kubernetes.Interface, node string, n int) error {
	ns := node
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	for i := range n {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%d", i), Namespace: ns},
			Spec: corev1.PodSpec{
				NodeName: node, AutomountServiceAccountToken: new(bool),
				Containers: []corev1.Container{{
					Name: "app", Image: realnode.ImageName, ImagePullPolicy: corev1.PullNever,
					ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}, PeriodSeconds: 10},
				}},
			},
		}
		// The namespace's default ServiceAccount comes a moment after it.
		if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			_, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
			return err == nil, nil
		}); err != nil {
			return fmt.Errorf("creating pod %s: %w", pod.Name, err)
		}
	}
	return nil
}

// waitNodeAndPods waits until node is Ready and every pod on it is.
func waitNodeAndPods(ctx context.Context, cs kubernetes.Interface, node string) error {
	return wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		nd, err := cs.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil || !condTrue(nd.Status.Conditions, corev1.NodeReady) {
			return false, nil
		}
		pods, err := cs.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
		if err != nil || len(pods.Items) == 0 {
			return false, nil
		}
		for _, p := range pods.Items {
			ok := false
			for _, c := range p.Status.Conditions {
				ok = ok || (c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue)
			}
			if !ok {
				return false, nil
			}
		}
		return true, nil
	})
}

func condTrue(conds []corev1.NodeCondition, t corev1.NodeConditionType) bool {
	for _, c := range conds {
		if c.Type == t {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
