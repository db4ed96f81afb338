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
)

var actionNames = map[Action]string{
	ActionNodeStatus: "node-status",
	ActionNodeEvent:  "node-event",
	ActionPodEvent:   "pod-event",
	ActionWait:       "wait",
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

	// Pod and Container are what a pod event is about; Count is the
	// occurrence of its series (1: created, more: the correlator's
	// PATCH of the first), and Series names the series.
	Pod       *corev1.Pod
	Container string
	Count     int32
	Series    string
}

// String renders the step as one line of a plan golden.
func (s Step) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%9.3fs %-11s", s.At.Seconds(), s.Action)
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
	}
	return b.String()
}

// Plan is a restart's steps in the order they are played: by At, and in
// list order at the same offset.
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
