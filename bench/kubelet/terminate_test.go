package kubelet

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/stormbench/stormbench/bench/kubelet/plan"
	"github.com/stormbench/stormbench/bench/storm"
)

// TestTerminatePod: a pod deleted while its kubelet was away is finished as
// the kubelet does it: a Killing event per running container, the status
// manager's two syncs, each a GET and a PATCH (first the observed
// generation the deletion raised, then the containers terminated, the pod
// not ready and the phase Succeeded), then a third sync with nothing to write, a GET and the DELETE
// with grace period 0 and the UID as precondition (TerminatePod, after the
// volumes are unmounted). Table: how many containers run.
func TestTerminatePod(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name    string
		running []bool
		want    []string // verb resource[/subresource], in order
	}{
		{"one container", []bool{true},
			[]string{"create events", "get pods", "patch pods/status", "get pods", "patch pods/status", "get pods", "delete pods"}},
		{"two, one already exited", []bool{true, false},
			[]string{"create events", "get pods", "patch pods/status", "get pods", "patch pods/status", "get pods", "delete pods"}},
		{"two running", []bool{true, true},
			[]string{"create events", "create events", "get pods", "patch pods/status", "get pods", "patch pods/status", "get pods", "delete pods"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			deleted := metav1.NewTime(t0.Add(-time.Second))
			pod := &corev1.Pod{
				// The graceful deletion raised the generation to 2.
				ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "uid-1", DeletionTimestamp: &deleted, Generation: 2},
				Spec:       corev1.PodSpec{NodeName: "n1"},
				Status: corev1.PodStatus{Phase: corev1.PodRunning, ObservedGeneration: 1, Conditions: []corev1.PodCondition{
					{Type: corev1.PodReady, Status: corev1.ConditionTrue, ObservedGeneration: 1},
					{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, ObservedGeneration: 1}}},
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
			terminateAndPlay(t, newNodeRun(s, storm.Restart{Node: "n1"}, sess), []*corev1.Pod{pod}, t0)
			// Events go out from their own goroutine, beside the status
			// manager's requests: compare the two sequences apart.
			sess.flushEvents()
			var got, patches []string
			for _, a := range client.Actions() {
				r := a.GetResource().Resource
				if sub := a.GetSubresource(); sub != "" {
					r += "/" + sub
				}
				got = append(got, a.GetVerb()+" "+r)
				if p, ok := a.(k8stesting.PatchActionImpl); ok {
					patches = append(patches, string(p.GetPatch()))
				}
				if a.GetVerb() == "delete" {
					d := a.(k8stesting.DeleteActionImpl).DeleteOptions
					if d.GracePeriodSeconds == nil || *d.GracePeriodSeconds != 0 || d.Preconditions == nil || d.Preconditions.UID == nil || *d.Preconditions.UID != "uid-1" {
						t.Errorf("delete options %+v, want grace period 0 and the UID precondition", d)
					}
				}
			}
			// The first write is the observed generation alone; the
			// second terminates the containers, clears readiness and sets
			// the terminal phase.
			if len(patches) == 2 {
				if !strings.Contains(patches[0], `"observedGeneration":2`) {
					t.Errorf("first status patch lacks the observed generation: %s", patches[0])
				}
				for _, unwanted := range []string{`"phase"`, `"terminated"`, `"status":"False"`} {
					if strings.Contains(patches[0], unwanted) {
						t.Errorf("first status patch carries %s: %s", unwanted, patches[0])
					}
				}
				for _, want := range []string{`"phase":"Succeeded"`, `"terminated"`, `"type":"Ready"`} {
					if !strings.Contains(patches[1], want) {
						t.Errorf("second status patch lacks %s: %s", want, patches[1])
					}
				}
			} else {
				t.Errorf("%d status patches, want 2: %q", len(patches), patches)
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
			if n := s.Counters.PodStatusPatches.Load(); n != 2 {
				t.Errorf("pod status patches %d, want 2", n)
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

// TestTerminatePodsInterleaved: with two pods deleted, both pods' first
// status writes come at the first sync, before either pod's kill is over;
// each pod's terminal write comes at the end of its kill, and its DELETE at
// the end of the first PLEG relist that starts after that.
func TestTerminatePodsInterleaved(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	deleted := metav1.NewTime(t0.Add(-time.Second))
	var pods []*corev1.Pod
	var objs []runtime.Object
	for _, name := range []string{"a", "b"} {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name), DeletionTimestamp: &deleted, Generation: 2},
			Spec:       corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "c"}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: "c", Ready: true,
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(t0.Add(-time.Hour))}}}}},
		}
		pods = append(pods, p)
		objs = append(objs, p.DeepCopy())
	}
	client := fake.NewSimpleClientset(objs...)
	clk := tickClock{clocktesting.NewFakeClock(t0)}
	s := &Simulator{cfg: Config{Clock: clk}}
	sess := &session{node: "n1", client: client, events: client.CoreV1(), clk: clk, syncTimeout: time.Minute}
	sess.startEvents()
	ends := terminateAndPlay(t, newNodeRun(s, storm.Restart{Node: "n1"}, sess), pods, t0)
	sess.flushEvents()
	var got []string
	for _, a := range client.Actions() {
		if a.GetResource().Resource == "events" {
			continue
		}
		r := a.GetResource().Resource
		if sub := a.GetSubresource(); sub != "" {
			r += "/" + sub
		}
		name := ""
		switch a := a.(type) {
		case k8stesting.GetAction:
			name = a.GetName()
		case k8stesting.PatchAction:
			name = a.GetName()
		case k8stesting.DeleteAction:
			name = a.GetName()
		}
		got = append(got, a.GetVerb()+" "+r+" "+name)
	}
	want := []string{"get pods a", "patch pods/status a", "get pods b", "patch pods/status b"}
	for _, st := range ends {
		n := st.Pod.Name
		if st.Action == plan.ActionPodTerminal {
			want = append(want, "get pods "+n, "patch pods/status "+n)
		} else {
			want = append(want, "get pods "+n, "delete pods "+n)
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Each pod: its DELETE at the end of the first relist after its kill
	// (TestPlanDeletions checks the kill's length).
	for _, p := range pods {
		var terminal, del time.Duration = -1, -1
		for _, st := range ends {
			if st.Pod.Name == p.Name && st.Action == plan.ActionPodTerminal {
				terminal = st.At
			}
			if st.Pod.Name == p.Name && st.Action == plan.ActionPodDelete {
				del = st.At
			}
		}
		if terminal <= 0 {
			t.Errorf("pod %s: terminal write at %v, want after the first sync", p.Name, terminal)
		}
		if t0.Add(del) != plan.NextRelist(t0.Add(-relistTestStart), t0.Add(terminal)) {
			t.Errorf("pod %s: DELETE at %v, want at the relist after its kill (%v)", p.Name, del, terminal)
		}
	}
}

// relistTestStart is how long before the pods' first sync the tests'
// kubelet started (session.started).
const relistTestStart = 400 * time.Millisecond

// terminateAndPlay plans the deletions of pods (plan.Start) whose first
// sync is at began, plays the first syncs' steps, then the ends as the
// pods' actor takes them (dueOrder), without sleeps (the clock is fake),
// and returns the ends in that order, At from began.
func terminateAndPlay(t *testing.T, n *nodeRun, pods []*corev1.Pod, began time.Time) plan.Plan {
	t.Helper()
	ctx := context.Background()
	n.sess.started = began.Add(-relistTestStart)
	n.marks = newMarks(began)
	n.marks.reach(markKey{mark: plan.MarkPodSync}, began)
	var syncs, ends plan.Plan
	for _, st := range plan.Start(plan.StartInput{Deleted: pods, Seed: n.s.seed()}) {
		switch st.Action {
		case plan.ActionPodEvent, plan.ActionPodObservedGeneration:
			syncs = append(syncs, st)
		case plan.ActionPodTerminal, plan.ActionPodDelete:
			ends = append(ends, st)
		}
	}
	for _, st := range syncs {
		if err := n.do(ctx, nil, st, map[string]string{}); err != nil {
			t.Fatal(err)
		}
	}
	n.marks.reach(markKey{mark: plan.MarkSyncsDone}, n.s.cfg.Clock.Now())
	ends, err := n.dueOrder(ctx, began, ends)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range ends {
		if err := n.endPod(ctx, st); err != nil {
			t.Fatal(err)
		}
	}
	return ends
}
