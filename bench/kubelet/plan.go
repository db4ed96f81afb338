package kubelet

// This file holds a restart's plan: what the simulated kubelet does, and
// when, as a list of typed steps. A planner decides (random draws, kubelet
// timing, calibrated offsets) and touches nothing; the executor (play.go)
// sleeps, sends and counts.

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
	// the end of a plan (ActionWait); at a start, the node-level start-up
	// (planNodeStart).
	ActorNode Actor = iota
	// ActorPods is the probe workers and the status manager: pod events
	// and pod status writes.
	ActorPods
)

// actors are every actor, in the order the executor starts them.
var actors = []Actor{ActorNode, ActorPods}

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
	// ActionPodReady writes the pod ready at its first successful probe.
	ActionPodReady
	// ActionPodFlip is the legacy gate's reset of a ready pod: the probe
	// worker's seeded Failure, then its Success; one write of both when
	// the status manager is busy.
	ActionPodFlip
	// ActionCSINode is the CSI plugin's start: its CSINode read, and
	// created when missing (session.csiNode).
	ActionCSINode
	// ActionResourceSliceWipe is the DRA plugin manager's start-up
	// DELETE of the node's ResourceSlices (session.wipeResourceSlices);
	// its failure does not stop the start.
	ActionResourceSliceWipe
	// ActionPodTerminal writes the terminal status of a pod deleted while
	// the kubelet was away, once its kill is over (terminatePods).
	ActionPodTerminal
	// ActionPodDelete is the status manager's last sync of such a pod and
	// its DELETE, once the PLEG has seen the kill (terminatePods).
	ActionPodDelete
)

var actionNames = map[Action]string{
	ActionNodeStatus: "node-status",
	ActionNodeEvent:  "node-event",
	ActionPodEvent:   "pod-event",
	ActionWait:       "wait",
	ActionPodStatus:  "pod-status",
	ActionPodStartup: "pod-startup",
	ActionPodReady:   "pod-ready",
	ActionPodFlip:    "pod-flip",

	ActionCSINode:           "csinode",
	ActionResourceSliceWipe: "slice-wipe",
	ActionPodTerminal:       "pod-terminal",
	ActionPodDelete:         "pod-delete",
}

func (a Action) String() string {
	if n, ok := actionNames[a]; ok {
		return n
	}
	return fmt.Sprintf("Action(%d)", uint8(a))
}

// Step is one thing a simulated kubelet does, At an offset from the start of
// its plan. Which fields mean something depends on Action.
type Step struct {
	At     time.Duration
	Actor  Actor
	Action Action

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
	// ActionPodTerminal and ActionPodDelete end); Count is the
	// occurrence of its series (1: created, more: the correlator's
	// PATCH of the first), and Series names the series.
	Pod       *corev1.Pod
	Container string
	Count     int32
	Series    string

	// Namespace and Name are the pod a pod status step writes.
	Namespace, Name string
	// Probed holds the pod's containers with a readiness probe
	// (ActionPodFlip: the Failure takes their readiness away).
	Probed map[string]time.Duration
	// Started says whether Container counts as started, and SetStarted
	// whether the step writes it (ActionPodStartup; Ready is its
	// readiness).
	Started, SetStarted bool
	// Update is the status a pod's worker hands the status manager
	// (ActionPodStatus).
	Update *statusUpdate
}

// String renders the step as one line of a plan golden.
func (s Step) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%9.3fs %-4s %-11s", s.At.Seconds(), s.Actor, s.Action)
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
		fmt.Fprintf(&b, " %s %s %s count=%d", s.Series, s.EventType, s.Reason, s.Count)
	case ActionPodStatus:
		fmt.Fprintf(&b, " %s/%s %s", s.Namespace, s.Name, statusKindNames[s.Update.kind])
	case ActionPodStartup:
		fmt.Fprintf(&b, " %s/%s %s ready=%t", s.Namespace, s.Name, s.Container, s.Ready)
		if s.SetStarted {
			fmt.Fprintf(&b, " started=%t", s.Started)
		}
	case ActionPodReady, ActionPodFlip:
		fmt.Fprintf(&b, " %s/%s", s.Namespace, s.Name)
	case ActionPodTerminal, ActionPodDelete:
		fmt.Fprintf(&b, " %s/%s", s.Pod.Namespace, s.Pod.Name)
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
