package calibrate

import (
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestMissingCreateEvents(t *testing.T) {
	pod := func(name, ownerKind, owner string, deleting bool) corev1.Pod {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if ownerKind != "" {
			p.OwnerReferences = []metav1.OwnerReference{{Kind: ownerKind, Name: owner, Controller: ptr.To(true)}}
		}
		if deleting {
			p.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
		}
		return p
	}
	event := func(kind, object, reason, message string) corev1.Event {
		return corev1.Event{InvolvedObject: corev1.ObjectReference{Kind: kind, Name: object}, Reason: reason, Message: message}
	}
	pods := []corev1.Pod{
		pod("n1-rs-a", "ReplicaSet", "n1-rs", false),
		pod("n1-rs-b", "ReplicaSet", "n1-rs", false),
		pod("n2-rs-c", "ReplicaSet", "n2-rs", false),
	}
	for _, tc := range []struct {
		name   string
		pods   []corev1.Pod
		events []corev1.Event
		want   []string
	}{
		{"none recorded", pods, nil, []string{"n1-rs-a", "n1-rs-b", "n2-rs-c"}},
		{"all recorded", pods, []corev1.Event{
			event("ReplicaSet", "n1-rs", "SuccessfulCreate", "Created pod: n1-rs-a"),
			event("ReplicaSet", "n1-rs", "SuccessfulCreate", "Created pod: n1-rs-b"),
			event("ReplicaSet", "n2-rs", "SuccessfulCreate", "Created pod: n2-rs-c"),
		}, nil},
		{"one late", pods, []corev1.Event{
			event("ReplicaSet", "n1-rs", "SuccessfulCreate", "Created pod: n1-rs-a"),
			event("ReplicaSet", "n2-rs", "SuccessfulCreate", "Created pod: n2-rs-c"),
		}, []string{"n1-rs-b"}},
		{"combined by the correlator", pods[2:], []corev1.Event{
			event("ReplicaSet", "n2-rs", "SuccessfulCreate", "(combined from similar events): Created pod: n2-rs-c"),
		}, nil},
		{"another ReplicaSet's event", pods[2:], []corev1.Event{
			event("ReplicaSet", "n1-rs", "SuccessfulCreate", "Created pod: n2-rs-c"),
		}, []string{"n2-rs-c"}},
		{"other reasons and kinds", pods[2:], []corev1.Event{
			event("ReplicaSet", "n2-rs", "SuccessfulDelete", "Deleted pod: n2-rs-c"),
			event("Pod", "n2-rs-c", "Scheduled", "Created pod: n2-rs-c"),
		}, []string{"n2-rs-c"}},
		{"deleting and unowned pods wait for nothing", []corev1.Pod{
			pod("n1-rs-x", "ReplicaSet", "n1-rs", true),
			pod("bare", "", "", false),
			pod("job-pod", "Job", "j", false),
		}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := missingCreateEvents(tc.pods, tc.events); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("missing %q, want %q", got, tc.want)
			}
		})
	}
}

func TestFirstN(t *testing.T) {
	s := []string{"a", "b", "c"}
	if got := firstN(s, 2); !reflect.DeepEqual(got, []string{"a", "b", "…"}) {
		t.Errorf("firstN(3, 2) = %q", got)
	}
	if !reflect.DeepEqual(s, []string{"a", "b", "c"}) {
		t.Errorf("firstN changed its input: %q", s)
	}
	if got := firstN(s, 3); !reflect.DeepEqual(got, s) {
		t.Errorf("firstN(3, 3) = %q", got)
	}
}
