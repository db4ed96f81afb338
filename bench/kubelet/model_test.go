package kubelet

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	certificatesv1beta1client "k8s.io/client-go/kubernetes/typed/certificates/v1beta1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

	"github.com/stormbench/stormbench/bench/cluster"
	"github.com/stormbench/stormbench/bench/fleet"
	"github.com/stormbench/stormbench/bench/kubelet/plan"
	"github.com/stormbench/stormbench/bench/kubeversion"
	"github.com/stormbench/stormbench/bench/storm"
	"github.com/stormbench/stormbench/bench/testutil"
	"github.com/stormbench/stormbench/profiles"
)

// TestRestartGolden runs each storm kind's state machine (Simulator.Restart)
// on a fake API server and compares what it did with
// testdata/restart/<case>.golden: every request in order (who sent it, verb,
// resource, subresource, object), each pod status write with the pod's
// readiness after it, the harness's own records, and the counters. The
// fake runs in a synctest bubble, so the model's clock.RealClock and the
// reflectors' timers run on the bubble's fake time: a 60 s downtime takes
// no time, and every time stamp is exact. go test -update rewrites the
// files; review the diff as a change of the model.
//
// The fake answers every LIST and delivers every watch event a millisecond
// after it happened (a round trip), so the kubelet's sync polls always see
// a list still in flight and its own writes before their watch events, the
// same way every run. It serves watch-list (sendInitialEvents) as the API
// server does, so the WatchListClient gate shows: one WATCH per informer
// with the gate on, a LIST and a WATCH with it off.
//
// A case of another Kubernetes version than the default (versionCases) is
// the same restart by a kubelet of that version, in
// testdata/versions/<version>/restart/<case>.golden.
func TestRestartGolden(t *testing.T) {
	cases := []restartCase{
		{name: "kubelet-preserve", cfg: func(c *Config) { c.Kind = profiles.StormKubelet }},
		{name: "kubelet-legacy", cfg: func(c *Config) {
			c.Kind = profiles.StormKubelet
			c.Gates = map[string]bool{profiles.GateChangeContainerStatusOnKubeletRestart: true}
		}},
		// A slow API server: each pod GET and status PATCH takes 1.5 s,
		// so the status manager is still busy with the first syncs when
		// the probes come, and the flips are written as one status each.
		{name: "kubelet-legacy-busy-status", podLatency: 1500 * time.Millisecond, cfg: func(c *Config) {
			c.Kind = profiles.StormKubelet
			c.Gates = map[string]bool{profiles.GateChangeContainerStatusOnKubeletRestart: true}
		}},
		// A downtime shorter than KWOK's requeue bound: the simulated
		// kubelet keeps its lease until kwokRequeueAfter has passed since
		// the relabel, then hands back.
		{name: "kubelet-short-downtime", down: 5 * time.Second, cfg: func(c *Config) {
			c.Kind = profiles.StormKubelet
		}},
		{name: "kubelet-watchlist-off", cfg: func(c *Config) {
			c.Kind = profiles.StormKubelet
			c.Gates = map[string]bool{profiles.GateWatchListClient: false}
		}},
		{name: "kubelet-init-flash", cfg: func(c *Config) {
			c.Kind = profiles.StormKubelet
			c.InitDuration = 5 * time.Second
		}},
		// Legacy readiness with the flash: the probes' writes go out
		// during the NotReady flash, not after it.
		{name: "kubelet-legacy-init-flash", cfg: func(c *Config) {
			c.Kind = profiles.StormKubelet
			c.Gates = map[string]bool{profiles.GateChangeContainerStatusOnKubeletRestart: true}
			c.InitDuration = 5 * time.Second
		}},
		{name: "kubelet-deleted-pod", cfg: func(c *Config) { c.Kind = profiles.StormKubelet }, mutate: func(f *restartFixture) {
			// Evicted while the kubelet was away: the kubelet finishes it.
			deleted := metav1.NewTime(f.t0.Add(-time.Minute))
			f.pods[1].DeletionTimestamp = &deleted
			f.pods[1].Generation = 2 // graceful deletion raises it
		}},
		{name: "kubelet-node-changes", cfg: func(c *Config) {
			c.Kind = profiles.StormKubelet
			c.NodeChanges = &profiles.NodeChanges{
				SetLabels: map[string]string{"pool": "blue"},
				AddTaints: []profiles.Taint{{Key: "maintenance", Value: "true", Effect: string(corev1.TaintEffectNoExecute)}},
			}
		}},
		// Containers that exited while the kubelet was down: a probed one
		// (web-0), the probed one beside a sidecar (web-1) and one
		// without a probe (the DaemonSet's). Each is terminated at the
		// first sync, running again with Pulled, Created and Started, and
		// ready at its first probe; the others keep their readiness.
		{name: "kubelet-exited-containers", exited: exitedContainers, cfg: func(c *Config) {
			c.Kind = profiles.StormKubelet
		}},
		// With the legacy gate the other probed containers flip as well.
		{name: "kubelet-legacy-exited-containers", exited: exitedContainers, cfg: func(c *Config) {
			c.Kind = profiles.StormKubelet
			c.Gates = map[string]bool{profiles.GateChangeContainerStatusOnKubeletRestart: true}
		}},
		{name: "runtime-refused", down: 60 * time.Second, cfg: func(c *Config) {
			c.Kind = profiles.StormRuntime
			c.RuntimeMode = profiles.RuntimeRefused
		}},
		{name: "runtime-hung", down: 60 * time.Second, cfg: func(c *Config) {
			c.Kind = profiles.StormRuntime
			c.RuntimeMode = profiles.RuntimeHung
		}},
		{name: "reboot", cfg: func(c *Config) { c.Kind = profiles.StormReboot }},
		// Ownership: a node of another run is refused after one GET, and
		// nothing is written (TestOwnership shows it on a real cluster).
		{name: "foreign-node", cfg: func(c *Config) {
			c.Kind = profiles.StormKubelet
			c.RunID = "another-run"
		}},
		// Pod requests that take 1.5 s keep the status manager behind the
		// pods' workers: what they hand over meanwhile goes out as one
		// write (status_updates_coalesced).
		{name: "reboot-busy-status", podLatency: 1500 * time.Millisecond, cfg: func(c *Config) { c.Kind = profiles.StormReboot }},
		// The pods' statuses go out during the NotReady flash, not after it.
		{name: "reboot-init-flash", cfg: func(c *Config) {
			c.Kind = profiles.StormReboot
			c.InitDuration = 5 * time.Second
		}},
		{name: "reboot-planned", cfg: func(c *Config) {
			c.Kind = profiles.StormReboot
			c.Planned = true
		}},
		// Events that take 50 ms each are still in the event sender's
		// queue when the plan that recorded them is over: every one is
		// sent all the same (the node's start-up events, the flash's
		// NodeReady last of its plan, the recreated containers').
		{name: "reboot-slow-events", eventLatency: 50 * time.Millisecond, cfg: func(c *Config) {
			c.Kind = profiles.StormReboot
			c.InitDuration = 5 * time.Second
		}},
	}
	for _, tc := range append(cases, versionCases()...) {
		golden, sub := "restart/"+tc.name+".golden", tc.name
		if !tc.version.IsZero() {
			golden = "versions/" + tc.version.String() + "/" + golden
			sub = tc.version.String() + "/" + tc.name
		}
		t.Run(sub, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				api, cfg, down, out, sim := tc.run(t)
				testutil.Golden(t, golden, api.render(tc.name, cfg, down, out, sim))
			})
		})
	}
}

// exitedContainers are the containers that exit while the kubelet is down
// in a golden with exited containers: a probed one (web-0), the probed one
// beside a sidecar (web-1) and one without a probe (the DaemonSet's).
var exitedContainers = []string{"ns/web-0/app", "ns/web-1/app", "kube-system/agent-n1/agent"}

// restartCase is one restart on the fake API server (TestRestartGolden).
type restartCase struct {
	name string
	// version is the simulated kubelet's Kubernetes version; zero is the
	// default.
	version kubeversion.Version
	cfg     func(*Config)
	// mutate changes the seeded objects.
	mutate func(*restartFixture)
	down   time.Duration
	// podLatency delays the kubelet's pod GETs and status PATCHes.
	podLatency time.Duration
	// eventLatency delays the kubelet's event creates and patches.
	eventLatency time.Duration
	// exited are "ns/pod/container"s that exit while the kubelet is
	// down (Simulator.ExitContainer).
	exited []string
}

// versionCases are the restart goldens of the versions other than the
// default: a kubelet restart with each readiness behaviour the version's
// kubelet has, preserve (the gate's default from 1.35) and legacy (the gate
// set, or v1.34.4, which has no gate and is always legacy). The gate is
// set only where it differs from the version's default. A version without
// the gate (always legacy) has its restart with exited containers too,
// which the default plays with readiness preserved (calibration case
// kubelet/exited). A version whose kubelet plays a reboot otherwise than
// the default's (plan.Release.SandboxReadyWrite) has its reboot too.
func versionCases() []restartCase {
	var out []restartCase
	for _, v := range kubeversion.Supported() {
		if v.IsDefault() {
			continue
		}
		g, _ := v.Gate(kubeversion.GateChangeContainerStatusOnKubeletRestart)
		for _, legacy := range []bool{true, false} {
			if g.Fixed && legacy != g.Default {
				continue
			}
			name := "kubelet-preserve"
			if legacy {
				name = "kubelet-legacy"
			}
			out = append(out, restartCase{name: name, version: v, cfg: func(c *Config) {
				c.Kind = profiles.StormKubelet
				if legacy != g.Default {
					c.Gates = map[string]bool{kubeversion.GateChangeContainerStatusOnKubeletRestart: legacy}
				}
			}})
		}
		if g.Fixed {
			out = append(out, restartCase{name: "kubelet-exited-containers", version: v, exited: exitedContainers,
				cfg: func(c *Config) { c.Kind = profiles.StormKubelet }})
		}
		if plan.ReleaseOf(v).SandboxReadyWrite != plan.ReleaseOf(kubeversion.Default).SandboxReadyWrite {
			out = append(out, restartCase{name: "reboot", version: v, cfg: func(c *Config) { c.Kind = profiles.StormReboot }})
		}
	}
	return out
}

// run restarts the fixture's node as tc says, in a synctest bubble, and
// returns the fake API server and what the restart was and did.
func (tc restartCase) run(t *testing.T) (*fakeAPI, Config, time.Duration, storm.Outcome, *Simulator) {
	t.Helper()
	f := newRestartFixture(time.Now())
	if tc.mutate != nil {
		tc.mutate(f)
	}
	api := newFakeAPI(f.t0, f.objects()...)
	api.podLatency, api.eventLatency = tc.podLatency, tc.eventLatency
	cfg := Config{
		Base:    &rest.Config{Host: "https://fake.invalid"},
		Harness: api.client("harness"),
		RunID:   f.runID,
		Seed:    7,
		Clock:   clock.RealClock{},
		Version: tc.version,
	}
	tc.cfg(&cfg)
	sim, err := NewSimulator(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sim.sessions = api.sessions(cfg.Clock)
	for _, e := range tc.exited {
		parts := strings.Split(e, "/")
		sim.ExitContainer(f.node, parts[0], parts[1], parts[2])
	}
	down := tc.down
	if down == 0 {
		down = 30 * time.Second
	}
	out := sim.Restart(context.Background(), storm.Restart{Node: f.node, Downtime: down})
	return api, cfg, down, out, sim
}

// restartFixture is the cluster a restart starts from: one node of the
// run, its lease and CSINode, a Service, and four pods: web-0 (an exec
// readiness probe, a ConfigMap volume, a projected token), web-1 (a probed
// container beside one without a probe, env from a Secret), web-2 (a
// startup probe and a readiness probe), and a DaemonSet's pod without
// probes.
type restartFixture struct {
	t0          time.Time
	node, runID string
	pods        []*corev1.Pod
}

func newRestartFixture(t0 time.Time) *restartFixture {
	f := &restartFixture{t0: t0, node: "n1", runID: "run1"}
	started := metav1.NewTime(t0.Add(-time.Hour))
	exec := func(period int32) *corev1.Probe {
		return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}, PeriodSeconds: period}
	}
	pod := func(ns, name, ip string, containers ...corev1.Container) *corev1.Pod {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID("uid-" + name)},
			Spec:       corev1.PodSpec{NodeName: f.node, Containers: containers},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}}, Conditions: []corev1.PodCondition{
				{Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionTrue},
				{Type: corev1.ContainersReady, Status: corev1.ConditionTrue},
				{Type: corev1.PodReady, Status: corev1.ConditionTrue},
			}},
		}
		tru := true
		for _, c := range containers {
			p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{
				Name: c.Name, Ready: true, Started: &tru, ContainerID: "containerd://" + name + "-" + c.Name,
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}},
			})
		}
		return p
	}
	expiry := int64(3607)
	web0 := pod("ns", "web-0", "10.244.1.3", corev1.Container{Name: "app", Image: "web:1", ReadinessProbe: exec(10)})
	web0.Spec.Volumes = []corev1.Volume{
		{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "web-config"}}}},
		{Name: "token", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{ExpirationSeconds: &expiry, Path: "token"}}}}}},
		{Name: "cache", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}},
	}
	web1 := pod("ns", "web-1", "10.244.1.4",
		corev1.Container{Name: "app", Image: "web:1", ReadinessProbe: exec(5),
			EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "web-secret"}}}}},
		corev1.Container{Name: "sidecar", Image: "proxy:1"})
	web2 := pod("ns", "web-2", "10.244.1.5", corev1.Container{Name: "app", Image: "web:1", StartupProbe: exec(10), ReadinessProbe: exec(10)})
	ds := pod("kube-system", "agent-n1", "10.244.1.2", corev1.Container{Name: "agent", Image: "agent:1"})
	ds.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "agent", UID: "uid-agent"}}
	f.pods = []*corev1.Pod{web0, web1, web2, ds}
	return f
}

func (f *restartFixture) objects() []runtime.Object {
	holder, seconds := f.node, int32(40)
	renewed := metav1.NewMicroTime(f.t0.Add(-3 * time.Second))
	objs := []runtime.Object{
		&corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: f.node, UID: types.UID("uid-" + f.node), Labels: map[string]string{
				fleet.RunLabel: f.runID, cluster.KubeletLabel: cluster.KubeletUp, corev1.LabelHostname: f.node}},
			Spec: corev1.NodeSpec{PodCIDR: "10.244.1.0/24"},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
				{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady"}},
				NodeInfo: corev1.NodeSystemInfo{ContainerRuntimeVersion: "kwok-0.8.0"}},
		},
		&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: f.node, Namespace: corev1.NamespaceNodeLease},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &seconds, RenewTime: &renewed}},
		&storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: f.node}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"}, Spec: corev1.ServiceSpec{ClusterIP: "10.96.0.10"}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: "ns"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web-config", Namespace: "ns"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "web-secret", Namespace: "ns"}},
	}
	for _, p := range f.pods {
		objs = append(objs, p)
	}
	return objs
}

// fakeAPI is an API server for the model: one object tracker, and a fake
// clientset per client (the harness's, and the kubelet's main, heartbeat
// and event clients), each recording what it was asked, in order.
type fakeAPI struct {
	t0      time.Time
	tracker k8stesting.ObjectTracker

	mu    sync.Mutex
	calls []call
	// generated counts the names given to objects created with a
	// generateName.
	generated int
	// podLatency is how long the kubelet's pod GETs and pods/status
	// PATCHes take.
	podLatency time.Duration
	// eventLatency is how long the kubelet's event writes take.
	eventLatency time.Duration
}

// call is one request as the golden file shows it.
type call struct {
	at     time.Duration
	client string
	// stream is who sends it: requests of one stream come from one
	// goroutine, in order.
	stream int
	seq    int
	text   string
}

// Streams, in the order a golden file lists requests of the same instant.
const (
	streamHarness = iota
	streamKubelet
	streamLease
	streamInformers
	streamEvents
)

// watchLatency is how long the fake takes to answer a LIST and to deliver
// a watch event.
const watchLatency = time.Millisecond

func newFakeAPI(t0 time.Time, objs ...runtime.Object) *fakeAPI {
	return &fakeAPI{t0: t0, tracker: fake.NewClientset(objs...).Tracker()}
}

// client returns a clientset on the shared tracker whose requests are
// recorded as name's.
func (f *fakeAPI) client(name string) *fake.Clientset {
	c := &fake.Clientset{}
	objects := k8stesting.ObjectReaction(f.tracker)
	c.AddReactor("*", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		switch {
		case a.GetVerb() == "create" && a.GetSubresource() == "eviction":
			// No PodDisruptionBudget: the API server deletes the pod.
			ev := a.(k8stesting.CreateActionImpl).GetObject().(*policyv1.Eviction)
			f.record(name, a, "")
			return true, nil, f.tracker.Delete(a.GetResource(), ev.Namespace, ev.Name)
		case a.GetVerb() == "create" && a.GetSubresource() == "token":
			tr := a.(k8stesting.CreateActionImpl).GetObject().(*authenticationv1.TokenRequest)
			f.record(name, a, "")
			return true, tr, nil
		case a.GetVerb() == "delete-collection":
			// Nothing to delete (the tracker serves no delete-collection).
			f.record(name, a, "")
			return true, nil, nil
		case a.GetVerb() == "create":
			// The API server names an object that asks for a generated name.
			if m, ok := a.(k8stesting.CreateActionImpl).GetObject().(metav1.Object); ok && m.GetName() == "" && m.GetGenerateName() != "" {
				f.mu.Lock()
				f.generated++
				n := f.generated
				f.mu.Unlock()
				m.SetName(fmt.Sprintf("%s%05d", m.GetGenerateName(), n))
			}
		}
		if name == "events" && f.eventLatency > 0 && a.GetResource().Resource == "events" {
			time.Sleep(f.eventLatency)
		}
		if name == "kubelet" && f.podLatency > 0 && a.GetResource().Resource == "pods" &&
			(a.GetVerb() == "get" || a.GetVerb() == "patch" && a.GetSubresource() == "status") {
			time.Sleep(f.podLatency)
		}
		handled, obj, err := objects(a)
		f.record(name, a, after(a, obj, err))
		return handled, obj, err
	})
	c.AddWatchReactor("*", func(a k8stesting.Action) (bool, watch.Interface, error) {
		f.record(name, a, "")
		w, err := f.tracker.Watch(a.GetResource(), a.GetNamespace())
		if err != nil {
			return true, nil, err
		}
		var initial []watch.Event
		if wa, ok := a.(k8stesting.WatchActionImpl); ok && wa.ListOptions.SendInitialEvents != nil && *wa.ListOptions.SendInitialEvents {
			if initial, err = f.initialEvents(a.GetResource(), a.GetNamespace()); err != nil {
				w.Stop()
				return true, nil, err
			}
		}
		return true, delayWatch(w, initial), nil
	})
	return c
}

// listKinds are the kinds of the resources the kubelet's informers watch.
var listKinds = map[string]string{"pods": "Pod", "nodes": "Node", "services": "Service", "secrets": "Secret",
	"configmaps": "ConfigMap", "csidrivers": "CSIDriver", "runtimeclasses": "RuntimeClass",
	"podcertificaterequests": "PodCertificateRequest"}

// initialEvents serves a watch-list (sendInitialEvents=true): an ADDED event
// for every object, then the bookmark that ends them
// (metav1.InitialEventsAnnotationKey) at the list's resourceVersion.
func (f *fakeAPI) initialEvents(gvr schema.GroupVersionResource, ns string) ([]watch.Event, error) {
	gvk := gvr.GroupVersion().WithKind(listKinds[gvr.Resource])
	list, err := f.tracker.List(gvr, gvk, ns)
	if err != nil {
		return nil, err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	var events []watch.Event
	for _, o := range items {
		events = append(events, watch.Event{Type: watch.Added, Object: o})
	}
	bookmark, err := scheme.Scheme.New(gvk)
	if err != nil {
		return nil, err
	}
	m, err := meta.Accessor(bookmark)
	if err != nil {
		return nil, err
	}
	la, err := meta.ListAccessor(list)
	if err != nil {
		return nil, err
	}
	m.SetResourceVersion(la.GetResourceVersion())
	m.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
	return append(events, watch.Event{Type: watch.Bookmark, Object: bookmark}), nil
}

// sessions is a sessionFactory on this fake: the kubelet's clients are
// three recorded clientsets, and its informers list and watch through the
// typed clients.
func (f *fakeAPI) sessions(clk clock.Clock) sessionFactory {
	return func(node string) (*session, error) {
		main := f.client("kubelet")
		return startSession(node, sessionClients{
			client:    main,
			heartbeat: f.client("heartbeat"),
			events:    ctxEvents{f.client("events").CoreV1()},
			lists:     typedListWatches{main, main.CertificatesV1beta1()},
		}, clk), nil
	}
}

// ctxEvents is an event client that fails a write whose context is done,
// as a client over HTTP does; the fake clientset ignores contexts.
type ctxEvents struct{ corev1client.EventsGetter }

func (c ctxEvents) Events(ns string) corev1client.EventInterface {
	return ctxEventInterface{c.EventsGetter.Events(ns)}
}

type ctxEventInterface struct{ corev1client.EventInterface }

func (c ctxEventInterface) Create(ctx context.Context, ev *corev1.Event, o metav1.CreateOptions) (*corev1.Event, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return c.EventInterface.Create(ctx, ev, o)
}

func (c ctxEventInterface) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, o metav1.PatchOptions, sub ...string) (*corev1.Event, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return c.EventInterface.Patch(ctx, name, pt, data, o, sub...)
}

func (f *fakeAPI) record(client string, a k8stesting.Action, detail string) {
	stream := streamKubelet
	switch {
	case client == "harness":
		stream = streamHarness
	case client == "events":
		stream = streamEvents
	case a.GetVerb() == "list" || a.GetVerb() == "watch":
		stream = streamInformers
	case a.GetResource().Resource == "leases":
		stream = streamLease
	}
	text := describe(a)
	if detail != "" {
		text += "  " + detail
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, call{at: time.Since(f.t0), client: client, stream: stream, seq: len(f.calls), text: text})
}

// describe is a request as verb, resource[/subresource] and object.
func describe(a k8stesting.Action) string {
	res := a.GetResource().Resource
	if sub := a.GetSubresource(); sub != "" {
		res += "/" + sub
	}
	obj := ""
	switch a := a.(type) {
	case k8stesting.GetActionImpl:
		obj = a.Name
		if rv := a.GetOptions.ResourceVersion; rv != "" {
			obj += " rv=" + rv
		}
	case k8stesting.CreateActionImpl:
		obj = a.Name
		if m, ok := a.Object.(metav1.Object); ok && obj == "" {
			obj = m.GetName()
			if m.GetGenerateName() != "" {
				obj = m.GetGenerateName() + "*"
			}
		}
		switch o := a.Object.(type) {
		case *corev1.Event:
			obj += fmt.Sprintf(" %s %s count=%d", o.Type, o.Reason, o.Count)
		case *authenticationv1.TokenRequest:
			obj += " for pod " + o.Spec.BoundObjectRef.Name
		}
	case k8stesting.UpdateActionImpl:
		if m, ok := a.Object.(metav1.Object); ok {
			obj = m.GetName()
		}
	case k8stesting.PatchActionImpl:
		obj = a.Name + " " + string(a.PatchType)
	case k8stesting.DeleteActionImpl:
		obj = a.Name
		if g := a.DeleteOptions.GracePeriodSeconds; g != nil {
			obj += fmt.Sprintf(" grace=%d", *g)
		}
		if p := a.DeleteOptions.Preconditions; p != nil && p.UID != nil {
			obj += " uid=" + string(*p.UID)
		}
	case k8stesting.ListActionImpl:
		obj = listOptions(a.ListOptions)
	case k8stesting.WatchActionImpl:
		obj = listOptions(a.ListOptions)
	case k8stesting.DeleteCollectionActionImpl:
		obj = listOptions(a.ListOptions)
	}
	if ns := a.GetNamespace(); ns != "" && obj != "" && !strings.HasPrefix(obj, "fieldSelector") && !strings.HasPrefix(obj, "rv=") {
		obj = ns + "/" + obj
	} else if ns != "" {
		obj = "-n " + ns + " " + obj
	}
	return strings.TrimSpace(a.GetVerb() + " " + res + " " + obj)
}

func listOptions(o metav1.ListOptions) string {
	var s []string
	if o.FieldSelector != "" {
		s = append(s, "fieldSelector="+o.FieldSelector)
	}
	if o.ResourceVersion != "" {
		s = append(s, "rv="+o.ResourceVersion)
	}
	if o.SendInitialEvents != nil && *o.SendInitialEvents {
		s = append(s, "sendInitialEvents")
	}
	return strings.Join(s, " ")
}

// after is what a write changed that the golden file shows: the pod's
// phase, readiness and containers after a status PATCH, the Ready
// condition a node status PATCH reports, an event PATCH's count.
func after(a k8stesting.Action, obj runtime.Object, err error) string {
	if err != nil {
		return "-> " + err.Error()
	}
	p, ok := a.(k8stesting.PatchActionImpl)
	if !ok {
		return ""
	}
	switch {
	case a.GetResource().Resource == "pods" && a.GetSubresource() == "status":
		pod, ok := obj.(*corev1.Pod)
		if !ok {
			return ""
		}
		return "-> " + podState(pod)
	case a.GetResource().Resource == "nodes" && a.GetSubresource() == "status":
		var patch struct {
			Status struct {
				Conditions []struct {
					Type, Status, Reason string
					LastTransitionTime   *string
				}
				NodeInfo *struct{ BootID, ContainerRuntimeVersion string }
			}
		}
		if err := json.Unmarshal(p.Patch, &patch); err != nil {
			return "-> " + err.Error()
		}
		var s []string
		for _, c := range patch.Status.Conditions {
			if c.Type == "Ready" {
				s = append(s, fmt.Sprintf("Ready=%s %s", c.Status, c.Reason))
				if c.LastTransitionTime != nil {
					s = append(s, "transition")
				}
			}
		}
		if ni := patch.Status.NodeInfo; ni != nil {
			if ni.BootID != "" {
				s = append(s, "bootID="+ni.BootID)
			}
			if ni.ContainerRuntimeVersion != "" {
				s = append(s, "runtime="+ni.ContainerRuntimeVersion)
			}
		}
		return "-> " + strings.Join(s, " ")
	case a.GetResource().Resource == "events":
		var patch struct{ Count int }
		_ = json.Unmarshal(p.Patch, &patch)
		return fmt.Sprintf("-> count=%d", patch.Count)
	case a.GetResource().Resource == "nodes":
		return string(p.Patch)
	}
	return ""
}

// podState is a pod's phase, readiness conditions, IP and containers.
func podState(p *corev1.Pod) string {
	cond := func(t corev1.PodConditionType) string {
		for _, c := range p.Status.Conditions {
			if c.Type == t {
				return string(c.Status)
			}
		}
		return "-"
	}
	s := fmt.Sprintf("%s Ready=%s ContainersReady=%s Sandbox=%s ip=%s", p.Status.Phase, cond(corev1.PodReady), cond(corev1.ContainersReady), cond(corev1.PodReadyToStartContainers), p.Status.PodIP)
	for _, c := range p.Status.ContainerStatuses {
		state := "waiting"
		switch {
		case c.State.Running != nil:
			state = "running"
		case c.State.Terminated != nil:
			state = fmt.Sprintf("exited(%d %s)", c.State.Terminated.ExitCode, c.State.Terminated.Reason)
		}
		started := "-"
		if c.Started != nil {
			started = fmt.Sprint(*c.Started)
		}
		s += fmt.Sprintf(" %s[%s ready=%v started=%s restarts=%d]", c.Name, state, c.Ready, started, c.RestartCount)
	}
	return s
}

// render writes the golden file: the case, every request (requests of one
// instant grouped by stream, each stream in its order; the informers'
// reflectors, concurrent, sorted), the restart's outcome, and the
// counters.
func (f *fakeAPI) render(name string, cfg Config, down time.Duration, out storm.Outcome, sim *Simulator) []byte {
	err := out.Err
	f.mu.Lock()
	calls := append([]call(nil), f.calls...)
	f.mu.Unlock()
	sort.SliceStable(calls, func(i, j int) bool {
		a, b := calls[i], calls[j]
		if a.at != b.at {
			return a.at < b.at
		}
		if a.stream != b.stream {
			return a.stream < b.stream
		}
		if a.stream == streamInformers {
			return a.text < b.text
		}
		return a.seq < b.seq
	})
	var b strings.Builder
	fmt.Fprintf(&b, "# %s: kind %s, downtime %s", name, cfg.Kind, down)
	if !cfg.Version.IsZero() {
		fmt.Fprintf(&b, ", Kubernetes %s", cfg.Version)
	}
	if cfg.RuntimeMode != "" {
		fmt.Fprintf(&b, ", runtime %s", cfg.RuntimeMode)
	}
	if cfg.Planned {
		b.WriteString(", planned")
	}
	if cfg.InitDuration > 0 {
		fmt.Fprintf(&b, ", init %s", cfg.InitDuration)
	}
	for _, g := range slices.Sorted(maps.Keys(cfg.Gates)) {
		fmt.Fprintf(&b, ", %s=%v", g, cfg.Gates[g])
	}
	fmt.Fprintf(&b, "\n# Restart returned: %v\n\n## requests (time from the restart, client, request)\n", err)
	for _, c := range calls {
		fmt.Fprintf(&b, "%9.3fs %-9s %s\n", c.at.Seconds(), c.client, c.text)
	}
	b.WriteString("\n## the restart's outcome (the time each step was reached)\n")
	for _, st := range outcomeSteps(out) {
		fmt.Fprintf(&b, "%9.3fs %s %s\n", st.at.Sub(f.t0).Seconds(), st.name, st.detail)
	}
	b.WriteString("\n## counters\n")
	counters := sim.Counters.Snapshot()
	for _, k := range slices.Sorted(maps.Keys(counters)) {
		fmt.Fprintf(&b, "%s %d\n", k, counters[k])
	}
	return []byte(b.String())
}

// outcomeStep is one line of the outcome in a golden.
type outcomeStep struct {
	at           time.Time
	name, detail string
}

// outcomeSteps are the outcome's steps that were reached, in time order
// (ties in the order a node passes through them): the restart kind of
// Down, the pod count of Synced, each dropped status sync with its pod
// and error, and the error of a failed restart at its end.
func outcomeSteps(o storm.Outcome) []outcomeStep {
	var out []outcomeStep
	add := func(at time.Time, name, detail string) {
		if !at.IsZero() {
			out = append(out, outcomeStep{at, name, detail})
		}
	}
	add(o.Down, "Down", o.Kind)
	add(o.KubeletStart, "KubeletStart", "")
	add(o.Synced, "Synced", fmt.Sprintf("%d pods", o.Pods))
	add(o.ReportedReady, "ReportedReady", "")
	add(o.PodsRecovered, "PodsRecovered", "")
	for _, d := range o.Dropped {
		add(d.At, "StatusSyncDropped", d.Pod+": "+d.Err.Error())
	}
	if o.Err != nil {
		add(o.End, "Error", o.Err.Error())
	}
	slices.SortStableFunc(out, func(a, b outcomeStep) int { return a.at.Compare(b.at) })
	return out
}

// typedListWatches lists and watches through a kubeletClient's typed
// clients, which a fake clientset serves, and PodCertificateRequests
// through certs (the fake's v1beta1 client: the golden shows the resource,
// not its version); its answers come watchLatency after the request.
type typedListWatches struct {
	c     kubeletClient
	certs certificatesv1beta1client.CertificatesV1beta1Interface
}

var _ listWatchSource = typedListWatches{}

func (t typedListWatches) listWatch(resource, namespace string, selector fields.Selector) cache.ListerWatcher {
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = selector.String()
			tlw, err := t.typed(resource, namespace)
			if err != nil {
				return nil, err
			}
			obj, err := tlw.list(ctx, o)
			time.Sleep(watchLatency)
			return obj, err
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = selector.String()
			o.Watch = true
			tlw, err := t.typed(resource, namespace)
			if err != nil {
				return nil, err
			}
			return tlw.watch(ctx, o)
		},
	}
	lw.ListFunc = func(o metav1.ListOptions) (runtime.Object, error) {
		return lw.ListWithContextFunc(context.Background(), o)
	}
	lw.WatchFunc = func(o metav1.ListOptions) (watch.Interface, error) {
		return lw.WatchFuncWithContext(context.Background(), o)
	}
	// Not cache.ToListWatcherWithWatchListSemantics(lw, fake clientset),
	// which would turn watch-list off: fakeAPI serves it, so the
	// WatchListClient gate picks the requests, as in production.
	return lw
}

// typedListWatch is the list and watch of one typed client.
type typedListWatch struct {
	list  func(context.Context, metav1.ListOptions) (runtime.Object, error)
	watch func(context.Context, metav1.ListOptions) (watch.Interface, error)
}

func typedLW[L runtime.Object](c interface {
	List(context.Context, metav1.ListOptions) (L, error)
	Watch(context.Context, metav1.ListOptions) (watch.Interface, error)
}) typedListWatch {
	return typedListWatch{func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return c.List(ctx, o) }, c.Watch}
}

func (t typedListWatches) typed(resource, ns string) (typedListWatch, error) {
	switch resource {
	case "pods":
		return typedLW(t.c.CoreV1().Pods(ns)), nil
	case "nodes":
		return typedLW(t.c.CoreV1().Nodes()), nil
	case "services":
		return typedLW(t.c.CoreV1().Services(ns)), nil
	case "secrets":
		return typedLW(t.c.CoreV1().Secrets(ns)), nil
	case "configmaps":
		return typedLW(t.c.CoreV1().ConfigMaps(ns)), nil
	case "csidrivers":
		return typedLW(t.c.StorageV1().CSIDrivers()), nil
	case "runtimeclasses":
		return typedLW(t.c.NodeV1().RuntimeClasses()), nil
	case "podcertificaterequests":
		return typedLW(t.certs.PodCertificateRequests(ns)), nil
	}
	return typedListWatch{}, fmt.Errorf("typedListWatches: no list-watch of %s", resource)
}

// delayedWatch delivers each event of a watch watchLatency after it
// happened.
type delayedWatch struct {
	inner watch.Interface
	out   chan watch.Event
	stop  chan struct{}
	once  sync.Once
}

func delayWatch(w watch.Interface, initial []watch.Event) watch.Interface {
	d := &delayedWatch{inner: w, out: make(chan watch.Event), stop: make(chan struct{})}
	go func() {
		defer close(d.out)
		for _, ev := range initial {
			select {
			case <-time.After(watchLatency):
			case <-d.stop:
				return
			}
			select {
			case d.out <- ev:
			case <-d.stop:
				return
			}
		}
		for ev := range w.ResultChan() {
			select {
			case <-time.After(watchLatency):
			case <-d.stop:
				return
			}
			select {
			case d.out <- ev:
			case <-d.stop:
				return
			}
		}
	}()
	return d
}

func (d *delayedWatch) ResultChan() <-chan watch.Event { return d.out }

func (d *delayedWatch) Stop() {
	d.once.Do(func() {
		close(d.stop)
		d.inner.Stop()
	})
}

// TestRNGOfTheNodeNotTheRun: a node's draws come from the seed and its name
// without the run's ID, which carries the time the run started: two runs of
// one seed draw the same jitter for the same node, and other nodes or
// seeds draw other jitter.
func TestRNGOfTheNodeNotTheRun(t *testing.T) {
	draw := func(runID string, seed int64, node string) uint64 {
		s := &Simulator{cfg: Config{RunID: runID, Seed: seed}}
		return s.rng(node, 1).Uint64()
	}
	a := draw("quick-1206-072227", 42, fleet.NodeName("quick-1206-072227", 3))
	for _, tc := range []struct {
		name     string
		runID    string
		seed     int64
		node     string
		wantSame bool
	}{
		{"another run, same node", "quick-1206-091500", 42, fleet.NodeName("quick-1206-091500", 3), true},
		{"same run, another node", "quick-1206-072227", 42, fleet.NodeName("quick-1206-072227", 4), false},
		{"another seed", "quick-1206-072227", 43, fleet.NodeName("quick-1206-072227", 3), false},
		{"a name without the run's ID", "quick-1206-072227", 42, "quick-1206-072227node-00003", false},
	} {
		if got := draw(tc.runID, tc.seed, tc.node); (got == a) != tc.wantSame {
			t.Errorf("%s: same draw %t, want %t", tc.name, got == a, tc.wantSame)
		}
	}
}
