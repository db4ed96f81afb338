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

// TestSetProbe: each handler reaches the readiness, liveness and startup
// probes with the command that answers it, and back again; periods and
// thresholds stay.
func TestSetProbe(t *testing.T) {
	spec := func() *corev1.PodSpec {
		return &corev1.PodSpec{Containers: []corev1.Container{{
			Name:           "app",
			ReadinessProbe: &corev1.Probe{PeriodSeconds: 10, FailureThreshold: 3},
			LivenessProbe:  &corev1.Probe{PeriodSeconds: 10, FailureThreshold: 3},
			StartupProbe:   &corev1.Probe{PeriodSeconds: 10, FailureThreshold: 30},
		}}}
	}
	for _, tc := range []struct {
		probe       string
		wantCommand []string
		check       func(readiness, liveness, startup *corev1.Probe) bool
	}{
		{ProbeExec, nil, func(r, l, s *corev1.Probe) bool {
			return r.Exec != nil && l.Exec != nil && s.Exec != nil && r.HTTPGet == nil && r.TCPSocket == nil
		}},
		{ProbeHTTP, []string{"serve", "8080", "8081"}, func(r, l, s *corev1.Probe) bool {
			return r.HTTPGet != nil && r.HTTPGet.Path == "/healthz" && r.HTTPGet.Port.IntValue() == 8080 &&
				l.HTTPGet != nil && l.HTTPGet.Path == "/livez" && s.HTTPGet != nil && s.HTTPGet.Path == "/healthz" && r.Exec == nil
		}},
		{ProbeTCP, []string{"serve", "8080", "8081"}, func(r, l, s *corev1.Probe) bool {
			return r.TCPSocket != nil && r.TCPSocket.Port.IntValue() == 8081 && l.TCPSocket != nil && s.TCPSocket != nil && r.Exec == nil && r.HTTPGet == nil
		}},
	} {
		for _, from := range []string{ProbeExec, ProbeHTTP, ProbeTCP} {
			t.Run(from+" to "+tc.probe, func(t *testing.T) {
				s := spec()
				setProbe(s, from)
				setProbe(s, tc.probe)
				c := s.Containers[0]
				if !tc.check(c.ReadinessProbe, c.LivenessProbe, c.StartupProbe) {
					t.Errorf("probes %+v / %+v / %+v", c.ReadinessProbe.ProbeHandler, c.LivenessProbe.ProbeHandler, c.StartupProbe.ProbeHandler)
				}
				if !reflect.DeepEqual(c.Command, tc.wantCommand) {
					t.Errorf("command %q, want %q", c.Command, tc.wantCommand)
				}
				if c.ReadinessProbe.PeriodSeconds != 10 || c.StartupProbe.FailureThreshold != 30 {
					t.Errorf("period or threshold changed: %+v, %+v", c.ReadinessProbe, c.StartupProbe)
				}
				if got := podProbe(&corev1.Pod{Spec: *s}); got != tc.probe {
					t.Errorf("podProbe = %q, want %q", got, tc.probe)
				}
			})
		}
	}
	if got := podProbe(&corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app"}}}}); got != "" {
		t.Errorf("podProbe of a pod without probes = %q", got)
	}
	// No startup probe: none is added.
	s := &corev1.PodSpec{Containers: []corev1.Container{{ReadinessProbe: &corev1.Probe{}, LivenessProbe: &corev1.Probe{}}}}
	setProbe(s, ProbeHTTP)
	if s.Containers[0].StartupProbe != nil {
		t.Error("setProbe added a startup probe")
	}
}

func TestLatestContainerStart(t *testing.T) {
	at := func(sec int64) metav1.Time { return metav1.Time{Time: time.Unix(sec, 0)} }
	running := func(sec int64) corev1.ContainerStatus {
		return corev1.ContainerStatus{State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at(sec)}}}
	}
	pod := func(deleting bool, cs ...corev1.ContainerStatus) corev1.Pod {
		p := corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: cs}}
		if deleting {
			p.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
		}
		return p
	}
	waiting := corev1.ContainerStatus{State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}
	for _, tc := range []struct {
		name string
		pods []corev1.Pod
		want time.Time
	}{
		{"no pods", nil, time.Time{}},
		{"latest of all containers", []corev1.Pod{pod(false, running(100), running(130)), pod(false, running(120))}, time.Unix(130, 0)},
		{"terminating pods and waiting containers do not count", []corev1.Pod{pod(false, running(100), waiting), pod(true, running(200))}, time.Unix(100, 0)},
	} {
		if got := latestContainerStart(tc.pods); !got.Equal(tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestProbesOf(t *testing.T) {
	cr := func(probe string) CaseResult { return CaseResult{Case: Case{Probe: probe}} }
	for _, tc := range []struct {
		cases []CaseResult
		want  string
	}{
		{nil, "exec probes"},
		{[]CaseResult{cr(""), cr(ProbeExec)}, "exec probes"},
		{[]CaseResult{cr(ProbeHTTP)}, "http probes"},
		{[]CaseResult{cr(""), cr(ProbeHTTP), cr(ProbeTCP), cr(ProbeHTTP)}, "exec, http and tcp probes (by case: +http, +tcp)"},
		{[]CaseResult{cr(ProbeTCP), cr("")}, "tcp and exec probes (by case: +tcp)"},
	} {
		if got := probesOf(tc.cases); got != tc.want {
			t.Errorf("probesOf(%v) = %q, want %q", tc.cases, got, tc.want)
		}
	}
}
