package kubelet

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stormbench/stormbench/bench/measure/registry"
	"github.com/stormbench/stormbench/bench/measure/self"
	"github.com/stormbench/stormbench/bench/result"
)

// TestCountersMergeBySum: every counter is per-shard work, so the storm
// measurement's merge rule sums it (by default, or by naming it Sum).
func TestCountersMergeBySum(t *testing.T) {
	rule := registry.MergeRules()[self.Name]
	for name := range (&Counters{}).Snapshot() {
		if a, named := rule.Figures[name]; named && a != result.Sum {
			t.Errorf("counter %s aggregates by %v, want Sum", name, a)
		}
	}
}

func pod(ready bool) *corev1.PodStatus {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	return &corev1.PodStatus{
		Phase: corev1.PodRunning,
		Conditions: []corev1.PodCondition{
			{Type: corev1.ContainersReady, Status: status},
			{Type: corev1.PodReady, Status: status},
		},
		ContainerStatuses: []corev1.ContainerStatus{
			{Name: "app", Ready: ready, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(time.Unix(100, 0))}}},
			{Name: "sidecar", Ready: ready, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(time.Unix(100, 0))}}},
		},
	}
}

func TestSetReadiness(t *testing.T) {
	now := metav1.NewTime(time.Unix(1000, 0))
	tests := []struct {
		name        string
		start       bool
		ready       func(string) bool
		wantChanged bool
		wantReady   bool
	}{
		{"all stay ready", true, func(string) bool { return true }, false, true},
		{"probed container resets", true, func(c string) bool { return c != "app" }, true, false},
		{"probe passes", false, func(string) bool { return true }, true, true},
		{"still failing", false, func(string) bool { return false }, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := pod(tt.start)
			changed := setReadiness(st, tt.ready, now)
			if changed != tt.wantChanged || podReady(st) != tt.wantReady {
				t.Errorf("changed %v ready %v, want %v %v", changed, podReady(st), tt.wantChanged, tt.wantReady)
			}
			for _, c := range st.Conditions {
				if changed && c.Type == corev1.PodReady && !c.LastTransitionTime.Equal(&now) {
					t.Errorf("Ready transition time %v not moved", c.LastTransitionTime)
				}
			}
		})
	}
}

func TestRestartContainers(t *testing.T) {
	now := metav1.NewTime(time.Unix(1000, 0))
	st := pod(true)
	if !restartContainers(st, func(c string) bool { return c == "app" }, 137, "Error", now) {
		t.Fatal("no change")
	}
	app, side := st.ContainerStatuses[0], st.ContainerStatuses[1]
	if app.RestartCount != 1 || app.Ready || app.LastTerminationState.Terminated == nil ||
		app.LastTerminationState.Terminated.ExitCode != 137 || !app.State.Running.StartedAt.Equal(&now) ||
		!app.LastTerminationState.Terminated.StartedAt.Equal(&metav1.Time{Time: time.Unix(100, 0)}) {
		t.Errorf("restarted container: %+v", app)
	}
	if side.RestartCount != 0 || !side.Ready {
		t.Errorf("untouched container changed: %+v", side)
	}
}

func TestPodStatusPatch(t *testing.T) {
	old := pod(true)
	cur := old.DeepCopy()
	setReadiness(cur, func(string) bool { return false }, metav1.NewTime(time.Unix(1000, 0)))
	patch, unchanged, err := podStatusPatch("uid-1", *old, *cur)
	if err != nil || unchanged {
		t.Fatal(err, unchanged)
	}
	s := string(patch)
	// As statusutil.PatchPodStatus: the UID precondition and only the
	// changed status, with strategic-merge directives for lists.
	for _, want := range []string{`"uid":"uid-1"`, `"$setElementOrder/conditions"`, `"type":"Ready"`, `"status":"False"`} {
		if !strings.Contains(s, want) {
			t.Errorf("patch %s lacks %s", s, want)
		}
	}
	same, unchanged, err := podStatusPatch("uid-1", *old, *old)
	if err != nil {
		t.Fatal(err)
	}
	if !unchanged || string(same) != `{"metadata":{"uid":"uid-1"}}` {
		t.Errorf("no-op patch %s (unchanged %v)", same, unchanged)
	}
}

// TestNodeStatusPatch: every condition gets a new heartbeat; the Ready
// condition's transition time moves only on a transition; a new boot ID
// goes in the patch that follows a reboot.
func TestNodeStatusPatch(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	for _, tc := range []struct {
		name       string
		prev       corev1.ConditionStatus
		ready      bool
		bootID     string
		transition bool
	}{
		{"ready stays ready", corev1.ConditionTrue, true, "", false},
		{"ready goes not ready", corev1.ConditionTrue, false, "", true},
		{"not ready comes back", corev1.ConditionFalse, true, "", true},
		{"unknown (node controller) to ready", corev1.ConditionUnknown, true, "", true},
		{"after a reboot", corev1.ConditionTrue, true, "4f1c-new", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, status := nodeStatusPatch(now, tc.prev, tc.ready, "R", "M", tc.bootID, "")
			var p struct {
				Status struct {
					Order      []map[string]string `json:"$setElementOrder/conditions"`
					Conditions []map[string]any    `json:"conditions"`
					NodeInfo   map[string]string   `json:"nodeInfo"`
				} `json:"status"`
			}
			if err := json.Unmarshal(data, &p); err != nil {
				t.Fatal(err)
			}
			if len(p.Status.Conditions) != 4 || len(p.Status.Order) != 4 {
				t.Fatalf("conditions %v, order %v: want all four", p.Status.Conditions, p.Status.Order)
			}
			for _, c := range p.Status.Conditions {
				if c["lastHeartbeatTime"] == nil {
					t.Errorf("%v: no heartbeat", c["type"])
				}
				_, moved := c["lastTransitionTime"]
				if c["type"] != "Ready" {
					if moved || c["status"] != nil {
						t.Errorf("%v changed beyond its heartbeat: %v", c["type"], c)
					}
					continue
				}
				if moved != tc.transition {
					t.Errorf("Ready transition time in the patch: %v, want %v", moved, tc.transition)
				}
				want := "True"
				if !tc.ready {
					want = "False"
				}
				if c["status"] != want || string(status) != want {
					t.Errorf("Ready status %v (returned %s), want %s", c["status"], status, want)
				}
			}
			if got := p.Status.NodeInfo["bootID"]; got != tc.bootID {
				t.Errorf("bootID %q in the patch, want %q", got, tc.bootID)
			}
		})
	}
}
