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
	// EventError: a step failed; Detail says what.
	EventError EventType = "Error"
	// EventComponentExited: a control-plane component's process exited
	// during the storm (Node is empty; Detail names it).
	EventComponentExited EventType = "ComponentExited"
	// EventStatusSyncDropped: a pod status sync was given up after its
	// retries; Detail names the pod and the last error.
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
	// Detail is free text (an error message, a count).
	Detail string `json:"detail,omitempty"`
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
