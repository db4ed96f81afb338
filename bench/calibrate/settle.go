package calibrate

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stormbench/stormbench/bench/fleet"
	"github.com/stormbench/stormbench/bench/kubeversion"
	"github.com/stormbench/stormbench/bench/poll"
)

// Between cases: waiting until every node and pod is Ready and the last case's traces are gone.

// waitNodes waits until every node is registered and Ready, and says which
// are not, with the kubelet log of a real one, when it expires.
func (c *calibration) waitNodes(ctx context.Context, timeout time.Duration) error {
	return c.waitFor(ctx, "waiting for the nodes to be Ready", timeout, func() (string, error) {
		var notReady []string
		for _, name := range append(c.allNodes(), c.bystanders...) {
			if n, ok := c.nodes[name]; ok && !n.KubeletAlive() {
				return "", fmt.Errorf("real node %s: its kubelet exited (%s); log: %s", name, n.KubeletExit(), n.KubeletLog())
			}
			node, err := c.o.Target.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil || !fleet.NodeReady(node) {
				what := name
				if n, ok := c.nodes[name]; ok {
					what += " (log: " + n.KubeletLog() + ")"
				}
				if apierrors.IsNotFound(err) {
					what += " not registered"
				}
				notReady = append(notReady, what)
			}
		}
		if len(notReady) == 0 {
			return "", nil
		}
		return "nodes not Ready: " + strings.Join(notReady, ", "), nil
	})
}

// settle waits until the next case can start: every node Ready, every
// pod Ready with the case's probe and none terminating, the ReplicaSet
// controller's event for every pod's creation recorded, and every
// container past the prober's restart grace period.
func (c *calibration) settle(ctx context.Context, timeout time.Duration) error {
	if err := c.waitNodes(ctx, timeout); err != nil {
		return err
	}
	if err := c.waitPodsReady(ctx, timeout); err != nil {
		return err
	}
	pods, err := c.waitCreateEvents(ctx, eventsTimeout)
	if err != nil {
		return err
	}
	return c.waitContainersPastGrace(ctx, pods)
}

// waitContainersPastGrace waits until every running container of the
// run's pods started more than the prober's restart grace period ago.
// With the preserving gate a kubelet still resets the readiness of a
// container started within kubeletRestartGracePeriod before its own start
// (prober/worker.go doProbe; kubeversion.KubeletRestartGrace): right after a rollout
// to another probe, a kubelet/preserve case on new pods flipped 2 of 5 pods
// per restart on the real side and 2.5 on the model, which measured the
// rollout, not the gate.
// pods is the run's pods as settle last listed them.
func (c *calibration) waitContainersPastGrace(ctx context.Context, pods []corev1.Pod) error {
	latest := latestContainerStart(pods)
	until := latest.Add(kubeversion.KubeletRestartGrace + graceMargin)
	wait := until.Sub(c.o.Clock.Now())
	if wait <= 0 {
		return nil
	}
	c.o.Logf("Waiting %s until every container started more than %s ago (the prober's restart grace period)", wait.Round(100*time.Millisecond), kubeversion.KubeletRestartGrace)
	return poll.SleepUntil(ctx, c.o.Clock, until)
}

// graceMargin is added to the grace period: container start times have
// a resolution of one second.
const graceMargin = 2 * time.Second

// latestContainerStart is the latest start time of a running container of
// a live pod, or the zero time.
func latestContainerStart(pods []corev1.Pod) time.Time {
	var latest time.Time
	for i := range pods {
		if pods[i].DeletionTimestamp != nil {
			continue
		}
		for _, cs := range pods[i].Status.ContainerStatuses {
			if r := cs.State.Running; r != nil && r.StartedAt.After(latest) {
				latest = r.StartedAt.Time
			}
		}
	}
	return latest
}

// eventsTimeout bounds settle's wait for the ReplicaSet controller's
// events: client-go's event sink retries a failed write after 10 s, up to
// 12 times (tools/record/event.go defaultSleepDuration, maxTriesPerEvent),
// so a busy API server can delay one by tens of seconds.
const eventsTimeout = time.Minute

// waitCreateEvents waits until every live pod's "Created pod" event is
// recorded. The controller writes its events asynchronously, after the
// pod (controller_utils.go CreatePods), and on a loaded machine the last
// of the first start's could arrive after the pods were Ready and count
// as the first case's, on one side only (a CI run, load 4.2: 1.5 ReplicaSet
// events per restart simulated, 0 real, in kubelet/legacy). If the events
// do not come, the case runs anyway and the log says so: an event lost
// for good does not make the run fail, and one that arrives late shows
// in the table as a row the real kubelet does not explain.
// It returns the pods it listed last, for the grace-period wait.
func (c *calibration) waitCreateEvents(ctx context.Context, timeout time.Duration) ([]corev1.Pod, error) {
	start, late := c.o.Clock.Now(), 0
	var pods []corev1.Pod
	err := c.waitFor(ctx, "waiting for the ReplicaSet controller's \"Created pod\" events", timeout, func() (string, error) {
		l, err := c.o.Target.Client.CoreV1().Pods(c.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return "listing pods: " + err.Error(), nil
		}
		pods = l.Items
		events, err := c.o.Target.Client.CoreV1().Events(c.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return "listing events: " + err.Error(), nil
		}
		if missing := missingCreateEvents(pods, events.Items); len(missing) > 0 {
			late = max(late, len(missing))
			return fmt.Sprintf("no \"Created pod\" event yet for %d pods (%s)", len(missing), strings.Join(firstN(missing, 4), ", ")), nil
		}
		return "", nil
	})
	if err != nil && ctx.Err() == nil {
		c.o.Logf("warning: %v; the next case runs anyway, and a late event counts in it", err)
		return pods, nil
	}
	if err == nil && late > 0 {
		c.o.Logf("Waited %s after the pods were Ready for the \"Created pod\" events of %d pods", c.o.Clock.Since(start).Round(100*time.Millisecond), late)
	}
	return pods, err
}

// missingCreateEvents returns the live pods owned by a ReplicaSet for
// which no event says the ReplicaSet created them (reason
// SuccessfulCreate, "Created pod: <name>", also when the event correlator
// combined it with similar ones).
func missingCreateEvents(pods []corev1.Pod, events []corev1.Event) []string {
	created := map[string]bool{}
	for i := range events {
		e := &events[i]
		if e.Reason != "SuccessfulCreate" || e.InvolvedObject.Kind != "ReplicaSet" {
			continue
		}
		if _, name, ok := strings.Cut(e.Message, "Created pod: "); ok {
			created[e.InvolvedObject.Name+"/"+name] = true
		}
	}
	var missing []string
	for i := range pods {
		p := &pods[i]
		ref := metav1.GetControllerOf(p)
		if p.DeletionTimestamp != nil || ref == nil || ref.Kind != "ReplicaSet" {
			continue
		}
		if !created[ref.Name+"/"+p.Name] {
			missing = append(missing, p.Name)
		}
	}
	sort.Strings(missing)
	return missing
}

// firstN returns the first n of s, with "…" after them when s is longer.
func firstN(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], "…")
	}
	return s
}

// waitPodsReady waits until each node's Deployment has all its pods, and
// each is Ready.
func (c *calibration) waitPodsReady(ctx context.Context, timeout time.Duration) error {
	want := 2 * c.o.Nodes * c.o.PodsPerNode
	return c.waitFor(ctx, "waiting for the pods to be Ready", timeout, func() (string, error) {
		pods, err := c.o.Target.Client.CoreV1().Pods(c.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return "listing pods: " + err.Error(), nil
		}
		ready, live, terminating, otherProbe := 0, 0, 0, 0
		var notReady []string
		for i := range pods.Items {
			p := &pods.Items[i]
			if p.DeletionTimestamp != nil {
				// Its kubelet's last writes would count in the case.
				terminating++
				continue
			}
			if p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded {
				continue
			}
			live++
			if podProbe(p) != c.probe {
				otherProbe++
			}
			if fleet.PodReady(p) {
				ready++
			} else if len(notReady) < 4 {
				notReady = append(notReady, p.Name+" on "+p.Spec.NodeName)
			}
		}
		if ready == want && live == want && terminating == 0 && otherProbe == 0 {
			return "", nil
		}
		return fmt.Sprintf("%d/%d pods Ready (%d live, %d terminating, %d not yet with %s probes; not Ready: %s)", ready, want, live, terminating, otherProbe, c.probe, strings.Join(notReady, ", ")), nil
	})
}

// waitFor polls check every 500 ms until it reports nothing left to wait
// for, fails, or timeout passes; then the error says what was awaited and
// what was left.
func (c *calibration) waitFor(ctx context.Context, what string, timeout time.Duration, check func() (string, error)) error {
	w := poll.Wait{Clock: c.o.Clock, Interval: 500 * time.Millisecond, Timeout: timeout, What: what}
	return w.Until(ctx, func(context.Context) (bool, string, error) {
		left, err := check()
		return left == "" && err == nil, left, err
	})
}
