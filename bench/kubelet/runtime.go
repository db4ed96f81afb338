package kubelet

// This file holds a container-runtime restart: the kubelet stays up.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/stormbench/stormbench/bench/cluster"
	"github.com/stormbench/stormbench/bench/poll"
	"github.com/stormbench/stormbench/bench/storm"
	"github.com/stormbench/stormbench/profiles"
)

// Runtime-restart timing of the 1.36 kubelet.
const (
	// runtimeDownAfter: the node reports "container runtime is down" once
	// the last successful runtime status is this old (kubelet.go
	// runtimeState, runtime.go baseRuntimeSyncThreshold), at its next
	// node status sync.
	runtimeDownAfter = 30 * time.Second
	// hungDownAfter: with a hung runtime the status sync itself waits on
	// runtime calls, and the node went NotReady later, about 45 s in
	// (measured on the hollow kubelet: NotReady in one of 13 50 s hangs
	// over the calibration runs so far, none in the other 12).
	hungDownAfter = 45 * time.Second
	// hungDownSpread is the spread of the NotReady time after
	// hungDownAfter: 45 s, so that a 50 s hang goes NotReady in about one
	// of nine (measured: one of 13, when this was set one of nine). Hangs
	// longer than 50 s are not calibrated.
	hungDownSpread = 45 * time.Second
	// runtimeCheckPeriod is the period of the kubelet's runtime status
	// check (kubelet.go Run: wait.UntilWithContext(ctx, kl.updateRuntimeUp,
	// 5*time.Second)).
	runtimeCheckPeriod = 5 * time.Second
	// nodeStatusUpdateFrequency is the kubelet's node status sync period
	// (apis/config/v1beta1/defaults.go).
	nodeStatusUpdateFrequency = 10 * time.Second
)

// runtimeRestart: the container runtime is down for the downtime while the
// kubelet stays up and keeps its lease. As the real kubelet did with a
// refused runtime socket (measured on the hollow kubelet, 50 s outages):
//   - exec probes error (probe.Unknown: prober.go runProbe), so readiness
//     and liveness are untouched; each errored probe records a Warning
//     "Unhealthy ... probe errored" event, which the event correlator
//     PATCHes (count+1) from its second occurrence;
//   - after runtimeDownAfter, at the next node status sync, the node
//     reports NotReady "container runtime is down"; once the runtime is
//     back, Ready again at the next runtime check and status sync;
//   - no pod status changes: the containers kept running (shims).
//
// A hung runtime (profiles.RuntimeHung): its calls block (up to the CRI timeout, 2
// minutes) instead of failing, so exec probes record no event; the node
// still reports NotReady, later (hungDownAfter), and Ready once the
// runtime answers again (measured in 50 s hangs: NotReady at about 45 s in
// one of 13, Ready within seconds of SIGCONT). Hangs beyond the CRI
// timeout are not calibrated.
func (s *Simulator) runtimeRestart(ctx context.Context, r storm.Restart, node *corev1.Node) error {
	// Harness: KWOK must stop writing this node's status while the
	// simulated kubelet stands in for it; heartbeats continue from here.
	if err := s.setKubeletLabel(ctx, r.Node, cluster.KubeletDown); err != nil {
		return err
	}
	s.record(r, storm.Event{Type: storm.EventDown, Kind: s.cfg.Kind})
	n, err := s.openSession(r)
	if err != nil {
		return err
	}
	defer n.close()
	sess := n.sess
	sess.knownNode = node
	start := s.cfg.Clock.Now()
	rng := s.rng(r.Node, 2)
	// The kubelet's lease controller goes on while the runtime is down:
	// it holds its lease, so it renews it (UPDATE, no GET) at its own
	// phase of the renew interval. The harness reads the lease to know
	// what the kubelet knows.
	lease := s.readLease(ctx, r.Node)
	n.startLease(ctx, lease, time.Duration(rng.Float64()*float64(defaultLeaseDuration/4)))
	// The kubelet is up and its pod cache warm: it sends no LIST; the
	// harness reads the node's pods to know what the kubelet probes.
	pods, err := s.listNodePods(ctx, r.Node)
	if err != nil {
		return err
	}
	// A hung runtime's exec probes block until their timeout and record
	// nothing in an outage of this length (measured: no probe event in a
	// 50 s hang); a refused socket fails them at once.
	var probes []erroredProbe
	if s.cfg.RuntimeMode != profiles.RuntimeHung {
		probes = erroredProbes(pods, rng, r.Downtime)
		// The container garbage collector's runs that find the runtime
		// refusing: a pod-less entry, a node event. Drawn from a stream
		// of their own, so that the probes' draws stay as they were.
		for _, at := range containerGCFailures(s.rng(r.Node, 4), r.Downtime) {
			probes = append(probes, erroredProbe{at: at})
		}
		sort.SliceStable(probes, func(i, j int) bool { return probes[i].at < probes[j].at })
	}
	// The node status sync that first sees the runtime down. The status
	// loop ticks every nodeStatusUpdateFrequency from a phase of its own;
	// the runtime check (updateRuntimeUp, every runtimeCheckPeriod,
	// kubelet.go Run) last succeeded up to one period before the outage,
	// and the runtime counts as down baseRuntimeSyncThreshold (30 s) after
	// that success (runtime.go runtimeErrors). So a refused runtime's node
	// goes NotReady at the first tick 25 to 30 s in, 25 to 40 s in all
	// (measured on the hollow kubelet: 29 s, 29.7 s and 32 s).
	// (A hung runtime's status sync hangs instead, so it has no phase.)
	phase := time.Duration(-1)
	downAt := time.Duration(-1)
	if s.cfg.RuntimeMode == profiles.RuntimeHung {
		if d := hungDownAfter + time.Duration(rng.Float64()*float64(hungDownSpread)); d < r.Downtime {
			downAt = d
		}
	} else {
		var d time.Duration
		phase, d = refusedStatusTimes(rng)
		if d < r.Downtime {
			downAt = d
		}
	}
	// A refused runtime fails the Version call of the first node status
	// sync (the first tick of phase) after it went away, and
	// the VersionInfo setter (nodestatus/setters.go) reports the runtime
	// as "<type>://Unknown": the status changed, so the kubelet PATCHes it
	// while the node is still Ready (measured on the hollow kubelet, a
	// 50 s refused outage: "fake-cri://Unknown" 9 s in, NotReady at 29 s,
	// Ready with the version back at 60 s; 3 node status PATCHes). A hung
	// runtime's Version call hangs the sync instead.
	version := node.Status.NodeInfo.ContainerRuntimeVersion
	unknownAt := time.Duration(-1)
	if s.cfg.RuntimeMode != profiles.RuntimeHung && version != "" {
		if phase >= 0 && phase < r.Downtime && (downAt < 0 || phase < downAt) {
			unknownAt = phase
		}
	}
	versionUnknown := false
	reportUnknown := func() error {
		if err := poll.Sleep(ctx, s.cfg.Clock, unknownAt-s.cfg.Clock.Since(start)); err != nil {
			return err
		}
		// "containerd://2.1.4" becomes "containerd://Unknown"; KWOK's
		// "kwok-0.8.0" has no runtime type to keep.
		sess.newRuntimeVersion = "Unknown"
		if typ, _, ok := strings.Cut(version, "://"); ok {
			sess.newRuntimeVersion = typ + "://Unknown"
		}
		versionUnknown = true
		return sess.patchNodeReady(ctx, true, "KubeletReady", "kubelet is posting ready status")
	}
	names := map[string]string{}
	wentDown := false
	for _, pr := range probes {
		if unknownAt >= 0 && !versionUnknown && pr.at >= unknownAt {
			if err := reportUnknown(); err != nil {
				return err
			}
		}
		if downAt >= 0 && !wentDown && pr.at >= downAt {
			if err := n.runtimeDown(ctx, node, start, downAt); err != nil {
				return err
			}
			wentDown = true
		}
		if err := poll.Sleep(ctx, s.cfg.Clock, pr.at-s.cfg.Clock.Since(start)); err != nil {
			return err
		}
		if pr.pod == nil {
			if err := sess.event(ctx, node.UID, corev1.EventTypeWarning, "ContainerGCFailed", runtimeRefusedError); err != nil {
				return err
			}
			continue
		}
		key := pr.pod.Namespace + "/" + pr.pod.Name + "/" + pr.container + "/" + pr.probeType
		msg := fmt.Sprintf("%s probe errored and resulted in unknown state: %s", pr.probeType, runtimeRefusedError)
		name, err := sess.podEvent(ctx, pr.pod, pr.container, names[key], pr.occurrences, corev1.EventTypeWarning, "Unhealthy", msg)
		if err != nil {
			return err
		}
		names[key] = name
	}
	if unknownAt >= 0 && !versionUnknown {
		if err := reportUnknown(); err != nil {
			return err
		}
	}
	if downAt >= 0 && !wentDown {
		if err := n.runtimeDown(ctx, node, start, downAt); err != nil {
			return err
		}
		wentDown = true
	}
	if err := poll.Sleep(ctx, s.cfg.Clock, r.Downtime-s.cfg.Clock.Since(start)); err != nil {
		return err
	}
	if wentDown || versionUnknown {
		// Back: the next runtime check (every 5 s, kubelet.go
		// updateRuntimeUp) and status sync report Ready (measured: 5 to
		// 13 s after the runtime returned), with the runtime's version.
		if err := poll.Sleep(ctx, s.cfg.Clock, 5*time.Second+time.Duration(rng.Float64()*float64(8*time.Second))); err != nil {
			return err
		}
		if versionUnknown {
			sess.newRuntimeVersion = version
		}
		if err := sess.patchNodeReady(ctx, true, "KubeletReady", "kubelet is posting ready status"); err != nil {
			return err
		}
		if wentDown {
			if err := sess.event(ctx, node.UID, corev1.EventTypeNormal, "NodeReady", fmt.Sprintf("Node %s status is now: NodeReady", r.Node)); err != nil {
				return err
			}
		}
	}
	return n.recover(ctx, nil)
}

// refusedStatusTimes draws, for a runtime that refuses its socket from
// offset 0, the offsets of the node status loop's first tick (phase: the
// first sync to fail the runtime's Version call) and of the first tick
// that finds the runtime down: baseRuntimeSyncThreshold after the last
// successful runtime check, which came up to runtimeCheckPeriod before
// the outage.
func refusedStatusTimes(rng *rand.Rand) (phase, down time.Duration) {
	phase = time.Duration(rng.Float64() * float64(nodeStatusUpdateFrequency))
	from := runtimeDownAfter - time.Duration(rng.Float64()*float64(runtimeCheckPeriod))
	down = phase
	for down < from {
		down += nodeStatusUpdateFrequency
	}
	return phase, down
}

// runtimeRefusedError is what a CRI call returns while the runtime's
// socket refuses connections.
const runtimeRefusedError = `rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing: dial unix /run/containerd/containerd.sock: connect: connection refused"`

// containerGCPeriod is the period of the kubelet's container garbage
// collection (kubelet.go ContainerGCPeriod), which runs from the kubelet's
// start.
const containerGCPeriod = time.Minute

// containerGCFailures returns the offsets into an outage of downtime at
// which the kubelet's container garbage collection runs, fails on the
// refused runtime and records a Warning ContainerGCFailed event on the
// node (kubelet.go StartGarbageCollection: every failed run records one).
// Its phase is the kubelet's start, which the model does not know: U(0,
// period), as over a fleet. Measured on the kubelet on containerd: one
// ContainerGCFailed per node in every 50 s refused outage of the
// calibrations of 2026-12-04 (2 + 5 + 5 nodes), where the cases' order puts
// a run of each kubelet inside the outage; the model records one in 5 of 6
// such outages. A hung runtime's GC call blocks
// instead (the CRI timeout is 2 minutes) and records nothing in a hang of
// that length.
func containerGCFailures(rng *rand.Rand, downtime time.Duration) []time.Duration {
	var out []time.Duration
	for at := time.Duration(rng.Float64() * float64(containerGCPeriod)); at < downtime; at += containerGCPeriod {
		out = append(out, at)
	}
	return out
}

// erroredProbe is one exec probe that errors while the runtime is down,
// or, with no pod, one failed container garbage collection.
type erroredProbe struct {
	// at is its offset from the outage's start.
	at        time.Duration
	pod       *corev1.Pod
	container string
	// probeType is Readiness, Liveness or Startup.
	probeType string
	// occurrences counts this probe's errors so far, this one included.
	occurrences int32
}

// erroredProbes plans the exec probes of the node's running pods that error
// during an outage of downtime: each worker first probes at a random part
// of its period, then once a period, in time order.
func erroredProbes(pods []corev1.Pod, rng *rand.Rand, downtime time.Duration) []erroredProbe {
	var probes []erroredProbe
	for i := range pods {
		p := &pods[i]
		if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
			continue
		}
		for _, c := range p.Spec.Containers {
			for _, pr := range []struct {
				probe *corev1.Probe
				typ   string
			}{{c.ReadinessProbe, "Readiness"}, {c.LivenessProbe, "Liveness"}, {c.StartupProbe, "Startup"}} {
				if pr.probe == nil || pr.probe.Exec == nil {
					continue
				}
				period := probePeriod(pr.probe)
				n := int32(0)
				for at := time.Duration(rng.Float64() * float64(period)); at < downtime; at += period {
					n++
					probes = append(probes, erroredProbe{at: at, pod: p, container: c.Name, probeType: pr.typ, occurrences: n})
				}
			}
		}
	}
	sort.SliceStable(probes, func(i, j int) bool { return probes[i].at < probes[j].at })
	return probes
}

// runtimeDown reports the node NotReady "container runtime is down" at
// offset at from start, with the NodeNotReady event the status setter
// records on the transition (nodestatus/setters.go ReadyCondition).
func (n *nodeRun) runtimeDown(ctx context.Context, node *corev1.Node, start time.Time, at time.Duration) error {
	s, sess := n.s, n.sess
	if err := poll.Sleep(ctx, s.cfg.Clock, at-s.cfg.Clock.Since(start)); err != nil {
		return err
	}
	if err := sess.patchNodeReady(ctx, false, "KubeletNotReady", "container runtime is down"); err != nil {
		return err
	}
	return sess.event(ctx, node.UID, corev1.EventTypeNormal, "NodeNotReady", fmt.Sprintf("Node %s status is now: NodeNotReady", node.Name))
}
