package realnode_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/stormbench/stormbench/bench/cluster"
	"github.com/stormbench/stormbench/bench/cluster/clustertest"
	"github.com/stormbench/stormbench/bench/realnode"
)

// requireContainerdHost skips without what containerd-backed nodes need,
// saying what is missing; under CI=true it fails instead.
func requireContainerdHost(t *testing.T, comps cluster.Components) {
	t.Helper()
	clustertest.SkipUnlessRoot(t, func() error { return realnode.CheckContainerdHost(comps) })
}

// TestContainerdNode runs one containerd-backed node against the embedded
// cluster: it registers and goes Ready, runs a pod whose exec readiness
// probe reads a ConfigMap, keeps the container through a containerd
// restart, recreates it after a reboot, and leaves nothing on the machine.
func TestContainerdNode(t *testing.T) {
	c := clustertest.Start(t, nil)
	comps := c.Components()
	requireContainerdHost(t, comps)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	dir := filepath.Join(c.Dir(), cluster.RealNodesDir, "ctd-0")
	n, err := realnode.NewContainerd(realnode.Options{
		Components: comps, AdminKubeconfig: c.Embedded.Kubeconfig(), Context: c.Target.Context,
		Dir: dir, Name: "ctd-0", PodCIDR: "10.244.7.0/24", Labels: map[string]string{"type": "containerd"},
	})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = n.Stop()
		}
	})
	if err := n.Start(nil); err != nil {
		t.Fatal(err)
	}
	cs := c.Target.Client
	nodeReady := func() error {
		return wait.PollUntilContextTimeout(ctx, time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
			nd, err := cs.CoreV1().Nodes().Get(ctx, "ctd-0", metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			for _, c := range nd.Status.Conditions {
				if c.Type == corev1.NodeReady {
					return c.Status == corev1.ConditionTrue, nil
				}
			}
			return false, nil
		})
	}
	if err := nodeReady(); err != nil {
		t.Fatalf("node never Ready: %v\n%s", err, tailFile(n.KubeletLog(), 30))
	}
	ns := "ctd-test"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app"}, Data: map[string]string{"app.conf": "listen 8080\n"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	probe := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"cat", "/etc/app/app.conf"}}}, PeriodSeconds: 2}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p0", Namespace: ns},
		Spec: corev1.PodSpec{
			NodeName:                     "ctd-0",
			AutomountServiceAccountToken: new(bool),
			Containers: []corev1.Container{{
				Name: "app", Image: realnode.ImageName, ImagePullPolicy: corev1.PullNever,
				ReadinessProbe: probe,
				VolumeMounts:   []corev1.VolumeMount{{Name: "config", MountPath: "/etc/app"}},
			}},
			Volumes: []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app"}}}}},
		},
	}
	// The namespace's default ServiceAccount comes a moment after it.
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
		return err == nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	podState := func() (ready bool, containerID, ip string, restarts int32) {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, "p0", metav1.GetOptions{})
		if err != nil {
			return false, "", "", 0
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady {
				ready = c.Status == corev1.ConditionTrue
			}
		}
		if len(p.Status.ContainerStatuses) > 0 {
			containerID, restarts = p.Status.ContainerStatuses[0].ContainerID, p.Status.ContainerStatuses[0].RestartCount
		}
		return ready, containerID, p.Status.PodIP, restarts
	}
	podReady := func(what string) (string, string) {
		t.Helper()
		var id, ip string
		err := wait.PollUntilContextTimeout(ctx, time.Second, 3*time.Minute, true, func(context.Context) (bool, error) {
			var ok bool
			ok, id, ip, _ = podState()
			return ok, nil
		})
		if err != nil {
			t.Fatalf("%s: pod never Ready: %v\nkubelet:\n%s\ncontainerd:\n%s", what, err, tailFile(n.KubeletLog(), 30), tailFile(n.RuntimeLog(), 20))
		}
		return id, ip
	}
	id0, ip0 := podReady("start")
	if !strings.HasPrefix(ip0, "10.244.7.") {
		t.Errorf("pod IP %q is not from the node's pod CIDR", ip0)
	}
	t.Logf("pod Ready: %s, IP %s", id0, ip0)

	// Runtime restart: the shim keeps the container; same container after.
	if _, err := n.Restart(ctx, "runtime", "", 5*time.Second, nil); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Second)
	if id, _ := podReady("runtime restart"); id != id0 {
		t.Errorf("containerd restart replaced the container: %s, was %s", id, id0)
	}

	// Reboot: every container dies; the kubelet recreates the sandbox and
	// the container.
	if _, err := n.Restart(ctx, "reboot", "", 3*time.Second, nil); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, time.Second, 3*time.Minute, true, func(context.Context) (bool, error) {
		ok, id, _, _ := podState()
		return ok && id != id0, nil
	})
	if err != nil {
		ok, id, ip, r := podState()
		t.Fatalf("after the reboot: ready %v container %s (was %s) ip %s restarts %d: %v\n%s", ok, id, id0, ip, r, err, tailFile(n.KubeletLog(), 30))
	}

	// Teardown leaves nothing: no process naming the node's directory, no
	// mount under it, no bridge, no cgroup.
	if err := cs.CoreV1().Pods(ns).Delete(ctx, "p0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	stopped = true
	if err := n.Stop(); err != nil {
		t.Errorf("stop: %v", err)
	}
	if m := realnode.Mounts(dir); len(m) > 0 {
		t.Errorf("mounts left under %s: %v", dir, m)
	}
	// Its own bridge only: another package's containerd nodes may be
	// running beside this test (make test runs packages in lanes).
	if out, _ := exec.Command("ip", "-o", "link", "show").Output(); strings.Contains(string(out), ": "+n.Bridge()+":") || strings.Contains(string(out), ": "+n.Bridge()+"@") {
		t.Errorf("the node's bridge %s is left:\n%s", n.Bridge(), out)
	}
	for _, h := range []string{"/sys/fs/cgroup/memory", "/sys/fs/cgroup/cpu", "/sys/fs/cgroup/pids", "/sys/fs/cgroup"} {
		if _, err := os.Stat(filepath.Join(h, "stormbench-ctd-0")); err == nil {
			t.Errorf("cgroup %s left", filepath.Join(h, "stormbench-ctd-0"))
		}
	}
	if pids := procsMentioning(dir); len(pids) > 0 {
		t.Errorf("processes left: %v", pids)
	}
}

func procsMentioning(s string) []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), s) {
			out = append(out, fmt.Sprintf("%s: %s", e.Name(), strings.ReplaceAll(string(b), "\x00", " ")))
		}
	}
	return out
}

func tailFile(path string, n int) string {
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
