package calibrate

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stormbench/stormbench/bench/poll"
	"github.com/stormbench/stormbench/bench/realnode"
	"github.com/stormbench/stormbench/bench/storm"
)

// One case: both sides restarted pair by pair, and what each sent and
// flipped.

// runCase restarts the nodes of both sides, the i-th real and the i-th
// simulated node together, Options.Stagger after the pair before
// (stagger), watches each for the downtime plus the case's observation
// time from its own restart, and builds its rows.
func (c *calibration) runCase(ctx context.Context, cs Case) (cr CaseResult, err error) {
	cr = CaseResult{Case: cs}
	sim, err := c.o.Model(cs)
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
	sched := c.schedule(cs)
	if err := c.restartAll(ctx, cs, sim, sched, t0, &cr); err != nil {
		return cr, err
	}
	// The case ends when the last pair's window does; what comes after
	// a node's own window is not counted for it on either side (a
	// simulated kubelet may hold its node longer than that before it hands
	// it back: kubelet kwokRequeueAfter).
	end := t0.Add(c.lastOffset + cs.Downtime + cs.Observe)
	if err := poll.SleepUntil(ctx, c.o.Clock, end); err != nil {
		return cr, err
	}
	if cs.DeletePods > 0 {
		// Restored after the window: the next case's settle waits for the
		// replacement pods.
		defer func() {
			if serr := c.scale(context.WithoutCancel(ctx), c.allNodes(), c.o.PodsPerNode); serr != nil && err == nil {
				err = serr
			}
		}()
	}
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

// schedule is a case's restarts: the i-th real node and the i-th
// simulated one restart together, in one of the case's slots Options.Stagger
// apart, each down for the case's downtime. It records each node's offset
// (window).
//
// The pairs take the slots in an order drawn for the case (scheduleOrder):
// a real kubelet's node-status loop keeps the phase its process started
// with (kubelet.go:1923, wait.JitterUntil(syncNodeStatus,
// nodeStatusUpdateFrequency, 0.04)), so with one order in every case each
// real kubelet would meet a runtime case's outage at the same point of its
// period: one phase for the whole side, where the model draws one a
// restart.
func (c *calibration) schedule(cs Case) []storm.Restart {
	var sched []storm.Restart
	c.offsets, c.lastOffset = map[string]time.Duration{}, 0
	for i, slot := range scheduleOrder(c.o.Seed, cs.Name, len(c.real.nodes)) {
		off := time.Duration(slot) * c.o.Stagger
		for _, node := range []string{c.real.nodes[i], c.sim.nodes[i]} {
			sched = append(sched, storm.Restart{Node: node, Offset: off, Downtime: cs.Downtime, Index: len(sched)})
			c.offsets[node] = off
		}
		c.lastOffset = max(c.lastOffset, off)
	}
	return sched
}

// scheduleOrder is the slot of each of n pairs in a case: a permutation of
// 0..n-1 drawn from the calibration's seed and the case's name, so a case
// is played in the same order every time and two cases in different ones.
func scheduleOrder(seed int64, caseName string, n int) []int {
	h := fnv.New64a()
	h.Write([]byte(caseName))
	return rand.New(rand.NewPCG(uint64(seed), h.Sum64())).Perm(n)
}

// nodeWindow is node's part of a case that ran from t0 to end: from its
// restart (t0 + its offset) for as long as the case watches a node
// (downtime and observation), so every node is watched as long whatever
// its place in the stagger. Without offsets it is [t0, end).
func (c *calibration) nodeWindow(node string, t0, end time.Time) (from, to time.Time) {
	off := c.offsets[node]
	return t0.Add(off), end.Add(off - c.lastOffset)
}

// inWindow says whether t falls in node's window (nodeWindow).
func (c *calibration) inWindow(node string, t, t0, end time.Time) bool {
	from, to := c.nodeWindow(node, t0, end)
	return !t.Before(from) && t.Before(to)
}

// restartAll plays sched from t0 through one driver, storm.Play, and the
// run's real-node restarter (realnode.Restarter), as a run does: each
// node's restart goes to its real kubelet or to the model (storm.ByNode);
// the case, not the restarter, decides how long a node is watched. It counts the restarts and their errors in cr, and
// deletes pods or ends containers of each node halfway through its
// downtime when the case says so.
func (c *calibration) restartAll(ctx context.Context, cs Case, sim Model, sched []storm.Restart, t0 time.Time, cr *CaseResult) error {
	// A real kubelet refuses a gate its release does not have: 1.34 has
	// no ChangeContainerStatusOnKubeletRestart and is always legacy, as
	// the model of 1.34 is, whatever the case sets. bench.Run passes its
	// real kubelets the same.
	gates := c.o.Embedded.KubeVersion().KubeletGates(cs.Gates)
	real := realnode.Restarter{
		Node: func(name string) realnode.Runner { return c.nodes[name] }, Kind: cs.Kind, RuntimeMode: cs.RuntimeMode,
		Gates: gates, Now: c.o.Clock.Now,
	}
	restarter := storm.ByNode(c.real.has, real, sim)
	var mu sync.Mutex
	var errs []error
	c.starts, c.downs = map[string]time.Time{}, map[string]time.Time{}
	err := storm.Play(ctx, c.o.Clock, sched, t0, func(ctx context.Context, r storm.Restart) {
		var g errgroup.Group
		if cs.DeletePods > 0 || cs.ExitContainers > 0 {
			g.Go(func() error {
				if err := poll.SleepUntil(ctx, c.o.Clock, t0.Add(r.Offset+cs.Downtime/2)); err != nil {
					return err
				}
				if cs.DeletePods > 0 {
					return c.scale(ctx, []string{r.Node}, c.o.PodsPerNode-cs.DeletePods)
				}
				return c.exitContainers(ctx, sim, r.Node, cs.ExitContainers)
			})
		}
		o := restarter.Restart(ctx, r)
		gerr := g.Wait()
		mu.Lock()
		defer mu.Unlock()
		if gerr != nil {
			errs = append(errs, gerr)
		}
		c.starts[r.Node], c.downs[r.Node] = o.KubeletStart, o.Down
		switch {
		case o.Err != nil && o.Real:
			cr.Errors = append(cr.Errors, fmt.Sprintf("%s: %v", r.Node, o.Err))
		case o.Err != nil:
			cr.Errors = append(cr.Errors, fmt.Sprintf("simulated node %s: %v", r.Node, o.Err))
		case o.Real:
			cr.Restarts.Real++
		default:
			cr.Restarts.Simulated++
		}
	})
	return errors.Join(append([]error{err}, errs...)...)
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
// node while its kubelet is down: on a real node killed through its
// containerd, on a simulated one recorded in the model.
func (c *calibration) exitContainers(ctx context.Context, sim Model, node string, n int) error {
	l, err := c.o.Target.Client.CoreV1().Pods(c.ns).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
	if err != nil {
		return fmt.Errorf("listing the pods of %s to kill their containers: %w", node, err)
	}
	var pods []corev1.Pod
	for _, p := range l.Items {
		if p.DeletionTimestamp == nil {
			pods = append(pods, p)
		}
	}
	slices.SortFunc(pods, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	if len(pods) < n {
		return fmt.Errorf("node %s has %d pods, want %d to kill containers of", node, len(pods), n)
	}
	var errs []error
	for _, p := range pods[:n] {
		if c.sim.has(node) {
			for _, ct := range p.Spec.Containers {
				sim.ExitContainer(node, p.Namespace, p.Name, ct.Name)
			}
			continue
		}
		k, ok := c.nodes[node].(containerKiller)
		if !ok {
			return fmt.Errorf("real node %s cannot kill containers (backend %s)", node, c.o.Backend)
		}
		for _, st := range p.Status.ContainerStatuses {
			if err := k.KillContainer(st.ContainerID); err != nil {
				errs = append(errs, err)
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
