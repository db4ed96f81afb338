package storm

import (
	"sync"
	"time"
)

// EventType names one step of a simulated restart.
type EventType string

// Event types, in the order a node passes through them.
const (
	// EventWaveStart marks the storm's start, once per storm, at its first
	// wave's offset (Node is empty); the waves' own offsets are the
	// schedule's.
	EventWaveStart EventType = "WaveStart"
	// EventDown: the node's kubelet, runtime or the whole node went down.
	EventDown EventType = "Down"
	// EventKubeletStart: the simulated kubelet started and began replaying
	// its startup traffic.
	EventKubeletStart EventType = "KubeletStart"
	// EventSynced: the simulated kubelet's informers have synced.
	EventSynced EventType = "Synced"
	// EventReportedReady: the node reported Ready and was handed back to KWOK.
	EventReportedReady EventType = "ReportedReady"
	// EventPodsRecovered: every pod of the node is Ready again.
	EventPodsRecovered EventType = "PodsRecovered"
	// EventStormEnd marks the end of the storm: every node recovered (or the
	// recovery timeout passed).
	EventStormEnd EventType = "StormEnd"
	// EventError: a step failed; Err says what.
	EventError EventType = "Error"
	// EventComponentExited: a control-plane component's process exited
	// during the storm (Node is empty; Component names it).
	EventComponentExited EventType = "ComponentExited"
	// EventStatusSyncDropped: a pod status sync was given up after its
	// retries; Pod names the pod and Err the last error.
	EventStatusSyncDropped EventType = "StatusSyncDropped"
	// EventComponentBack: it is running again.
	EventComponentBack EventType = "ComponentBack"
)

// Event is one entry of a storm's event log.
type Event struct {
	// Time is when it happened.
	Time time.Time `json:"time"`
	// Type is what happened.
	Type EventType `json:"type"`
	// Node is the node concerned; empty for storm-wide events.
	Node string `json:"node,omitempty"`
	// Wave is the wave index of the node's restart.
	Wave int `json:"wave"`
	// Kind is a Down event's restart kind (profiles.StormKubelet,
	// StormRuntime, StormReboot).
	Kind string `json:"kind,omitempty"`
	// Real marks a Down event of a node with a real kubelet.
	Real bool `json:"real,omitempty"`
	// Pods is a Synced event's count of the node's pods.
	Pods int `json:"pods,omitempty"`
	// Pod is the pod of a StatusSyncDropped event, namespace/name.
	Pod string `json:"pod,omitempty"`
	// Component and PID name the control-plane process of a
	// ComponentExited or ComponentBack event.
	Component string `json:"component,omitempty"`
	PID       int    `json:"pid,omitempty"`
	// Err is the error of an Error or StatusSyncDropped event.
	Err string `json:"error,omitempty"`
}

// Failure is an Error or StatusSyncDropped event as one line for people,
// "node: error" or "node: pod: error"; "" for other events.
func (e Event) Failure() string {
	switch e.Type {
	case EventError:
		return e.Node + ": " + e.Err
	case EventStatusSyncDropped:
		return e.Node + ": " + e.Pod + ": " + e.Err
	}
	return ""
}

// EventLog is an append-only, concurrency-safe, in-memory log of storm events.
// Measurements read it after the storm to anchor their timestamps.
type EventLog struct {
	mu     sync.Mutex
	events []Event
}

// Add appends an event.
func (l *EventLog) Add(e Event) {
	l.mu.Lock()
	l.events = append(l.events, e)
	l.mu.Unlock()
}

// Events returns a copy of the log in insertion order.
func (l *EventLog) Events() []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Event(nil), l.events...)
}

// Failures counts the failed restarts in events: one Error event each
// (a restarter records one when it returns an error).
func Failures(events []Event) int {
	n := 0
	for _, e := range events {
		if e.Type == EventError {
			n++
		}
	}
	return n
}

// Restarts counts the restarts in events: one Down event per node restart
// that took its node down. It is the one count of restarts: the variant's
// Restarts, the excess requests per restart and the recovery measurement
// all divide by it.
func Restarts(events []Event) int {
	n := 0
	for _, e := range events {
		if e.Type == EventDown {
			n++
		}
	}
	return n
}
