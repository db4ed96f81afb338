package cluster_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/stormbench/stormbench/bench/cluster"
	"github.com/stormbench/stormbench/bench/cluster/clustertest"
)

// TestStoppedClusterKeepsItsPorts: a cluster created while another is
// stopped (a snapshot save or restore stops it) must not take its ports.
// With kwokctl choosing, it took all of them; the stopped cluster's etcd,
// controller manager, scheduler and KWOK controller could not bind when it
// started again, and its API server wrote into the other cluster's etcd.
func TestStoppedClusterKeepsItsPorts(t *testing.T) {
	a := clustertest.Start(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := a.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	b := clustertest.Start(t, nil)
	if err := a.Start(ctx); err != nil {
		t.Fatal(err)
	}
	// Every component of both clusters runs and listens, on ports of its
	// own cluster only. A component that cannot bind exits within seconds.
	ports := map[string]string{} // port → cluster
	err := wait.PollUntilContextTimeout(ctx, time.Second, time.Minute, true, func(context.Context) (bool, error) {
		clear(ports)
		for _, c := range []*clustertest.Cluster{a, b} {
			for name, pid := range c.PIDs() {
				if !cluster.ProcessAlive(pid) {
					t.Logf("%s: %s (pid %d) not running", c.Name(), name, pid)
					return false, nil
				}
				addrs := listeningAddrs(t, pid)
				if len(addrs) == 0 {
					return false, nil
				}
				for _, addr := range addrs {
					port := addr[strings.LastIndexByte(addr, ':')+1:]
					if other, ok := ports[port]; ok && other != c.Name() {
						t.Fatalf("port %s used by %s and by %s (%s)", port, other, c.Name(), name)
					}
					ports[port] = c.Name()
				}
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("components of both clusters not all running and listening after a minute: %v (see the log above)", err)
	}
	// Each API server writes into its own etcd: what a writes, b does not
	// see.
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "stormbench-port-test", Namespace: metav1.NamespaceDefault}}
	err = wait.PollUntilContextTimeout(ctx, time.Second, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := a.Target.Client.CoreV1().ConfigMaps(cm.Namespace).Create(ctx, cm, metav1.CreateOptions{})
		return err == nil || apierrors.IsAlreadyExists(err), nil
	})
	if err != nil {
		t.Fatalf("creating a ConfigMap on the restarted cluster: %v", err)
	}
	if _, err := b.Target.Client.CoreV1().ConfigMaps(cm.Namespace).Get(ctx, cm.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the other cluster sees the restarted cluster's ConfigMap (err %v): they share an etcd", err)
	}
	owners := map[string]bool{}
	for _, c := range ports {
		owners[c] = true
	}
	if len(owners) != 2 {
		t.Errorf("clusters listening: %v, want both", owners)
	}
}
