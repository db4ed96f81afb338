package plan

import (
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// The statuses a plan hands the status manager, and the prober's timing they follow.

// probePeriod is a probe's period (periodSeconds, at least 1 s).
func probePeriod(p *corev1.Probe) time.Duration {
	return time.Duration(max(p.PeriodSeconds, 1)) * time.Second
}

// StatusStep is one change of a container's started and ready state that
// the status manager writes, at an offset from the pod's first sync.
type StatusStep struct {
	At             time.Duration
	Container      string
	Started, Ready bool
	SetStarted     bool
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
func startupSteps(container string, s0, startupPeriod, r0, readinessPeriod time.Duration) []StatusStep {
	hasReadiness := readinessPeriod > 0
	down, started := s0, s0+startupPeriod
	if hasReadiness && r0 < s0 {
		down, started = r0, s0
	}
	steps := []StatusStep{
		{At: down, Container: container, SetStarted: true, Started: false, Ready: false},
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
			StatusStep{At: r0, Container: container, SetStarted: true, Started: false, Ready: true},
			StatusStep{At: r0, Container: container, SetStarted: true, Started: false, Ready: false})
	}
	steps = append(steps, StatusStep{At: started, Container: container, SetStarted: true, Started: true, Ready: !hasReadiness})
	if hasReadiness {
		steps = append(steps, StatusStep{At: max(started, r0), Container: container, Started: true, Ready: true})
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

// StatusUpdate is one status a pod's worker or prober hands the status
// manager (status_manager.go SetPodStatus), at an offset from the pods'
// first sync: what it does to the pod's status is its kind's
// (nodeRun.applyUpdate), and what the worker records with it too
// (nodeRun.updateEvents).
type StatusUpdate struct {
	At   time.Duration
	Kind StatusKind
	Pod  *corev1.Pod
	// Probed holds the pod's readiness-probed containers.
	Probed map[string]time.Duration
	// Gone are the containers that exited while the kubelet was down
	// (updateReplaceExited, updateReplaceRunning).
	Gone []string
	// Reset are the containers whose readiness the first sync of a
	// replaced pod takes away (updateReplaceExited): the exited ones, and
	// with the legacy gate the other probed ones.
	Reset []string
}

// Exited says whether container c is one of u.gone.
func (u StatusUpdate) Exited(c string) bool { return slices.Contains(u.Gone, c) }

// StatusKind is what a StatusUpdate does.
type StatusKind uint8

const (
	// UpdateRebootExited: after a reboot, every container exited (255,
	// Unknown), none ready, the sandbox gone and the pod IP with it.
	UpdateRebootExited StatusKind = iota + 1
	// UpdateSandboxReady: the new sandbox is ready.
	UpdateSandboxReady
	// UpdateRebootRunning: every container running again, restartCount+1,
	// with a new pod IP; ready unless readiness-probed.
	UpdateRebootRunning
	// UpdateReplaceExited: the first sync of a pod some of whose
	// containers exited while the kubelet was down: those terminated (137,
	// Error), not ready and not started; the reset ones not ready.
	UpdateReplaceExited
	// UpdateReplaceRunning: the containers that exited while the kubelet
	// was down running again, started, ready unless readiness-probed.
	UpdateReplaceRunning
	// UpdateReadyAtProbe: ready at the recreated containers' first
	// successful probe.
	UpdateReadyAtProbe
)

// statusKindNames name the kinds in a plan golden.
var statusKindNames = map[StatusKind]string{
	UpdateRebootExited:   "containers exited, sandbox gone",
	UpdateSandboxReady:   "sandbox ready",
	UpdateRebootRunning:  "containers running again",
	UpdateReplaceExited:  "exited containers terminated",
	UpdateReplaceRunning: "exited containers running again",
	UpdateReadyAtProbe:   "ready at its first probe",
}
