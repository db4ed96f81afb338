package kubelet

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// statusGen draws pod statuses from the values a kubelet writes, with the
// corners of their JSON: zero and sub-second times, empty and escaped
// strings, reordered, added and removed list elements.
type statusGen struct{ r *rand.Rand }

func (g statusGen) pick(s ...string) string { return s[g.r.IntN(len(s))] }

func (g statusGen) str() string {
	return g.pick("", "", "Ready", "ContainersNotReady", "containers with unready status", `a "quoted" <b> & c`,
		"tab\tline\nend", "ünïcode", "line\u2028sep", "PodCompleted")
}

func (g statusGen) time() metav1.Time {
	switch g.r.IntN(5) {
	case 0:
		return metav1.Time{}
	case 1:
		return metav1.NewTime(time.Unix(1700000000, int64(g.r.IntN(1e9))))
	default:
		return metav1.NewTime(time.Unix(1700000000+int64(g.r.IntN(4)), 0))
	}
}

func (g statusGen) condition(typ string) corev1.PodCondition {
	return corev1.PodCondition{
		Type:               corev1.PodConditionType(typ),
		Status:             corev1.ConditionStatus(g.pick("True", "False", "Unknown", "")),
		ObservedGeneration: int64(g.r.IntN(3)),
		LastProbeTime:      g.time(),
		LastTransitionTime: g.time(),
		Reason:             g.str(),
		Message:            g.str(),
	}
}

func (g statusGen) conditions() []corev1.PodCondition {
	types := []string{"PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled", "DisruptionTarget"}
	g.r.Shuffle(len(types), func(i, j int) { types[i], types[j] = types[j], types[i] })
	var out []corev1.PodCondition
	for _, t := range types[:g.r.IntN(len(types)+1)] {
		out = append(out, g.condition(t))
	}
	return out
}

func (g statusGen) state() corev1.ContainerState {
	var s corev1.ContainerState
	switch g.r.IntN(5) {
	case 0:
		s.Running = &corev1.ContainerStateRunning{StartedAt: g.time()}
	case 1:
		s.Terminated = &corev1.ContainerStateTerminated{ExitCode: int32(g.r.IntN(2) * 137), Signal: int32(g.r.IntN(2) * 9),
			Reason: g.str(), Message: g.str(), StartedAt: g.time(), FinishedAt: g.time(), ContainerID: g.pick("", "containerd://abc")}
	case 2:
		s.Waiting = &corev1.ContainerStateWaiting{Reason: g.str(), Message: g.str()}
	case 3:
		s.Running = &corev1.ContainerStateRunning{StartedAt: g.time()}
		s.Waiting = &corev1.ContainerStateWaiting{}
	}
	return s
}

func (g statusGen) containers(names ...string) []corev1.ContainerStatus {
	var out []corev1.ContainerStatus
	for _, n := range names[:g.r.IntN(len(names)+1)] {
		cs := corev1.ContainerStatus{Name: n, Ready: g.r.IntN(2) == 0, RestartCount: int32(g.r.IntN(3)),
			Image: g.pick("", "registry.k8s.io/pause:3.10"), ImageID: g.pick("", "sha256:1234"),
			ContainerID: g.pick("", "containerd://c1", "kwok://x"), State: g.state(), LastTerminationState: g.state()}
		if b := g.r.IntN(3); b > 0 {
			started := b == 1
			cs.Started = &started
		}
		out = append(out, cs)
	}
	return out
}

func (g statusGen) ips() []string {
	ips := []string{"10.244.1.5", "10.244.1.9", "fd00::5"}
	g.r.Shuffle(len(ips), func(i, j int) { ips[i], ips[j] = ips[j], ips[i] })
	return ips[:g.r.IntN(len(ips)+1)]
}

func (g statusGen) status() corev1.PodStatus {
	st := corev1.PodStatus{
		Phase:              corev1.PodPhase(g.pick("", "Pending", "Running", "Succeeded")),
		ObservedGeneration: int64(g.r.IntN(3)),
		Message:            g.str(), Reason: g.str(),
		NominatedNodeName: g.pick("", "n2"),
		HostIP:            g.pick("", "10.0.0.1", "10.0.0.2"),
		PodIP:             g.pick("", "10.244.1.5"),
		QOSClass:          corev1.PodQOSClass(g.pick("", "BestEffort", "Burstable")),
		Resize:            corev1.PodResizeStatus(g.pick("", "", "InProgress")),
		Conditions:        g.conditions(),
		ContainerStatuses: g.containers("app", "sidecar"),
	}
	if g.r.IntN(4) == 0 {
		st.InitContainerStatuses = g.containers("init")
	}
	if g.r.IntN(8) == 0 {
		st.EphemeralContainerStatuses = g.containers("debug")
	}
	if g.r.IntN(3) > 0 {
		t := g.time() // sometimes zero: a set zero time marshals as null
		st.StartTime = &t
	}
	for _, ip := range g.ips() {
		st.PodIPs = append(st.PodIPs, corev1.PodIP{IP: ip})
	}
	for _, ip := range g.ips()[:min(1, len(g.ips()))] {
		st.HostIPs = append(st.HostIPs, corev1.HostIP{IP: ip})
	}
	return st
}

// mutate changes a few fields of a copy, as one kubelet write does.
func (g statusGen) mutate(st corev1.PodStatus) corev1.PodStatus {
	cur := *st.DeepCopy()
	for range 1 + g.r.IntN(3) {
		switch g.r.IntN(10) {
		case 0:
			cur.Phase = corev1.PodPhase(g.pick("", "Running", "Failed"))
		case 1:
			if len(cur.Conditions) > 0 {
				i := g.r.IntN(len(cur.Conditions))
				cur.Conditions[i] = g.condition(string(cur.Conditions[i].Type))
			}
		case 2:
			if len(cur.Conditions) > 0 {
				cur.Conditions = cur.Conditions[1:]
			}
		case 3:
			if !slices.ContainsFunc(cur.Conditions, func(c corev1.PodCondition) bool { return c.Type == "Extra" }) {
				cur.Conditions = append(cur.Conditions, g.condition("Extra"))
			}
		case 4:
			if len(cur.ContainerStatuses) > 0 {
				cur.ContainerStatuses[0].Ready = !cur.ContainerStatuses[0].Ready
			}
		case 5:
			cur.ContainerStatuses = g.containers("app", "sidecar")
		case 6:
			cur.PodIPs = nil
			for _, ip := range g.ips() {
				cur.PodIPs = append(cur.PodIPs, corev1.PodIP{IP: ip})
			}
		case 7:
			if len(cur.Conditions) > 1 {
				cur.Conditions[0], cur.Conditions[1] = cur.Conditions[1], cur.Conditions[0]
			}
		case 8:
			cur.StartTime = nil
			if g.r.IntN(3) > 0 {
				t := g.time()
				cur.StartTime = &t
			}
		case 9:
			cur.Message, cur.HostIP, cur.ObservedGeneration = g.str(), g.pick("", "10.0.0.3"), int64(g.r.IntN(3))
		}
	}
	return cur
}

// TestStatusPatchMatchesStrategicPatch: the directly written patch is
// byte for byte the one strategicpatch computes, on generated pairs of
// statuses (a status and a few writes to it, or two unrelated statuses).
func TestStatusPatchMatchesStrategicPatch(t *testing.T) {
	g := statusGen{rand.New(rand.NewPCG(32, 1))}
	const n = 20000
	fast, unchanged := 0, 0
	for i := range n {
		old := g.status()
		var cur corev1.PodStatus
		switch i % 4 {
		case 0:
			cur = g.status()
		case 1:
			cur = *old.DeepCopy()
		default:
			cur = g.mutate(old)
		}
		uid := types.UID(fmt.Sprintf("uid-%d", i))
		want, wantUnchanged, err := strategicStatusPatch(uid, old, cur)
		if err != nil {
			t.Fatal(err)
		}
		got, gotUnchanged, ok := fastStatusPatch(uid, &old, &cur)
		if !ok {
			continue
		}
		fast++
		if gotUnchanged {
			unchanged++
		}
		if string(got) != string(want) || gotUnchanged != wantUnchanged {
			t.Fatalf("pair %d:\nold %+v\ncur %+v\n got %s (unchanged %v)\nwant %s (unchanged %v)", i, old, cur, got, gotUnchanged, want, wantUnchanged)
		}
	}
	// Every generated status is one the direct writer takes (no resource
	// claims, resources, users; UTF-8 strings; unique merge keys), so a
	// fallback here is a regression of the fast path.
	if fast != n {
		t.Errorf("direct patch written for %d of %d pairs, want all", fast, n)
	}
	if unchanged < n/5 {
		t.Errorf("%d unchanged pairs, want at least %d: the generator no longer covers no-op writes", unchanged, n/5)
	}
}

// TestStatusPatchFallsBack: statuses outside what the direct writer
// handles take strategicpatch, and podStatusPatch still returns its bytes.
func TestStatusPatchFallsBack(t *testing.T) {
	base := func() corev1.PodStatus {
		return corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Ready: true}}}
	}
	far := metav1.NewTime(time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC))
	for _, tc := range []struct {
		name string
		uid  types.UID
		edit func(st *corev1.PodStatus)
	}{
		{"no uid", "", func(st *corev1.PodStatus) { st.Phase = corev1.PodFailed }},
		{"container resources", "u", func(st *corev1.PodStatus) {
			st.ContainerStatuses[0].Resources = &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}
		}},
		{"resource claims", "u", func(st *corev1.PodStatus) {
			st.ResourceClaimStatuses = []corev1.PodResourceClaimStatus{{Name: "gpu"}}
		}},
		{"duplicate condition", "u", func(st *corev1.PodStatus) { st.Conditions = append(st.Conditions, st.Conditions[0]) }},
		{"duplicate pod ip", "u", func(st *corev1.PodStatus) { st.PodIPs = []corev1.PodIP{{IP: "a"}, {IP: "a"}} }},
		{"start time past 9999", "u", func(st *corev1.PodStatus) { st.StartTime = &far }},
		{"not utf-8", "u", func(st *corev1.PodStatus) { st.Message = "bad \xff byte" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old, cur := base(), base()
			tc.edit(&cur)
			if _, _, ok := fastStatusPatch(tc.uid, &old, &cur); ok {
				t.Fatal("direct writer took a status it does not handle")
			}
			got, _, err := podStatusPatch(tc.uid, old, cur)
			if err != nil {
				t.Fatal(err)
			}
			want, _, err := strategicStatusPatch(tc.uid, old, cur)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("patch\n got %s\nwant %s", got, want)
			}
		})
	}
}
