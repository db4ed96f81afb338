package kubelet

import (
	"context"
	"errors"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The prober and the status manager of a starting kubelet: when each probe passes, and the status syncs that follow.

// probePeriod is a probe's period (periodSeconds, at least 1 s).
func probePeriod(p *corev1.Probe) time.Duration {
	return time.Duration(max(p.PeriodSeconds, 1)) * time.Second
}

// statusStep is one change of a container's started and ready state that
// the status manager writes, at an offset from the pod's first sync.
type statusStep struct {
	at             time.Duration
	container      string
	started, ready bool
	setStarted     bool
}

// startupSteps plans a running, started container with a startup probe
// after a kubelet restart with the legacy gate (prober_manager.go
// isContainerStarted and UpdatePodStatus, prober/worker.go run and
// doProbe). The pod's first sync comes before the probe workers exist
// (kubelet.go SyncPod: status first, then probeManager.AddPod) and changes
// nothing. Once the startup worker exists and has no result, the container
// counts as not started, so not ready: the first status the kubelet
// generates after that (a worker's first result, at the earlier of the
// startup worker's start-up jitter s0 and the readiness worker's r0) writes
// Started=false and Ready=false. The startup probe then passes at s0 if
// that status was already cached (r0 came first), else one startup period
// later (at s0 the worker still saw the cached Started=true and stopped).
// The container is ready as soon as it is started (the readiness worker,
// disabled until then, is triggered), or at r0 if that is later; without
// a readiness probe, at once. When the readiness worker came first, the
// pod is also written Ready for a moment in between (below), a second
// flip. Measured on the hollow kubelet (2 nodes × 5 pods, periods 10 s):
// 7 and 7.5 flips and 21 status writes per restart of 5 pods, ready
// 10–20 ms after it was started (results/calibration/2026-12-02/startup-probe.md, in git history).
func startupSteps(container string, s0, startupPeriod, r0, readinessPeriod time.Duration) []statusStep {
	hasReadiness := readinessPeriod > 0
	down, started := s0, s0+startupPeriod
	if hasReadiness && r0 < s0 {
		down, started = r0, s0
	}
	steps := []statusStep{
		{at: down, container: container, setStarted: true, started: false, ready: false},
	}
	if hasReadiness && r0 < s0 {
		// The readiness worker came first: it found the cached
		// Started=true of the first sync, so it probed at once, and its
		// Success reached the status manager directly
		// (kubelet.go syncLoopIteration: readinessManager.Updates →
		// statusManager.SetContainerReadiness, which does not look at
		// Started): the pod is written Ready for a moment; the pod sync
		// the result triggers finds the container not started
		// (prober_manager.go UpdatePodStatus) and takes Ready away again.
		// Measured on the hollow kubelet: 3 of 5 pods, 5 writes each
		// (Ready with Started=false between two not-ready writes).
		steps = append(steps,
			statusStep{at: r0, container: container, setStarted: true, started: false, ready: true},
			statusStep{at: r0, container: container, setStarted: true, started: false, ready: false})
	}
	steps = append(steps, statusStep{at: started, container: container, setStarted: true, started: true, ready: !hasReadiness})
	if hasReadiness {
		steps = append(steps, statusStep{at: max(started, r0), container: container, started: true, ready: true})
	}
	return steps
}

// rebootFirstProbe is when a readiness probe first passes on a container
// that starts running at running, for a worker that started with the
// kubelet and slept jitter first (prober/worker.go run). The worker's
// probes before then find no running container. When the container runs
// without a result, prober_manager.go UpdatePodStatus triggers a probe at
// once and the worker resets its ticker (worker.go run, manualTriggerCh);
// a trigger that comes while the worker still sleeps waits in the
// channel's buffer. A probe passes once initialDelay has gone by since the
// container started (worker.go doProbe). Measured on the kubelet on
// containerd (16 pods, period 10 s): half the pods were ready 0.15 to 0.5 s
// after their containers ran, the others 3 to 5 s after, when their
// worker's first tick came. The result comes rebootProbeLatency after the
// probe starts (the exec, and the prober's results channel to the status
// manager): the earliest measured Ready write came 0.15 s after the
// containers' one, so an idle status manager writes the two apart.
func rebootFirstProbe(jitter, running, initialDelay, period time.Duration) time.Duration {
	at := max(jitter, running)
	for at-running < initialDelay {
		at += period
	}
	return at + rebootProbeLatency
}

// rebootProbeLatency is how long after a probe of a recreated container
// starts its first Success reaches the status manager (rebootFirstProbe).
const rebootProbeLatency = 150 * time.Millisecond

// statusUpdate is one status a pod's worker or prober hands the status
// manager (status_manager.go SetPodStatus), at an offset from the pods'
// first sync: what it does to the pod's status is its kind's
// (nodeRun.applyUpdate), and what the worker records with it too
// (nodeRun.updateEvents).
type statusUpdate struct {
	at   time.Duration
	kind statusKind
	pod  *corev1.Pod
	// probed holds the pod's readiness-probed containers.
	probed map[string]time.Duration
	// gone are the containers that exited while the kubelet was down
	// (updateReplaceExited, updateReplaceRunning).
	gone []string
	// reset are the containers whose readiness the first sync of a
	// replaced pod takes away (updateReplaceExited): the exited ones, and
	// with the legacy gate the other probed ones.
	reset []string
}

// exited says whether container c is one of u.gone.
func (u statusUpdate) exited(c string) bool { return slices.Contains(u.gone, c) }

// statusKind is what a statusUpdate does.
type statusKind uint8

const (
	// updateRebootExited: after a reboot, every container exited (255,
	// Unknown), none ready, the sandbox gone and the pod IP with it.
	updateRebootExited statusKind = iota + 1
	// updateSandboxReady: the new sandbox is ready.
	updateSandboxReady
	// updateRebootRunning: every container running again, restartCount+1,
	// with a new pod IP; ready unless readiness-probed.
	updateRebootRunning
	// updateReplaceExited: the first sync of a pod some of whose
	// containers exited while the kubelet was down: those terminated (137,
	// Error), not ready and not started; the reset ones not ready.
	updateReplaceExited
	// updateReplaceRunning: the containers that exited while the kubelet
	// was down running again, started, ready unless readiness-probed.
	updateReplaceRunning
	// updateReadyAtProbe: ready at the recreated containers' first
	// successful probe.
	updateReadyAtProbe
)

// statusKindNames name the kinds in a plan golden.
var statusKindNames = map[statusKind]string{
	updateRebootExited:   "containers exited, sandbox gone",
	updateSandboxReady:   "sandbox ready",
	updateRebootRunning:  "containers running again",
	updateReplaceExited:  "exited containers terminated",
	updateReplaceRunning: "exited containers running again",
	updateReadyAtProbe:   "ready at its first probe",
}

// probeSuccess is a pod's first successful probe: every container ready
// and started, if the pod still runs.
func probeSuccess(ps *corev1.PodStatus, now metav1.Time) bool {
	if ps.Phase != corev1.PodRunning {
		return false
	}
	changed := setReadiness(ps, func(string) bool { return true }, now)
	markStarted(ps)
	return changed
}

// probeFailure is the probe worker's seeded Failure of a legacy flip: the
// probed containers not ready (prober/worker.go doProbe).
func probeFailure(probed map[string]time.Duration) func(ps *corev1.PodStatus, now metav1.Time) bool {
	return func(ps *corev1.PodStatus, now metav1.Time) bool {
		return setReadiness(ps, func(c string) bool { _, ok := probed[c]; return !ok }, now)
	}
}

// flip plays a legacy flip (ActionPodProbe) due at at: the
// seeded Failure and then the Success about one exec later, each written
// by an idle status manager. If both came while it was busy syncing other
// statuses, its next batch writes the pod's latest cached status
// (status_manager.go syncBatch), both updates applied, so the flip never
// reaches the API server, only Ready and ContainersReady with a new
// lastTransitionTime (updateLastTransitionTime against the cached False).
func (n *nodeRun) flip(ctx context.Context, at time.Time, st Step) error {
	failure := probeFailure(st.Probed)
	m := n.status
	if m.busyAt(at) {
		n.s.Counters.ReadyFlipsCoalesced.Add(1)
		return m.write(ctx, st.Namespace, st.Name, func(ps *corev1.PodStatus, now metav1.Time) bool {
			f := failure(ps, now)
			return probeSuccess(ps, now) || f
		})
	}
	return errors.Join(m.write(ctx, st.Namespace, st.Name, failure), m.write(ctx, st.Namespace, st.Name, probeSuccess))
}

// applyStatusStep sets one container's started and ready state and the
// pod's conditions from every container's readiness.
func applyStatusStep(st *corev1.PodStatus, step statusStep, now metav1.Time) bool {
	changed := false
	ready := map[string]bool{}
	for i := range st.ContainerStatuses {
		cs := &st.ContainerStatuses[i]
		ready[cs.Name] = cs.Ready
		if cs.Name != step.container {
			continue
		}
		ready[cs.Name] = step.ready
		if step.setStarted && (cs.Started == nil || *cs.Started != step.started) {
			v := step.started
			cs.Started = &v
			changed = true
		}
	}
	return setReadiness(st, func(c string) bool { return ready[c] }, now) || changed
}
