// Package plan decides what a simulated kubelet does, and when: a
// restart's plan, a list of typed steps of data. Its planners are pure
// functions of what the kubelet knows once its informers have synced (the
// node, the pods as listed, the containers that exited, the gate, the
// release, the seed): Start for a kubelet's start after a restart or a
// reboot, RuntimeOutage for a container runtime that goes away under a
// kubelet that stays up. A step says when (At, from a Mark the executor
// reaches), which of the kubelet's loops takes it (Actor) and what it does
// (Action, a closed set), with a pod's first sync and a status manager's
// update carried as data (StatusUpdate). Release is what a Kubernetes
// release's kubelet does differently, Seed what a node's and a pod's
// random draws come from.
//
// The package touches nothing: no client, no clock, no status it reads.
// The executor (bench/kubelet play.go) sleeps, sends and counts, and
// applies the decisions a step carries to the statuses it reads. The
// kubelet sources cited are k8s.io/kubernetes v1.36.3 pkg/kubelet unless
// a release says otherwise.
package plan

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Actor is which of the kubelet's loops takes a step. The executor plays
// each actor's steps in order and the actors side by side, as the
// kubelet's goroutines run: a slow pod status write does not hold up the
// node's status, nor the other way round.
type Actor uint8

const (
	// ActorNode is the node status loop: node status, node events, and
	// the end of a plan (ActionWait); at a start, the start-up in the
	// kubelet's order (Start): the node's, then the pods' first syncs.
	ActorNode Actor = iota
	// ActorPods is the probe workers and the status manager: pod events
	// and pod status writes. It starts once every mark its steps count
	// from is reached, and takes its steps as they fall due.
	ActorPods
)

// Actors are every actor, in the order the executor starts them.
var Actors = []Actor{ActorNode, ActorPods}

func (a Actor) String() string {
	switch a {
	case ActorNode:
		return "node"
	case ActorPods:
		return "pods"
	}
	return fmt.Sprintf("Actor(%d)", uint8(a))
}

// Action is what a step does. The set is closed: the executor knows each.
type Action uint8

const (
	// ActionNodeStatus patches the node's status (patchNodeReady): its
	// Ready condition, and the runtime version when the step sets one.
	ActionNodeStatus Action = iota + 1
	// ActionNodeEvent records an event on the node.
	ActionNodeEvent
	// ActionPodEvent records an event on a pod's container; a repeat of
	// the same series is the event correlator's PATCH of its count.
	ActionPodEvent
	// ActionWait sends nothing: the plan lasts until its At.
	ActionWait
	// ActionPodStatus hands the status manager a status of a recreated or
	// replaced pod (Update); a run of them is synced in batches
	// (statusManager.batch).
	ActionPodStatus
	// ActionPodStartup writes a change of one container's started and
	// ready state (a startup probe the legacy gate reset: startupSteps).
	ActionPodStartup
	// ActionPodProbe is a pod's first successful readiness probe, which
	// writes what its first sync left to it: Ready when it left the pod not
	// ready; the legacy gate's reset of a ready pod (the probe worker's
	// seeded Failure, then its Success; one write of both when the status
	// manager is busy) when it decided a flip; nothing otherwise, at once.
	ActionPodProbe
	// ActionCSINode is the CSI plugin's start: its CSINode read, and
	// created when missing (session.csiNode).
	ActionCSINode
	// ActionResourceSliceWipe is the DRA plugin manager's start-up
	// DELETE of the node's ResourceSlices (session.wipeResourceSlices);
	// its failure does not stop the start.
	ActionResourceSliceWipe
	// ActionPodTerminal writes the terminal status of a pod deleted while
	// the kubelet was away, once its kill is over (planDeletions).
	ActionPodTerminal
	// ActionPodDelete is the status manager's last sync of such a pod and
	// its DELETE, once the PLEG has seen the kill: due at the end of the
	// first relist that starts after At (planDeletions).
	ActionPodDelete
	// ActionObjectWatches opens the watches of the Secrets and ConfigMaps
	// Pods reference (session.watchPodObjects).
	ActionObjectWatches
	// ActionTokens requests the service-account tokens of Pods
	// (session.requestTokens).
	ActionTokens
	// ActionPodsSynced records that the pod source has synced Pods, and
	// closes the watches when the run asks it to.
	ActionPodsSynced
	// ActionPodIPs reserves the node's pod IPs after a reboot, before the
	// pods' sandboxes are recreated (session.reservePodIPs).
	ActionPodIPs
	// ActionMark reaches Mark: the steps that count from it are due from
	// now.
	ActionMark
	// ActionPodReject is admission's re-run rejecting Pod (rejectPod).
	ActionPodReject
	// ActionPodFirstSync is the status manager's first sync of Pod after
	// the start (firstSync), decided as data: Probed and Legacy say which
	// readiness its first probe resets, Startup that a startup worker
	// decides instead; with Update, the first status of a pod whose
	// containers exited (updateReplaceExited), after which MarkPodSynced
	// is reached for it.
	ActionPodFirstSync
	// ActionPodObservedGeneration is the first sync of a pod deleted while
	// the kubelet was away: its observed generation (planDeletions).
	ActionPodObservedGeneration
)

var actionNames = map[Action]string{
	ActionNodeStatus: "node-status",
	ActionNodeEvent:  "node-event",
	ActionPodEvent:   "pod-event",
	ActionWait:       "wait",
	ActionPodStatus:  "pod-status",
	ActionPodStartup: "pod-startup",
	ActionPodProbe:   "pod-probe",

	ActionCSINode:           "csinode",
	ActionResourceSliceWipe: "slice-wipe",
	ActionPodTerminal:       "pod-terminal",
	ActionPodDelete:         "pod-delete",

	ActionObjectWatches:         "object-watches",
	ActionTokens:                "tokens",
	ActionPodsSynced:            "pods-synced",
	ActionPodIPs:                "pod-ips",
	ActionMark:                  "mark",
	ActionPodReject:             "pod-reject",
	ActionPodFirstSync:          "first-sync",
	ActionPodObservedGeneration: "observed-gen",
}

// Mark is a moment of a start that steps count from: the planner cannot
// know when it comes (it follows requests whose answers take what they
// take), the executor does.
type Mark uint8

const (
	// MarkPlan is the start of the plan.
	MarkPlan Mark = iota
	// MarkPodSync is the start of the pods' first syncs.
	MarkPodSync
	// MarkPodSynced is the end of the first sync of the step's pod
	// (Namespace, Name) whose containers exited while the kubelet was
	// down.
	MarkPodSynced
	// MarkSyncsDone is the end of every first sync.
	MarkSyncsDone
)

var markNames = map[Mark]string{MarkPlan: "start", MarkPodSync: "pod sync", MarkPodSynced: "its sync", MarkSyncsDone: "syncs done"}

func (m Mark) String() string {
	if n, ok := markNames[m]; ok {
		return n
	}
	return fmt.Sprintf("Mark(%d)", uint8(m))
}

func (a Action) String() string {
	if n, ok := actionNames[a]; ok {
		return n
	}
	return fmt.Sprintf("Action(%d)", uint8(a))
}

// Step is one thing a simulated kubelet does, At an offset from From (the
// start of its plan unless it says otherwise). Which fields mean something
// depends on Action.
type Step struct {
	At     time.Duration
	From   Mark
	Actor  Actor
	Action Action
	// Mark is the mark an ActionMark reaches.
	Mark Mark

	// Ready, Reason and Message are a node status's Ready condition
	// (ActionNodeStatus). RuntimeVersion, when set, is the
	// nodeInfo.containerRuntimeVersion it reports.
	Ready           bool
	Reason, Message string
	RuntimeVersion  string

	// EventType, Reason and Message are an event's (ActionNodeEvent,
	// ActionPodEvent).
	EventType string

	// Pod and Container are what a pod event is about (Pod, also the pod
	// a pod step of the start is about); Count is the occurrence of its
	// series (1: created, more: the correlator's PATCH of the first), and
	// Series names the series ("" for an event of its own).
	Pod       *corev1.Pod
	Container string
	Count     int32
	Series    string

	// Pods are the pods a start's step is about (ActionObjectWatches,
	// ActionTokens, ActionPodsSynced).
	Pods []*corev1.Pod
	// Namespace and Name are the pod a pod status step writes.
	Namespace, Name string
	// Probed holds the pod's containers with a readiness probe, and when
	// each first passes (ActionPodFirstSync, ActionPodProbe: a legacy
	// flip's Failure takes their readiness away). Legacy is
	// ChangeContainerStatusOnKubeletRestart at a first sync, and Startup
	// says a startup worker decides the pod's writes (startupSteps).
	Probed          map[string]time.Duration
	Legacy, Startup bool
	// Started says whether Container counts as started, and SetStarted
	// whether the step writes it (ActionPodStartup; Ready is its
	// readiness).
	Started, SetStarted bool
	// Update is the status a pod's worker hands the status manager
	// (ActionPodStatus).
	Update *StatusUpdate
}

// String renders the step as one line of a plan golden.
func (s Step) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%9.3fs %-4s %-11s", s.At.Seconds(), s.Actor, s.Action)
	if s.From != MarkPlan {
		fmt.Fprintf(&b, " (from %s)", s.From)
	}
	switch s.Action {
	case ActionNodeStatus:
		ready := "False"
		if s.Ready {
			ready = "True"
		}
		fmt.Fprintf(&b, " Ready=%s %s %q", ready, s.Reason, s.Message)
		if s.RuntimeVersion != "" {
			fmt.Fprintf(&b, " runtime=%s", s.RuntimeVersion)
		}
	case ActionNodeEvent:
		fmt.Fprintf(&b, " %s %s %q", s.EventType, s.Reason, s.Message)
	case ActionPodEvent:
		series := s.Series
		if series == "" {
			series = s.Pod.Namespace + "/" + s.Pod.Name + "/" + s.Container
		}
		fmt.Fprintf(&b, " %s %s %s count=%d", series, s.EventType, s.Reason, s.Count)
	case ActionPodStatus:
		fmt.Fprintf(&b, " %s/%s %s", s.Namespace, s.Name, statusKindNames[s.Update.Kind])
	case ActionPodStartup:
		fmt.Fprintf(&b, " %s/%s %s ready=%t", s.Namespace, s.Name, s.Container, s.Ready)
		if s.SetStarted {
			fmt.Fprintf(&b, " started=%t", s.Started)
		}
	case ActionPodProbe:
		fmt.Fprintf(&b, " %s/%s", s.Namespace, s.Name)
	case ActionPodFirstSync:
		fmt.Fprintf(&b, " %s/%s", s.Namespace, s.Name)
		switch {
		case s.Update != nil:
			fmt.Fprintf(&b, " %s", statusKindNames[s.Update.Kind])
		case s.Startup:
			b.WriteString(" startup worker decides")
		case s.Legacy:
			b.WriteString(" legacy")
		}
	case ActionPodTerminal, ActionPodDelete, ActionPodReject, ActionPodObservedGeneration:
		fmt.Fprintf(&b, " %s/%s", s.Pod.Namespace, s.Pod.Name)
		if s.Action == ActionPodReject {
			fmt.Fprintf(&b, " %s", s.Reason)
		}
	case ActionObjectWatches, ActionTokens, ActionPodsSynced:
		fmt.Fprintf(&b, " %d pods", len(s.Pods))
	case ActionMark:
		fmt.Fprintf(&b, " %s", s.Mark)
	}
	return b.String()
}

// Plan is a restart's steps. Each actor's steps are played in list order,
// a step once its At has passed (at once if it has); a planner lists them
// by At unless it says otherwise.
type Plan []Step

// String renders the plan, one step a line.
func (p Plan) String() string {
	var b strings.Builder
	for _, s := range p {
		b.WriteString(s.String())
		b.WriteByte('\n')
	}
	return b.String()
}
