package calibrate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stormbench/stormbench/bench/kubelet"
	"github.com/stormbench/stormbench/bench/poll"
	"github.com/stormbench/stormbench/bench/realnode"
	"github.com/stormbench/stormbench/bench/storm"
)

// One case: both sides restarted at once, and what each sent and flipped.

// runCase restarts every node of both sides at the same moment, watches
// for the downtime plus the case's observation time, and builds its rows.
func (c *calibration) runCase(ctx context.Context, cs Case) (cr CaseResult, err error) {
	cr = CaseResult{Case: cs}
	// The simulated kubelets are of the real ones' version: the embedded
	// cluster's (--kube-version; the default unless it says otherwise),
	// whose folder the real kubelets come from.
	sim, err := kubelet.NewSimulator(kubelet.Config{
		Base: c.o.Target.Config, Harness: c.o.Target.Client, RunID: c.o.RunID, Kind: cs.Kind,
		Version: c.o.Embedded.KubeVersion(), Gates: cs.Gates, RuntimeMode: cs.RuntimeMode,
		InitDuration: c.o.InitDuration, Seed: c.o.Seed, RecoveryTimeout: 5 * time.Minute,
		KubeAPIQPS: c.o.KubeAPIQPS, KubeAPIBurst: c.o.KubeAPIBurst,
	})
	if err != nil {
		return cr, err
	}
	if err := c.audit.mark(); err != nil {
		return cr, err
	}
	cpu0 := selfCPU()
	t0 := c.o.Clock.Now()
	host, err := c.startHost(ctx, t0)
	if err != nil {
		return cr, err
	}
	defer host.Dispose()
	if err := c.restartAll(ctx, cs, sim, t0, &cr); err != nil {
		return cr, err
	}
	if err := poll.SleepUntil(ctx, c.o.Clock, t0.Add(cs.Downtime+cs.Observe)); err != nil {
		return cr, err
	}
	if cs.DeletePods > 0 {
		// Restored after the window: the next case's settle waits for the
		// replacement pods.
		defer func() {
			if serr := c.scale(context.WithoutCancel(ctx), c.o.PodsPerNode); serr != nil && err == nil {
				err = serr
			}
		}()
	}
	// The window is the case's, downtime plus observation, on both sides:
	// a simulated kubelet may hold its node longer than that before it
	// hands it back (kubelet kwokRequeueAfter), and what comes after the
	// window is not counted for either side.
	end := t0.Add(cs.Downtime + cs.Observe)
	simCPU := selfCPU() - cpu0
	if cr.Host, err = caseHostOver(ctx, host, end); err != nil {
		return cr, err
	}
	c.readRealUsage(&cr)
	reqs, err := c.audit.since()
	if err != nil {
		return cr, err
	}
	cr.Rows = c.rows(cs, reqs, t0, end, simCPU, cr.realUsage)
	if cr.Host != nil && cr.Host.Bound {
		judgeHostBound(cr.Rows, c.o.Tolerance, cr.Host)
	}
	return cr, nil
}

// restartAll restarts every node of both sides at t0 through one driver,
// as a run does: each node's restart goes to its real kubelet or to the
// model (storm.ByNode). It counts the restarts and their errors in cr,
// and deletes pods or ends containers halfway through the downtime when
// the case says so.
func (c *calibration) restartAll(ctx context.Context, cs Case, sim *kubelet.Simulator, t0 time.Time, cr *CaseResult) error {
	restarter := storm.ByNode(c.real.has, storm.RestarterFunc(func(ctx context.Context, r storm.Restart) storm.Outcome {
		n := c.nodes[r.Node]
		rec := storm.NewRecorder(r, cs.Kind, true, c.o.Clock.Now)
		rec.Mark(storm.StepDown)
		if _, err := n.Restart(ctx, cs.Kind, cs.RuntimeMode, r.Downtime, cs.Gates); err != nil {
			return rec.Outcome(fmt.Errorf("%w (kubelet log: %s)", err, n.KubeletLog()))
		}
		rec.Mark(storm.StepKubeletStart)
		return rec.Outcome(nil)
	}), sim)
	var mu sync.Mutex
	c.starts, c.downs = map[string]time.Time{}, map[string]time.Time{}
	g, gctx := errgroup.WithContext(ctx)
	for i, node := range c.allNodes() {
		g.Go(func() error {
			o := restarter.Restart(gctx, storm.Restart{Node: node, Downtime: cs.Downtime, Index: i})
			mu.Lock()
			defer mu.Unlock()
			c.starts[node], c.downs[node] = o.KubeletStart, o.Down
			switch {
			case o.Err != nil && o.Real:
				cr.Errors = append(cr.Errors, fmt.Sprintf("real node %s: %v", node, o.Err))
			case o.Err != nil:
				cr.Errors = append(cr.Errors, fmt.Sprintf("simulated node %s: %v", node, o.Err))
			case o.Real:
				cr.Restarts.Real++
			default:
				cr.Restarts.Simulated++
			}
			return nil
		})
	}
	if cs.DeletePods > 0 {
		g.Go(func() error {
			if err := poll.SleepUntil(gctx, c.o.Clock, t0.Add(cs.Downtime/2)); err != nil {
				return err
			}
			return c.scale(gctx, c.o.PodsPerNode-cs.DeletePods)
		})
	}
	if cs.ExitContainers > 0 {
		g.Go(func() error {
			if err := poll.SleepUntil(gctx, c.o.Clock, t0.Add(cs.Downtime/2)); err != nil {
				return err
			}
			return c.exitContainers(gctx, sim, cs.ExitContainers)
		})
	}
	return g.Wait()
}

// readRealUsage records each real kubelet's usage in cr, or that it exited.
func (c *calibration) readRealUsage(cr *CaseResult) {
	for _, name := range c.real.nodes {
		n := c.nodes[name]
		if !n.KubeletAlive() {
			cr.Errors = append(cr.Errors, fmt.Sprintf("real node %s: kubelet exited (%s); log: %s", name, n.KubeletExit(), n.KubeletLog()))
			continue
		}
		u, err := n.KubeletUsage()
		if err == nil {
			cr.realUsage = append(cr.realUsage, u)
		}
	}
}

// containerKiller is a real node that can kill one of its containers
// (realnode.ContainerdNode).
type containerKiller interface {
	KillContainer(id string) error
}

// exitContainers ends the containers of the first n pods (by name) of
// every node while its kubelet is down: on a real node killed through its
// containerd, on a simulated one recorded in the model.
func (c *calibration) exitContainers(ctx context.Context, sim *kubelet.Simulator, n int) error {
	l, err := c.o.Target.Client.CoreV1().Pods(c.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("listing pods to kill their containers: %w", err)
	}
	byNode := map[string][]corev1.Pod{}
	for _, p := range l.Items {
		if p.DeletionTimestamp == nil {
			byNode[p.Spec.NodeName] = append(byNode[p.Spec.NodeName], p)
		}
	}
	var errs []error
	for _, node := range c.allNodes() {
		pods := byNode[node]
		slices.SortFunc(pods, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
		if len(pods) < n {
			errs = append(errs, fmt.Errorf("node %s has %d pods, want %d to kill containers of", node, len(pods), n))
			continue
		}
		for _, p := range pods[:n] {
			if c.sim.has(node) {
				for _, ct := range p.Spec.Containers {
					sim.ExitContainer(node, p.Namespace, p.Name, ct.Name)
				}
				continue
			}
			k, ok := c.nodes[node].(containerKiller)
			if !ok {
				errs = append(errs, fmt.Errorf("real node %s cannot kill containers (backend %s)", node, c.o.Backend))
				continue
			}
			for _, st := range p.Status.ContainerStatuses {
				if err := k.KillContainer(st.ContainerID); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	return errors.Join(errs...)
}

// selfCPU is stormbench's own user+system CPU time in seconds (not its
// children's: the real kubelets are measured apart).
func selfCPU() float64 {
	u, err := realnode.ProcUsage(os.Getpid())
	if err != nil {
		return 0
	}
	return u.CPUSeconds
}
