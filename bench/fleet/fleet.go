package fleet

import (
	"cmp"
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"

	"github.com/stormbench/stormbench/bench/poll"
	"github.com/stormbench/stormbench/profiles"
)

// Progress receives progress of long steps. Implementations draw a bar on a
// TTY or print periodic lines; bench code never prints.
type Progress interface {
	// Start begins a step of total units.
	Start(step string, total int)
	// Add reports n more units done.
	Add(n int)
	// Set reports the absolute number of units done.
	Set(n int)
	// Done ends the step.
	Done()
}

// NopProgress discards progress.
type NopProgress struct{}

func (NopProgress) Start(string, int) {}
func (NopProgress) Add(int)           {}
func (NopProgress) Set(int)           {}
func (NopProgress) Done()             {}

var _ Progress = NopProgress{}

// Fleet provisions one run's nodes and workloads.
type Fleet struct {
	client   kubernetes.Interface
	opts     Options
	plan     *Plan
	progress Progress

	clock   clock.Clock
	timings Timings
	fixer   StaleReadinessFixer
	fixed   atomic.Int64
	// startReal starts the plan's real nodes; Up calls it after creating
	// the KWOK nodes and before the workloads.
	startReal func(ctx context.Context, nodes []string) error
}

// SetRealNodeStarter installs what starts the plan's real kubelet nodes
// (Plan.RealNodes). Up refuses a plan with real nodes and no starter.
func (f *Fleet) SetRealNodeStarter(start func(ctx context.Context, nodes []string) error) {
	f.startReal = start
}

// SetStaleReadinessFixer installs the fixer WaitReady uses for pods left not
// ready by the node-lifecycle controller; nil leaves them alone.
func (f *Fleet) SetStaleReadinessFixer(fix StaleReadinessFixer) { f.fixer = fix }

// StaleReadinessFixed counts pods the fixer set Ready again.
func (f *Fleet) StaleReadinessFixed() int64 { return f.fixed.Load() }

// Timings are the provisioning milestones of the last Up, measured from its
// start.
type Timings struct {
	// NodesCreated is when the last node create returned.
	NodesCreated time.Duration
	// ObjectsCreated is when the last workload create returned.
	ObjectsCreated time.Duration
	// NodesReady is when every node was first seen Ready.
	NodesReady time.Duration
	// PodsReady is when every pod was first seen Ready.
	PodsReady time.Duration
}

// Timings returns the milestones of the last Up.
func (f *Fleet) Timings() Timings { return f.timings }

// Options are how a fleet is created and waited for.
type Options struct {
	// CreateParallelism bounds concurrent create requests.
	CreateParallelism int
	// ReadyTimeout bounds Up's wait for every node and pod to be Ready.
	ReadyTimeout time.Duration
}

// New prepares a fleet for runID from a defaulted fleet spec (NewPlan).
func New(client kubernetes.Interface, runID string, spec profiles.Fleet, progress Progress) (*Fleet, error) {
	if spec.Nodes > MaxNodes {
		return nil, fmt.Errorf("fleet of %d nodes exceeds the maximum of %d", spec.Nodes, MaxNodes)
	}
	plan, err := NewPlan(runID, spec)
	if err != nil {
		return nil, err
	}
	return FromPlan(client, plan, Options{CreateParallelism: spec.CreateParallelism, ReadyTimeout: spec.ReadyTimeout.Duration}, progress)
}

// FromPlan prepares a fleet that creates what plan holds: a profile's
// (New), or one composed elsewhere (the calibration's pinned workloads and
// bystanders).
func FromPlan(client kubernetes.Interface, plan *Plan, opts Options, progress Progress) (*Fleet, error) {
	if n := len(plan.KWOKNodes) + len(plan.RealNodes); n != plan.Nodes {
		return nil, fmt.Errorf("fleet plan of %d nodes lists %d KWOK and %d real ones", plan.Nodes, len(plan.KWOKNodes), len(plan.RealNodes))
	}
	if opts.CreateParallelism < 1 {
		return nil, fmt.Errorf("fleet create parallelism %d: want at least 1", opts.CreateParallelism)
	}
	return &Fleet{client: client, opts: opts, plan: plan, progress: cmp.Or[Progress](progress, NopProgress{}), clock: clock.RealClock{}}, nil
}

// SetClock sets the clock the fleet times its provisioning and waits on
// (the real clock unless a run injects its own).
func (f *Fleet) SetClock(clk clock.Clock) { f.clock = clk }

// Plan returns what the fleet consists of.
func (f *Fleet) Plan() *Plan { return f.plan }

// RunSelector selects the run's objects.
func (f *Fleet) RunSelector() string { return RunLabel + "=" + f.plan.RunID }

// Up creates the namespace, nodes and workloads, skipping objects that exist
// already (so a re-run continues where a previous one stopped), and waits
// until every node and pod is Ready.
func (f *Fleet) Up(ctx context.Context) error {
	start := f.clock.Now()
	f.timings = Timings{}
	if err := f.createNamespace(ctx); err != nil {
		return err
	}
	if err := f.createNodes(ctx); err != nil {
		return err
	}
	if len(f.plan.RealNodes) > 0 {
		if f.startReal == nil {
			return fmt.Errorf("the fleet has %d real kubelet nodes and nothing to start them (fleet.realKubelets needs the embedded cluster)", len(f.plan.RealNodes))
		}
		if err := f.startReal(ctx, f.plan.RealNodes); err != nil {
			return fmt.Errorf("starting real kubelet nodes: %w", err)
		}
	}
	f.timings.NodesCreated = f.clock.Since(start)
	if err := f.createObjects(ctx); err != nil {
		return err
	}
	f.timings.ObjectsCreated = f.clock.Since(start)
	return f.waitReady(ctx, f.opts.ReadyTimeout, start)
}

func (f *Fleet) createNamespace(ctx context.Context) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: f.plan.Namespace, Labels: map[string]string{RunLabel: f.plan.RunID}}}
	if _, err := f.client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", ns.Name, err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "stormbench-workload", Namespace: f.plan.Namespace, Labels: map[string]string{RunLabel: f.plan.RunID}}}
	if _, err := f.client.CoreV1().ServiceAccounts(f.plan.Namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating service account: %w", err)
	}
	// The ServiceAccount admission plugin rejects pods until the
	// controller manager has created the namespace's "default" account.
	w := poll.Wait{Clock: f.clock, Interval: 200 * time.Millisecond, Timeout: time.Minute,
		What: "waiting for service account " + f.plan.Namespace + "/default (created by kube-controller-manager)"}
	return w.Until(ctx, func(ctx context.Context) (bool, string, error) {
		_, err := f.client.CoreV1().ServiceAccounts(f.plan.Namespace).Get(ctx, "default", metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		return true, "", nil
	})
}

func (f *Fleet) createNodes(ctx context.Context) error {
	// One LIST (from the watch cache) instead of a create per node that
	// exists already: a rerun or a restored snapshot creates nothing.
	existing := map[string]bool{}
	if nodes, err := f.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: f.RunSelector(), ResourceVersion: "0"}); err == nil {
		for i := range nodes.Items {
			existing[nodes.Items[i].Name] = true
		}
	}
	f.progress.Start("creating nodes", len(f.plan.KWOKNodes))
	defer f.progress.Done()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(f.opts.CreateParallelism)
	// Real kubelet nodes register themselves.
	for _, spec := range f.plan.KWOKNodes {
		node, err := BuildNode(spec)
		if err != nil {
			return err
		}
		if existing[node.Name] {
			f.progress.Add(1)
			continue
		}
		g.Go(func() error {
			created, err := f.client.CoreV1().Nodes().Create(gctx, node, metav1.CreateOptions{})
			if err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("creating node %q: %w", node.Name, err)
			}
			// Its CSINode, which a real node's kubelet would have
			// created at its first start.
			if err == nil {
				_, err = f.client.StorageV1().CSINodes().Create(gctx, CSINode(node.Name, created.UID), metav1.CreateOptions{})
				if err != nil && !apierrors.IsAlreadyExists(err) {
					return fmt.Errorf("creating CSINode %q: %w", node.Name, err)
				}
			}
			f.progress.Add(1)
			return nil
		})
	}
	return g.Wait()
}

func (f *Fleet) createObjects(ctx context.Context) error {
	existing := f.existingObjects(ctx)
	f.progress.Start("creating workloads", len(f.plan.Objects))
	defer f.progress.Done()
	// Dependencies (ConfigMaps, Secrets, Services) go in first, as a group.
	phase := func(o runtime.Object) int { return min(objectOrder(o), 1) }
	var i int
	for i < len(f.plan.Objects) {
		j := i
		first := phase(f.plan.Objects[i])
		for j < len(f.plan.Objects) && phase(f.plan.Objects[j]) == first {
			j++
		}
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(f.opts.CreateParallelism)
		for _, obj := range f.plan.Objects[i:j] {
			if existing[objectKey(obj)] {
				f.progress.Add(1)
				continue
			}
			g.Go(func() error {
				if err := f.create(gctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
					return err
				}
				f.progress.Add(1)
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			return err
		}
		i = j
	}
	return nil
}

// existingObjects returns the keys (objectKey) of the run's workload
// objects that exist, from one LIST per kind the plan holds, served from
// the watch cache. Pods are listed too when the plan holds standalone
// ones: without it an existing fleet's standalone pods were created again
// and answered 409 (45 POST pods in a quick run on an existing fleet,
// issue 45); the LIST returns the controllers' pods as well, one request
// in place of one per standalone pod. A kind whose LIST fails is simply
// not skipped.
func (f *Fleet) existingObjects(ctx context.Context) map[string]bool {
	out := map[string]bool{}
	kinds := map[string]bool{}
	for _, o := range f.plan.Objects {
		k, _, _ := strings.Cut(objectKey(o), "/")
		kinds[k] = true
	}
	ns, core, apps := f.plan.Namespace, f.client.CoreV1(), f.client.AppsV1()
	opts := metav1.ListOptions{LabelSelector: f.RunSelector(), ResourceVersion: "0"}
	for _, k := range []struct {
		kind string
		list func() (runtime.Object, error)
	}{
		{"configmap", func() (runtime.Object, error) { return core.ConfigMaps(ns).List(ctx, opts) }},
		{"secret", func() (runtime.Object, error) { return core.Secrets(ns).List(ctx, opts) }},
		{"service", func() (runtime.Object, error) { return core.Services(ns).List(ctx, opts) }},
		{"pod", func() (runtime.Object, error) { return core.Pods(ns).List(ctx, opts) }},
		{"deployment", func() (runtime.Object, error) { return apps.Deployments(ns).List(ctx, opts) }},
		{"statefulset", func() (runtime.Object, error) { return apps.StatefulSets(ns).List(ctx, opts) }},
		{"daemonset", func() (runtime.Object, error) { return apps.DaemonSets(ns).List(ctx, opts) }},
		{"poddisruptionbudget", func() (runtime.Object, error) { return f.client.PolicyV1().PodDisruptionBudgets(ns).List(ctx, opts) }},
	} {
		if !kinds[k.kind] {
			continue // no LIST for a kind the plan lacks
		}
		if l, err := k.list(); err == nil {
			_ = meta.EachListItem(l, func(o runtime.Object) error {
				if a, err := meta.Accessor(o); err == nil {
					out[k.kind+"/"+a.GetName()] = true
				}
				return nil
			})
		}
	}
	return out
}

// objectKey names a workload object as create's messages do: kind/name,
// the kind its type's name in lower case ("poddisruptionbudget/web").
func objectKey(obj runtime.Object) string {
	a, err := meta.Accessor(obj)
	if err != nil {
		return fmt.Sprintf("%T/", obj)
	}
	return strings.ToLower(reflect.TypeOf(obj).Elem().Name()) + "/" + a.GetName()
}

func (f *Fleet) create(ctx context.Context, obj runtime.Object) error {
	ns := f.plan.Namespace
	opts := metav1.CreateOptions{}
	var err error
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		_, err = f.client.CoreV1().ConfigMaps(ns).Create(ctx, o, opts)
	case *corev1.Secret:
		_, err = f.client.CoreV1().Secrets(ns).Create(ctx, o, opts)
	case *corev1.Service:
		_, err = f.client.CoreV1().Services(ns).Create(ctx, o, opts)
	case *corev1.Pod:
		_, err = f.client.CoreV1().Pods(ns).Create(ctx, o, opts)
	case *appsv1.Deployment:
		_, err = f.client.AppsV1().Deployments(ns).Create(ctx, o, opts)
	case *appsv1.StatefulSet:
		_, err = f.client.AppsV1().StatefulSets(ns).Create(ctx, o, opts)
	case *appsv1.DaemonSet:
		_, err = f.client.AppsV1().DaemonSets(ns).Create(ctx, o, opts)
	case *policyv1.PodDisruptionBudget:
		_, err = f.client.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, o, opts)
	default:
		return fmt.Errorf("workload object of unsupported type %T", obj)
	}
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating %s: %w", objectKey(obj), err)
	}
	return err
}

// WaitReady waits until every node of the run is Ready and the expected
// number of pods are Ready. On timeout the error says what is not Ready and
// why, for example "37/2000 pods not Ready: 35 Pending (Unschedulable: ...)".
func (f *Fleet) WaitReady(ctx context.Context, timeout time.Duration) error {
	return f.waitReady(ctx, timeout, time.Time{})
}

func (f *Fleet) waitReady(ctx context.Context, timeout time.Duration, start time.Time) error {
	w, err := f.watchReadiness(ctx)
	if err != nil {
		return err
	}
	defer close(w.stop)
	f.progress.Start("waiting for nodes and pods to be Ready", f.plan.Nodes+f.plan.ExpectedPods)
	defer f.progress.Done()
	fixes := newFixQueue(ctx, f.fixer, &f.fixed)
	defer fixes.wait()
	wait := poll.Wait{Clock: f.clock, Interval: time.Second, Timeout: timeout, What: "waiting for the fleet to be Ready"}
	return wait.Until(ctx, func(context.Context) (bool, string, error) {
		// The readiness, and the pods whose readiness looks stale (see
		// StaleReadinessFixer).
		var stale []*corev1.Pod
		r := w.tally.read(f.plan, staleCandidates(f.plan, f.clock.Now(), &stale))
		f.progress.Set(r.ReadyNodes + r.ReadyPods)
		if !start.IsZero() && f.timings.NodesReady == 0 && r.ReadyNodes == r.Nodes {
			f.timings.NodesReady = f.clock.Since(start)
		}
		if r.Complete() {
			if !start.IsZero() {
				f.timings.PodsReady = f.clock.Since(start)
			}
			return true, "", nil
		}
		fixes.add(stale)
		return false, r.String(), nil
	})
}

// Delete removes every object of runID: it deletes the run's namespaces
// (and so every workload), waits until their pods are gone, then deletes
// the run's nodes and waits until they are gone, or says what is left on
// timeout. It touches only objects with the run label.
func Delete(ctx context.Context, client kubernetes.Interface, runID string, timeout time.Duration, progress Progress) error {
	progress = cmp.Or[Progress](progress, NopProgress{})
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	sel := labels.Set{RunLabel: runID}.AsSelector().String()
	nss, err := client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return fmt.Errorf("listing run namespaces: %w", err)
	}
	for _, ns := range nss.Items {
		if ns.DeletionTimestamp == nil {
			if err := client.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("deleting namespace %s: %w", ns.Name, err)
			}
		}
	}
	// Pods on real kubelet nodes: their kubelets may be stopped already
	// and would never confirm the deletion, so they go at once, again
	// while the namespace goes (its controllers may still make pods).
	realSel := labels.Set{RunLabel: runID, TypeLabel: RealNodeType}.AsSelector().String()
	var realNodes []string
	if real, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: realSel}); err == nil {
		for _, n := range real.Items {
			realNodes = append(realNodes, n.Name)
		}
	}
	forceReal := func() {
		zero := int64(0)
		for _, n := range realNodes {
			for _, ns := range nss.Items {
				_ = client.CoreV1().Pods(ns.Name).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{FieldSelector: "spec.nodeName=" + n})
			}
		}
	}
	forceReal()
	progress.Start("deleting workloads", len(nss.Items))
	// Pods go first, while their nodes still exist and KWOK can finish their
	// deletion; orphans would wait for the pod GC controller instead.
	if err := waitGone(ctx, "run namespaces", len(nss.Items), progress, func() (runtime.Object, error) {
		forceReal()
		return client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: sel})
	}); err != nil {
		progress.Done()
		return err
	}
	progress.Done()
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return fmt.Errorf("listing run nodes: %w", err)
	}
	progress.Start("deleting nodes", len(nodes.Items))
	defer progress.Done()
	if len(nodes.Items) > 0 {
		if err := client.CoreV1().Nodes().DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: sel}); err != nil {
			return fmt.Errorf("deleting run nodes: %w", err)
		}
	}
	return waitGone(ctx, "run nodes", len(nodes.Items), progress, func() (runtime.Object, error) {
		return client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: sel})
	})
}

// waitGone polls list until it finds none of the total objects (what)
// left, setting progress to how many are gone.
func waitGone(ctx context.Context, what string, total int, progress Progress, list func() (runtime.Object, error)) error {
	left := -1
	w := poll.Wait{Interval: time.Second, What: "waiting for " + what + " to be deleted"}
	return w.Until(ctx, func(context.Context) (bool, string, error) {
		if l, err := list(); err == nil {
			left = meta.LenList(l)
			progress.Set(total - left)
		}
		return left == 0, fmt.Sprintf("%d left", left), nil
	})
}
