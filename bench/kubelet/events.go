package kubelet

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// A simulated kubelet's event recorder: a queue and a rate-limited client, as client-go's broadcaster.

// eventQueueLength is the broadcaster's queue (tools/record/event.go
// maxQueuedEvents).
const eventQueueLength = 1000

// Event client limits: the kubelet's defaults (KubeletConfiguration
// eventRecordQPS, eventBurst).
const (
	eventQPS   = 50
	eventBurst = 100
)

// recordEvent queues an event send; it never blocks. The sender calls it
// with the session's events context (eventsContext), not with the context
// of the loop that recorded the event: client-go's broadcaster outlives
// the loop, and an event recorded as a loop's last step would otherwise be
// dropped when that loop's context ends.
func (s *session) recordEvent(send func(ctx context.Context)) {
	select {
	case s.eventQ <- send:
	default:
		if s.eventsDropped != nil {
			s.eventsDropped.Add(1)
		}
	}
}

// sendEvents sends queued events one after another until the queue closes.
func (s *session) sendEvents() {
	defer close(s.eventsDone)
	for send := range s.eventQ {
		// Read after the receive: openSession sets the context after the
		// sender started, and before the first event is queued.
		send(s.eventsContext())
	}
}

// flushEvents closes the event queue and waits until every queued event
// was sent (or gave up after its retries).
func (s *session) flushEvents() {
	if s.eventQ == nil {
		return
	}
	s.eventsClosed.Do(func() { close(s.eventQ) })
	<-s.eventsDone
}

// eventsContext is what the event sender sends on: the restart's
// context (eventsCtx, set when the restart opens the session), live until
// the session has flushed its events; the background context when none
// was set.
func (s *session) eventsContext() context.Context {
	if s.eventsCtx != nil {
		return s.eventsCtx
	}
	return context.Background()
}

// startEvents starts the event sender.
func (s *session) startEvents() {
	s.eventQ = make(chan func(ctx context.Context), eventQueueLength)
	s.eventsDone = make(chan struct{})
	go s.sendEvents()
}

// sendEvent queues send (recordEvent), retried as every request of the
// kubelet (retry); its final error is dropped, as the broadcaster's.
func (s *session) sendEvent(send func(ctx context.Context) error) {
	s.recordEvent(func(ctx context.Context) {
		_ = s.retry(ctx, func() error { return send(ctx) })
	})
}

// newEvent is an event the kubelet's recorder makes about obj.
func (s *session) newEvent(meta metav1.ObjectMeta, obj corev1.ObjectReference, now metav1.Time, count int32, typ, reason, msg string) *corev1.Event {
	return &corev1.Event{
		ObjectMeta: meta, InvolvedObject: obj,
		Reason: reason, Message: msg, Type: typ,
		Source:         corev1.EventSource{Component: "kubelet", Host: s.node},
		FirstTimestamp: now, LastTimestamp: now, Count: count,
		ReportingController: "kubelet", ReportingInstance: s.node,
	}
}

// event posts a node event, as the kubelet's recorder does (core/v1 events in
// the default namespace, involvedObject the node).
func (s *session) event(typ, reason, msg string) {
	ev := s.newEvent(metav1.ObjectMeta{GenerateName: s.node + ".", Namespace: metav1.NamespaceDefault},
		corev1.ObjectReference{Kind: "Node", Name: s.node, UID: types.UID(s.node), APIVersion: "v1"},
		metav1.NewTime(s.clk.Now()), 1, typ, reason, msg)
	s.sendEvent(func(ctx context.Context) error {
		_, err := s.events.Events(metav1.NamespaceDefault).Create(ctx, ev, metav1.CreateOptions{})
		return err
	})
}

// podEvent records an event about a pod or one of its containers as the
// kubelet's recorder does: the first occurrence is created; a repeat of the
// same event (name given) is PATCHed with its new count and last
// timestamp, as client-go's event correlator aggregates it
// (tools/record/events_cache.go, eventLogger). It returns the event name.
func (s *session) podEvent(pod *corev1.Pod, container, name string, count int32, typ, reason, msg string) string {
	now := metav1.NewTime(s.clk.Now())
	// A container's event points at it; a pod's (container "") at the pod.
	fieldPath := ""
	if container != "" {
		fieldPath = "spec.containers{" + container + "}"
		for _, c := range pod.Spec.InitContainers {
			if c.Name == container {
				fieldPath = "spec.initContainers{" + container + "}"
			}
		}
	}
	if name != "" {
		patch := fmt.Sprintf(`{"count":%d,"lastTimestamp":%q,"message":%q}`, count, now.UTC().Format(time.RFC3339), msg)
		// An event gone (the event TTL) answers NotFound: the correlator's
		// PATCH fails and the event is not recorded again until its next
		// repeat.
		s.sendEvent(func(ctx context.Context) error {
			_, err := s.events.Events(pod.Namespace).Patch(ctx, name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{})
			return err
		})
		return name
	}
	// The recorder names an event after its object and the time
	// (tools/record/event.go makeEvent); kept increasing here, so that two
	// events of one pod in the same instant get two names.
	nano := now.UnixNano()
	for {
		last := s.eventNano.Load()
		if nano <= last {
			nano = last + 1
		}
		if s.eventNano.CompareAndSwap(last, nano) {
			break
		}
	}
	ev := s.newEvent(metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", pod.Name, nano), Namespace: pod.Namespace},
		corev1.ObjectReference{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID, APIVersion: "v1", FieldPath: fieldPath},
		now, count, typ, reason, msg)
	s.sendEvent(func(ctx context.Context) error {
		_, err := s.events.Events(pod.Namespace).Create(ctx, ev, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	})
	return ev.Name
}
