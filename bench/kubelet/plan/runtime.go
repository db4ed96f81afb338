package plan

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// A container runtime that goes away under a kubelet that stays up.

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

// Outage is what RuntimeOutage plans from: a container runtime
// down for Downtime (hung, or refusing its socket) under a kubelet that
// stays up, on a node whose runtime reported Version, with Pods.
type Outage struct {
	Hung     bool
	Downtime time.Duration
	Version  string
	Node     string
	Pods     []corev1.Pod
}

// RuntimeOutage plans what the kubelet sends while its runtime is down
// and after it is back (see runtimeRestart), from the outage's start: the
// errored exec probes' events and the failed container garbage
// collections (a refused runtime only), the node status that reports the
// runtime's version Unknown, the NotReady "container runtime is down" with
// its event, and Ready again once the runtime answers. rng draws the probe
// phases, the status times and the return; gc the garbage collector's
// phase (outageProbes). A step due at the same offset as an errored probe
// comes before it.
func RuntimeOutage(o Outage, rng, gc *rand.Rand) Plan {
	probes := outageProbes(o, rng, gc)
	unknownAt, downAt := outageStatusTimes(o, rng)
	var plan Plan
	// status returns the node status steps due by at, each once.
	versionUnknown, wentDown := false, false
	status := func(at time.Duration) []Step {
		var out []Step
		if unknownAt >= 0 && !versionUnknown && at >= unknownAt {
			// "containerd://2.1.4" becomes "containerd://Unknown"; KWOK's
			// "kwok-0.8.0" has no runtime type to keep.
			unknown := "Unknown"
			if typ, _, ok := strings.Cut(o.Version, "://"); ok {
				unknown = typ + "://Unknown"
			}
			out = append(out, Step{At: unknownAt, Action: ActionNodeStatus, Ready: true, Reason: reasonReady, Message: messageReady, RuntimeVersion: unknown})
			versionUnknown = true
		}
		if downAt >= 0 && !wentDown && at >= downAt {
			out = append(out,
				Step{At: downAt, Action: ActionNodeStatus, Reason: reasonNotReady, Message: "container runtime is down"},
				Step{At: downAt, Action: ActionNodeEvent, EventType: corev1.EventTypeNormal, Reason: "NodeNotReady", Message: fmt.Sprintf("Node %s status is now: NodeNotReady", o.Node)})
			wentDown = true
		}
		return out
	}
	for _, pr := range probes {
		plan = append(plan, status(pr.at)...)
		if pr.pod == nil {
			plan = append(plan, Step{At: pr.at, Actor: ActorNode, Action: ActionNodeEvent, EventType: corev1.EventTypeWarning, Reason: "ContainerGCFailed", Message: runtimeRefusedError})
			continue
		}
		plan = append(plan, Step{
			At: pr.at, Actor: ActorPods, Action: ActionPodEvent, Pod: pr.pod, Container: pr.container, Count: pr.occurrences,
			Series:    pr.pod.Namespace + "/" + pr.pod.Name + "/" + pr.container + "/" + pr.probeType,
			EventType: corev1.EventTypeWarning, Reason: "Unhealthy",
			Message: fmt.Sprintf("%s probe errored and resulted in unknown state: %s", pr.probeType, runtimeRefusedError),
		})
	}
	// Both are due before the outage ends.
	plan = append(plan, status(o.Downtime)...)
	if !wentDown && !versionUnknown {
		// Nothing to take back: the restart ends with the outage.
		return append(plan, Step{At: o.Downtime, Action: ActionWait})
	}
	// Back: the next runtime check (every 5 s, kubelet.go updateRuntimeUp)
	// and status sync report Ready (measured: 5 to 13 s after the runtime
	// returned), with the runtime's version.
	back := Step{At: o.Downtime + 5*time.Second + time.Duration(rng.Float64()*float64(8*time.Second)), Action: ActionNodeStatus, Ready: true, Reason: reasonReady, Message: messageReady}
	if versionUnknown {
		back.RuntimeVersion = o.Version
	}
	plan = append(plan, back)
	if wentDown {
		plan = append(plan, Step{At: back.At, Action: ActionNodeEvent, EventType: corev1.EventTypeNormal, Reason: "NodeReady", Message: fmt.Sprintf("Node %s status is now: NodeReady", o.Node)})
	}
	return plan
}

// outageProbes returns the exec probes that error in the outage, and the
// container garbage collections that fail (entries without a pod), in
// time order. A hung runtime's exec probes block until their timeout and
// record nothing in an outage of this length (measured: no probe event in
// a 50 s hang); a refused socket fails them at once. gc draws the
// collector's phase (a stream of its own, so that rng's draws stay as
// they were before it was modelled).
func outageProbes(o Outage, rng, gc *rand.Rand) []erroredProbe {
	if o.Hung {
		return nil
	}
	probes := erroredProbes(o.Pods, rng, o.Downtime)
	for _, at := range containerGCFailures(gc, o.Downtime) {
		probes = append(probes, erroredProbe{at: at})
	}
	sort.SliceStable(probes, func(i, j int) bool { return probes[i].at < probes[j].at })
	return probes
}

// outageStatusTimes draws when in the outage the node status reports the
// runtime's version Unknown and when NotReady; -1 for what does not come
// before the runtime is back.
func outageStatusTimes(o Outage, rng *rand.Rand) (unknownAt, downAt time.Duration) {
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
	downAt = -1
	if o.Hung {
		if d := hungDownAfter + time.Duration(rng.Float64()*float64(hungDownSpread)); d < o.Downtime {
			downAt = d
		}
	} else {
		var d time.Duration
		phase, d = refusedStatusTimes(rng)
		if d < o.Downtime {
			downAt = d
		}
	}
	// A refused runtime fails the Version call of the first node status
	// sync (the first tick of phase) after it went away, and the
	// VersionInfo setter (nodestatus/setters.go) reports the runtime as
	// "<type>://Unknown": the status changed, so the kubelet PATCHes it
	// while the node is still Ready (measured on the hollow kubelet, a 50 s
	// refused outage: "fake-cri://Unknown" 9 s in, NotReady at 29 s, Ready
	// with the version back at 60 s; 3 node status PATCHes). A hung
	// runtime's Version call hangs the sync instead.
	unknownAt = -1
	if !o.Hung && o.Version != "" && phase < o.Downtime && (downAt < 0 || phase < downAt) {
		unknownAt = phase
	}
	return unknownAt, downAt
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
