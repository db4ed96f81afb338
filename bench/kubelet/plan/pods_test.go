package plan

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestAdmissionRejects(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"type": "kwok", "zone": "a"}}}
	tests := []struct {
		name       string
		taints     []corev1.Taint
		selector   map[string]string
		tolerate   []corev1.Toleration
		wantReason string
	}{
		{"fits", nil, map[string]string{"type": "kwok"}, nil, ""},
		{"label gone", nil, map[string]string{"zone": "b"}, nil, "NodeAffinity"},
		{"untolerated NoExecute", []corev1.Taint{{Key: "maintenance", Value: "x", Effect: corev1.TaintEffectNoExecute}}, nil, nil, "TaintToleration"},
		{"tolerated NoExecute", []corev1.Taint{{Key: "maintenance", Effect: corev1.TaintEffectNoExecute}}, nil, []corev1.Toleration{{Key: "maintenance", Operator: corev1.TolerationOpExists}}, ""},
		{"NoSchedule ignored", []corev1.Taint{{Key: "maintenance", Effect: corev1.TaintEffectNoSchedule}}, nil, nil, ""},
		{"lifecycle taint is eviction's business", []corev1.Taint{{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute}}, nil, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := node.DeepCopy()
			n.Spec.Taints = tt.taints
			p := &corev1.Pod{Spec: corev1.PodSpec{NodeSelector: tt.selector, Tolerations: tt.tolerate}}
			reason, msg, rejected := admissionRejects(n, p)
			if reason != tt.wantReason || rejected != (tt.wantReason != "") || (rejected && !strings.HasPrefix(msg, "Pod was rejected")) {
				t.Errorf("got %q %q %v, want %q", reason, msg, rejected, tt.wantReason)
			}
		})
	}
}

// TestFlipsOnRestart: the legacy gate resets every probed pod; with the
// gate off only a pod whose probed container started within 10 s before
// the kubelet is reset (prober kubeletRestartGracePeriod).
func TestFlipsOnRestart(t *testing.T) {
	start := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	pod := func(started ...time.Duration) *corev1.Pod {
		p := &corev1.Pod{}
		for i, d := range started {
			cs := corev1.ContainerStatus{Name: fmt.Sprintf("c%d", i)}
			if d != 0 {
				cs.State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(start.Add(d))}
			}
			p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, cs)
		}
		return p
	}
	probed := map[string]time.Duration{"c0": 0}
	for _, tc := range []struct {
		name   string
		pod    *corev1.Pod
		probed map[string]time.Duration
		legacy bool
		want   bool
	}{
		{"legacy, old container", pod(-time.Hour), probed, true, true},
		{"legacy, no probe", pod(-time.Hour), nil, true, false},
		{"preserve, old container", pod(-time.Hour), probed, false, false},
		{"preserve, started 11 s before", pod(-11 * time.Second), probed, false, false},
		{"preserve, started 10 s before", pod(-10 * time.Second), probed, false, true},
		{"preserve, started 3 s before", pod(-3 * time.Second), probed, false, true},
		{"preserve, recent but unprobed container", pod(-time.Hour, -time.Second), probed, false, false},
		{"preserve, not running", pod(0), probed, false, false},
	} {
		if got := FlipsOnRestart(tc.pod, tc.probed, tc.legacy, start); got != tc.want {
			t.Errorf("%s: %t, want %t", tc.name, got, tc.want)
		}
	}
}

// TestNextRelist: the pod cache is newer than an instant at the end of the
// first relist that starts at or after it, on a grid of relists one period
// plus a relist's duration apart from the kubelet's start.
func TestNextRelist(t *testing.T) {
	started := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	grid := plegRelistPeriod + plegRelist // 1.06 s
	for _, tc := range []struct {
		name         string
		began, after time.Duration // from the kubelet's start; after from began
		want         time.Duration // from began
	}{
		{"at a relist's start", 0, grid, grid + plegRelist},
		{"just after the first", 0, time.Millisecond, grid + plegRelist - 0},
		{"kill over at 1.7 s", 1400 * time.Millisecond, 300 * time.Millisecond, 2*grid + plegRelist - 1400*time.Millisecond},
		{"kill over at 2.2 s", 1400 * time.Millisecond, 800 * time.Millisecond, 3*grid + plegRelist - 1400*time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := NextRelist(started, started.Add(tc.began+tc.after)).Sub(started.Add(tc.began)); got != tc.want {
				t.Errorf("NextRelist(began %v, after %v) = %v, want %v", tc.began, tc.after, got, tc.want)
			}
		})
	}
}

// TestPlanDeletions: each deleted pod gets a Killing event per running
// container and its observed generation among the first syncs; then its
// terminal write once its kill is over, within [killMin,
// killMin+killSpread) of the end of the first syncs, and its DELETE
// counted from the same instant (the executor moves it to the next
// relist), both of the pods actor.
func TestPlanDeletions(t *testing.T) {
	deleted := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	var pods []*corev1.Pod
	for _, name := range []string{"a", "b", "c"} {
		pods = append(pods, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", DeletionTimestamp: &deleted, Generation: 2},
			Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{
				{Name: "app", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}},
				{Name: "done", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{}}},
			}},
		})
	}
	syncs, ends := planDeletions(pods, Seed{Value: 7})
	var kills, generations int
	for _, st := range syncs {
		switch {
		case st.Action == ActionPodEvent && st.Reason == "Killing" && st.Container == "app":
			kills++
		case st.Action == ActionPodObservedGeneration:
			generations++
		default:
			t.Errorf("first-sync step %s: want a Killing event of a running container or an observed generation", st)
		}
	}
	if kills != len(pods) || generations != len(pods) {
		t.Errorf("%d Killing events and %d observed generations, want %d of each", kills, generations, len(pods))
	}
	if len(ends) != 2*len(pods) {
		t.Fatalf("%d ends, want a terminal write and a DELETE per pod:\n%s", len(ends), ends)
	}
	for i := 0; i < len(ends); i += 2 {
		term, del := ends[i], ends[i+1]
		if term.Action != ActionPodTerminal || del.Action != ActionPodDelete || term.Pod != del.Pod {
			t.Errorf("ends %s, %s: want a pod's terminal write, then its DELETE", term, del)
		}
		if term.From != MarkSyncsDone || del.From != MarkSyncsDone || term.Actor != ActorPods || del.At != term.At {
			t.Errorf("ends %s, %s: want both of the pods actor, from the end of the first syncs, at the kill's end", term, del)
		}
		if term.At < killMin || term.At >= killMin+killSpread {
			t.Errorf("pod %s: kill over at %v, want within [%v, %v)", term.Pod.Name, term.At, killMin, killMin+killSpread)
		}
	}
}
