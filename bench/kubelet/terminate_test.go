package kubelet

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"
)

// TestTerminatePod: a pod deleted while its kubelet was away is finished as
// the kubelet does it: a Killing event per running container, the status
// manager's GET and terminal status PATCH (containers terminated, phase
// Succeeded, not ready), then the DELETE with grace period 0 and the UID as
// precondition. Table: how many containers run.
func TestTerminatePod(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name    string
		running []bool
		want    []string // verb resource[/subresource], in order
	}{
		{"one container", []bool{true},
			[]string{"create events", "get pods", "patch pods/status", "delete pods"}},
		{"two, one already exited", []bool{true, false},
			[]string{"create events", "get pods", "patch pods/status", "delete pods"}},
		{"two running", []bool{true, true},
			[]string{"create events", "create events", "get pods", "patch pods/status", "delete pods"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			deleted := metav1.NewTime(t0.Add(-time.Second))
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "uid-1", DeletionTimestamp: &deleted},
				Spec:       corev1.PodSpec{NodeName: "n1"},
				Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
					{Type: corev1.PodReady, Status: corev1.ConditionTrue}, {Type: corev1.ContainersReady, Status: corev1.ConditionTrue}}},
			}
			for i, running := range tc.running {
				cs := corev1.ContainerStatus{Name: string(rune('a' + i)), Ready: running}
				if running {
					cs.State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(t0.Add(-time.Hour))}
				} else {
					cs.State.Terminated = &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}
				}
				pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: cs.Name})
				pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, cs)
			}
			client := fake.NewSimpleClientset(pod.DeepCopy())
			clk := tickClock{clocktesting.NewFakeClock(t0)}
			s := &Simulator{cfg: Config{Clock: clk}}
			sess := &session{node: "n1", client: client, events: client.CoreV1(), clk: clk, syncTimeout: time.Minute}
			sess.startEvents()
			if err := s.terminatePod(context.Background(), sess, pod); err != nil {
				t.Fatal(err)
			}
			// Events go out from their own goroutine, beside the status
			// manager's requests: compare the two sequences apart.
			sess.flushEvents()
			var got []string
			for _, a := range client.Actions() {
				r := a.GetResource().Resource
				if sub := a.GetSubresource(); sub != "" {
					r += "/" + sub
				}
				got = append(got, a.GetVerb()+" "+r)
				if p, ok := a.(k8stesting.PatchActionImpl); ok {
					patch := string(p.GetPatch())
					for _, want := range []string{`"phase":"Succeeded"`, `"type":"Ready"`, `"terminated"`} {
						if !strings.Contains(patch, want) {
							t.Errorf("status patch lacks %s: %s", want, patch)
						}
					}
				}
				if a.GetVerb() == "delete" {
					d := a.(k8stesting.DeleteActionImpl).DeleteOptions
					if d.GracePeriodSeconds == nil || *d.GracePeriodSeconds != 0 || d.Preconditions == nil || d.Preconditions.UID == nil || *d.Preconditions.UID != "uid-1" {
						t.Errorf("delete options %+v, want grace period 0 and the UID precondition", d)
					}
				}
			}
			got = append(eventsFirst(got), nonEvents(got)...)
			if len(got) != len(tc.want) {
				t.Fatalf("requests %q, want %q", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("requests %q, want %q", got, tc.want)
				}
			}
			if n := s.Counters.PodStatusPatches.Load(); n != 1 {
				t.Errorf("pod status patches %d, want 1", n)
			}
			if n := s.Counters.PodsDeleted.Load(); n != 1 {
				t.Errorf("pods deleted %d, want 1", n)
			}
		})
	}
}

// tickClock is a fake clock that moves on by a microsecond each time it is
// read, so that two events of one pod get two names, as on a real clock.
type tickClock struct{ *clocktesting.FakeClock }

func (c tickClock) Now() time.Time {
	c.Step(time.Microsecond)
	return c.FakeClock.Now()
}

func eventsFirst(reqs []string) []string {
	var out []string
	for _, r := range reqs {
		if strings.HasSuffix(r, " events") {
			out = append(out, r)
		}
	}
	return out
}

func nonEvents(reqs []string) []string {
	var out []string
	for _, r := range reqs {
		if !strings.HasSuffix(r, " events") {
			out = append(out, r)
		}
	}
	return out
}
