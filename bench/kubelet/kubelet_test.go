package kubelet

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stormbench/stormbench/bench/measure"
	"github.com/stormbench/stormbench/bench/result"
)

// TestCountersMergeBySum: every counter is per-shard work, so the storm
// measurement's merge rule sums it (by default, or by naming it Sum).
func TestCountersMergeBySum(t *testing.T) {
	rule := measure.MergeRules()[measure.MeasurementStorm]
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

func TestStartupEvents(t *testing.T) {
	if n := len(startupEvents("n1", "")); n < 5 || n > 8 {
		t.Errorf("%d start-up events, the reference says about 5-8", n)
	}
	ev := startupEvents("n1", "0f0e-boot")
	if ev[len(ev)-1].reason != "Rebooted" {
		t.Errorf("a rebooted node records Rebooted last, got %v", ev)
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
		if got := flipsOnRestart(tc.pod, tc.probed, tc.legacy, start); got != tc.want {
			t.Errorf("%s: %t, want %t", tc.name, got, tc.want)
		}
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

func TestBootID(t *testing.T) {
	id := bootID(rand.New(rand.NewPCG(1, 2)))
	if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(id) {
		t.Errorf("boot ID %q is not a version 4 UUID", id)
	}
	if id == bootID(rand.New(rand.NewPCG(1, 3))) {
		t.Error("two seeds gave one boot ID")
	}
}

// TestStartupSteps: the legacy gate's reset of a started container with a
// startup probe, by the order of the two workers' first probes.
func TestStartupSteps(t *testing.T) {
	s := time.Second
	type w struct {
		at             time.Duration
		started, ready bool
	}
	for _, tc := range []struct {
		name           string
		s0, sp, r0, rp time.Duration
		want           []w
	}{
		{"startup first: not started for a startup period, ready at once after", 3 * s, 10 * s, 5 * s, 10 * s,
			[]w{{3 * s, false, false}, {13 * s, true, false}, {13 * s, true, true}}},
		{"readiness first: down at its first result, a moment Ready (SetContainerReadiness), started at the startup worker's first probe", 6 * s, 10 * s, 1 * s, 10 * s,
			[]w{{1 * s, false, false}, {1 * s, false, true}, {1 * s, false, false}, {6 * s, true, false}, {6 * s, true, true}}},
		{"no readiness probe: ready once started", 4 * s, 5 * s, 0, 0,
			[]w{{4 * s, false, false}, {9 * s, true, true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []w
			for _, st := range startupSteps("app", tc.s0, tc.sp, tc.r0, tc.rp) {
				if st.container != "app" {
					t.Errorf("step for %q", st.container)
				}
				got = append(got, w{st.at, st.started, st.ready})
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("steps %v, want %v", got, tc.want)
			}
		})
	}
}
