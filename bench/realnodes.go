package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stormbench/stormbench/bench/cluster"
	"github.com/stormbench/stormbench/bench/fleet"
	"github.com/stormbench/stormbench/bench/poll"
	"github.com/stormbench/stormbench/bench/realnode"
	"github.com/stormbench/stormbench/bench/storm"
	"github.com/stormbench/stormbench/profiles"
)

// realNodes are a run's real kubelet nodes (fleet.realKubelets): hollow
// kubelets beside fake CRI runtimes, supervised by stormbench.
type realNodes struct {
	o     Options
	mu    sync.Mutex
	nodes map[string]realnode.Runner
}

// checkRealNodes refuses, before anything starts, a profile with real
// kubelets that this run cannot hold: no embedded cluster, missing
// binaries, or more than half the machine's available memory.
func checkRealNodes(o Options) error {
	n := o.Profile.Fleet.RealKubelets
	if n == 0 {
		return nil
	}
	if o.Embedded == nil {
		return errors.New("fleet.realKubelets needs the embedded cluster: real kubelets run on this machine beside it")
	}
	if o.ShardCount > 1 {
		return errors.New("fleet.realKubelets cannot be sharded: only the process that starts a real kubelet can restart it")
	}
	if err := o.Embedded.Components().CheckRealNodes(); err != nil {
		return err
	}
	if o.Profile.Fleet.RealKubeletBackend == profiles.RealKubeletContainerd {
		if err := realnode.CheckContainerdHost(o.Embedded.Components()); err != nil {
			return fmt.Errorf("fleet.realKubeletBackend containerd: %w", err)
		}
	}
	if avail := realnode.MemAvailable(); avail > 0 && int64(n)*realnode.BytesPerNode > avail/2 {
		return fmt.Errorf("fleet.realKubelets: %d real kubelets need about %d MiB (%d MiB each); this machine has %d MiB available and keeps half for the control plane and stormbench",
			n, int64(n)*realnode.BytesPerNode>>20, realnode.BytesPerNode>>20, avail>>20)
	}
	return nil
}

// start starts the named nodes (the fleet's last indexes) and waits until
// each is Ready.
func (r *realNodes) start(ctx context.Context, names []string) error {
	p := r.o.Profile
	first := p.Fleet.Nodes - len(names)
	add := func(n realnode.Runner) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.nodes[n.Name()] = n
	}
	for i, name := range names {
		idx := first + i
		opts := realnode.Options{
			Components: r.o.Embedded.Components(), AdminKubeconfig: r.o.Embedded.Kubeconfig(), Context: r.o.Target.Context,
			Dir: filepath.Join(r.o.Embedded.Dir(), cluster.RealNodesDir, name), Name: name, PodCIDR: fleet.PodCIDR(idx),
			Labels: map[string]string{
				fleet.RunLabel: r.o.RunID, fleet.TypeLabel: fleet.RealNodeType, "stormbench.io/index": strconv.Itoa(idx),
				// Never "up": KWOK must leave a real kubelet's node alone.
				cluster.KubeletLabel: "real",
			},
			CPU: p.Fleet.NodeCPU, Memory: p.Fleet.NodeMemory, MaxPods: p.Fleet.MaxPodsPerNode,
			LeaseDurationSeconds:  int(float64(p.Timing.NodeLeaseDurationSeconds) * max(p.Timing.HeartbeatFactor, 1)),
			StatusUpdateFrequency: time.Duration(float64(p.Timing.NodeStatusUpdateFrequency.Duration) * max(p.Timing.HeartbeatFactor, 1)),
		}
		if err := realnode.Start(opts, p.Fleet.RealKubeletBackend == profiles.RealKubeletContainerd, add); err != nil {
			return err
		}
	}
	r.o.Logf("Started %d real kubelets (%s, kubelet %s, logs under %s)", len(names), cmp.Or(p.Fleet.RealKubeletBackend, profiles.RealKubeletHollow), r.o.Embedded.KubeVersion(), filepath.Join(r.o.Embedded.Dir(), cluster.RealNodesDir))
	// Ready, not only registered: until then the node carries the
	// not-ready NoSchedule taint, and the scheduler would put every pod
	// of the mix on the KWOK nodes.
	for _, name := range names {
		w := poll.Wait{Clock: r.o.Clock, Interval: 250 * time.Millisecond, Timeout: 2 * time.Minute, What: "waiting for real node " + name + " to be Ready"}
		err := w.Until(ctx, func(ctx context.Context) (bool, string, error) {
			node, err := r.o.Target.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err == nil && fleet.NodeReady(node) &&
				!slices.ContainsFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.Key == corev1.TaintNodeNotReady }) {
				return true, "", nil
			}
			n := r.node(name)
			if !n.KubeletAlive() {
				return false, "", fmt.Errorf("real node %s: its kubelet exited (%s); log: %s", name, n.KubeletExit(), n.KubeletLog())
			}
			left := "registered, not Ready yet"
			if err != nil {
				left = err.Error()
			}
			return false, left + "; log: " + n.KubeletLog(), nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func (r *realNodes) node(name string) realnode.Runner {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.nodes[name]
}

// stop stops every real node's processes.
func (r *realNodes) stop() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var errs []error
	for name, n := range r.nodes {
		if err := n.Stop(); err != nil {
			errs = append(errs, fmt.Errorf("stopping real node %s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

// restarter is the real nodes' storm.Restarter for one storm: it carries
// out a scheduled restart on a real node (realnode.Restarter) and records
// its outcome as the simulator records its own: Down, KubeletStart,
// ReportedReady when the kubelet has posted a Ready status since it came
// back, PodsRecovered when the node's pods are Ready again. A kubelet that
// exits or does not report Ready is a failed restart, named with its log.
func (r *realNodes) restarter(st *profiles.Storm, gates map[string]bool) storm.Restarter {
	return realnode.Restarter{
		Node: r.node, Kind: st.Kind, RuntimeMode: st.RuntimeMode, Gates: gates, Now: r.o.Clock.Now,
		Recover: func(ctx context.Context, n realnode.Runner, rs storm.Restart, back time.Time, rec *storm.Recorder) error {
			return r.awaitRecovery(ctx, n, rs, st, back, rec)
		},
	}
}

// awaitRecovery waits until n, whose kubelet came back at back, has
// reported Ready and its pods are Ready again.
func (r *realNodes) awaitRecovery(ctx context.Context, n realnode.Runner, rs storm.Restart, st *profiles.Storm, back time.Time, rec *storm.Recorder) error {
	timeout := st.RecoveryTimeout.Duration
	if timeout == 0 {
		timeout = 10 * time.Minute
	}
	// The harness polls from the watch cache (resourceVersion 0) every
	// 500 ms: two cheap reads a second per recovering real node, and the
	// resolution of its recovery figures.
	// After a kubelet start, the Ready status it posts (it PATCHes its
	// node status once at start; heartbeat times have second precision).
	// The kubelet of a runtime restart posts status only on a change, so
	// there Ready at all counts.
	since := back.Truncate(time.Second)
	if st.Kind == profiles.StormRuntime {
		since = time.Time{}
	}
	reported := false
	w := poll.Wait{Clock: r.o.Clock, Interval: 500 * time.Millisecond, Timeout: timeout, What: "waiting for the restarted node's recovery"}
	return w.Until(ctx, func(ctx context.Context) (bool, string, error) {
		if !n.KubeletAlive() {
			return false, "", fmt.Errorf("kubelet exited (%s)", n.KubeletExit())
		}
		if !reported {
			node, err := r.o.Target.Client.CoreV1().Nodes().Get(ctx, rs.Node, metav1.GetOptions{ResourceVersion: "0"})
			if err != nil || !readySince(node, since) {
				return false, "not reported Ready since its kubelet came back", nil
			}
			reported = true
			rec.Mark(storm.StepReportedReady)
		}
		pods, err := r.o.Target.Client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + rs.Node, ResourceVersion: "0"})
		if err != nil || !allReady(pods.Items) {
			return false, "pods not all Ready", nil
		}
		rec.Mark(storm.StepPodsRecovered)
		return true, "", nil
	})
}

// readySince reports whether the node's Ready condition is True with a
// heartbeat at or after t.
func readySince(n *corev1.Node, t time.Time) bool {
	c := fleet.NodeReadyCondition(n)
	return c != nil && c.Status == corev1.ConditionTrue && !c.LastHeartbeatTime.Time.Before(t)
}

func allReady(pods []corev1.Pod) bool {
	for i := range pods {
		p := &pods[i]
		if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		if !fleet.PodReady(p) {
			return false
		}
	}
	return true
}
