package kubelet

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestNewPodIP(t *testing.T) {
	pod := func(name, ip string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}, Status: corev1.PodStatus{PodIP: ip}}
	}
	for _, tc := range []struct {
		name string
		cidr string
		ips  []string
		want []string
	}{
		{"after the highest in use", "10.128.3.0/24", []string{"10.128.3.2", "10.128.3.7", "10.128.3.4"}, []string{"10.128.3.8", "10.128.3.9"}},
		{"no pod has an IP", "10.128.3.0/24", nil, []string{"10.128.3.1", "10.128.3.2"}},
		{"addresses outside the CIDR are ignored", "10.128.3.0/24", []string{"10.9.9.9"}, []string{"10.128.3.1"}},
		{"the range runs out before broadcast", "10.128.3.0/30", []string{"10.128.3.2"}, []string{""}},
		{"no pod CIDR", "", []string{"10.128.3.2"}, []string{""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &session{podStore: newPodStore()}
			for i, ip := range tc.ips {
				if err := s.podStore.Add(pod(string(rune('a'+i)), ip)); err != nil {
					t.Fatal(err)
				}
			}
			node := &corev1.Node{Spec: corev1.NodeSpec{PodCIDR: tc.cidr}}
			for _, want := range tc.want {
				if got := s.newPodIP(node); got != want {
					t.Errorf("newPodIP = %q, want %q", got, want)
				}
			}
		})
	}
}

// TestRebootContainerStates: a reboot's first sync reports the containers
// terminated (exit 255 Unknown, restartCount unchanged); when they run
// again the terminated run becomes their last state and restartCount+1.
func TestRebootContainerStates(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	t1 := metav1.NewTime(t0.Add(time.Minute))
	t2 := metav1.NewTime(t0.Add(2 * time.Minute))
	st := &corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{
		Name: "app", Ready: true, RestartCount: 2, ContainerID: "fake://1",
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: t0}},
	}}}
	if !terminateContainers(st, nil, 255, "Unknown", t1) {
		t.Fatal("terminateContainers changed nothing")
	}
	cs := st.ContainerStatuses[0]
	if cs.State.Terminated == nil || cs.State.Terminated.ExitCode != 255 || cs.State.Terminated.Reason != "Unknown" ||
		!cs.State.Terminated.StartedAt.Equal(&t0) || !cs.State.Terminated.FinishedAt.Equal(&t1) || cs.Ready || cs.RestartCount != 2 {
		t.Fatalf("after terminate: %+v", cs)
	}
	if terminateContainers(st, nil, 255, "Unknown", t2) {
		t.Error("a terminated container was terminated again")
	}
	restartContainers(st, nil, 255, "Unknown", t2)
	cs = st.ContainerStatuses[0]
	if cs.State.Running == nil || !cs.State.Running.StartedAt.Equal(&t2) || cs.RestartCount != 3 ||
		cs.LastTerminationState.Terminated == nil || !cs.LastTerminationState.Terminated.FinishedAt.Equal(&t1) {
		t.Errorf("after restart: %+v", cs)
	}
}
