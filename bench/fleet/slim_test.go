package fleet

import (
	"encoding/json"
	"os"
	"reflect"
	"runtime"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// fleetPod is a Running web-http pod read from the fleet-5k fleet (embedded
// cluster v1.36.3, KWOK 0.8.0): defaulted by admission, bound by the
// scheduler, its status written by KWOK, managedFields included.
func fleetPod(t testing.TB) *corev1.Pod {
	t.Helper()
	b, err := os.ReadFile("testdata/fleet-pod.json")
	if err != nil {
		t.Fatal(err)
	}
	var p corev1.Pod
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	return &p
}

func setCondition(p *corev1.Pod, typ corev1.PodConditionType, status corev1.ConditionStatus, since time.Time) {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == typ {
			p.Status.Conditions[i].Status = status
			p.Status.Conditions[i].LastTransitionTime = metav1.NewTime(since)
			return
		}
	}
	p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: typ, Status: status, LastTransitionTime: metav1.NewTime(since)})
}

// TestSlimPod: what readiness, the stale-readiness fixer and recovery read
// from a pod is the same before and after the transform, for a pod in each
// state they tell apart; the bulk of the pod is gone.
func TestSlimPod(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		name  string
		edit  func(*corev1.Pod)
		ready bool
		stale bool
	}{
		{"running and ready", func(*corev1.Pod) {}, true, false},
		{"marked not ready by the node-lifecycle controller", func(p *corev1.Pod) {
			setCondition(p, corev1.PodReady, corev1.ConditionFalse, now.Add(-time.Minute))
		}, false, true},
		{"not ready, containers not ready", func(p *corev1.Pod) {
			setCondition(p, corev1.PodReady, corev1.ConditionFalse, now.Add(-time.Minute))
			setCondition(p, corev1.ContainersReady, corev1.ConditionFalse, now.Add(-time.Minute))
			p.Status.ContainerStatuses[0].Ready = false
		}, false, false},
		{"unschedulable", func(p *corev1.Pod) {
			p.Spec.NodeName = ""
			p.Status = corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
				Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable",
				Message: "0/5000 nodes are available: 5000 Too many pods.",
			}}}
		}, false, false},
		{"being deleted", func(p *corev1.Pod) {
			ts := metav1.NewTime(now)
			p.DeletionTimestamp = &ts
			setCondition(p, corev1.PodReady, corev1.ConditionFalse, now.Add(-time.Minute))
		}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			full := fleetPod(t)
			tc.edit(full)
			out, err := SlimPod(full.DeepCopy())
			if err != nil {
				t.Fatal(err)
			}
			slim := out.(*corev1.Pod)
			if got := PodReady(slim); got != tc.ready || got != PodReady(full) {
				t.Errorf("PodReady: slim %v, full %v, want %v", got, PodReady(full), tc.ready)
			}
			if got := staleNotReady(slim, now); got != tc.stale || got != staleNotReady(full, now) {
				t.Errorf("staleNotReady: slim %v, full %v, want %v", got, staleNotReady(full, now), tc.stale)
			}
			if a, b := podReason(slim), podReason(full); a != b {
				t.Errorf("podReason: slim %q, full %q", a, b)
			}
			if slim.Name != full.Name || slim.Namespace != full.Namespace || slim.UID != full.UID ||
				slim.ResourceVersion != full.ResourceVersion || slim.Spec.NodeName != full.Spec.NodeName ||
				!reflect.DeepEqual(slim.DeletionTimestamp, full.DeletionTimestamp) {
				t.Errorf("identity or node differs: %+v", slim.ObjectMeta)
			}
			if !reflect.DeepEqual(slim.Status.Conditions, full.Status.Conditions) || slim.Status.Phase != full.Status.Phase {
				t.Errorf("status differs: %+v", slim.Status)
			}
			for i, c := range slim.Status.ContainerStatuses {
				f := full.Status.ContainerStatuses[i]
				if c.Name != f.Name || c.Ready != f.Ready || !reflect.DeepEqual(c.State, f.State) || c.RestartCount != f.RestartCount {
					t.Errorf("container status %d: %+v, want from %+v", i, c, f)
				}
				if c.Image != "" || c.ContainerID != "" {
					t.Errorf("container status %d keeps its image and ID", i)
				}
			}
			if len(slim.Spec.Containers) != 0 || len(slim.Spec.Volumes) != 0 || slim.Labels != nil || slim.ManagedFields != nil {
				t.Errorf("the slim pod keeps what nobody reads: %d containers, %d volumes, labels %v, %d managedFields",
					len(slim.Spec.Containers), len(slim.Spec.Volumes), slim.Labels, len(slim.ManagedFields))
			}
		})
	}
}

// Other objects of the same informer factory (EndpointSlices in the
// recovery measurement) keep everything but their managedFields.
func TestSlimPodOtherObjects(t *testing.T) {
	s := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "s", Labels: map[string]string{"a": "b"},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "endpointslice-controller"}}},
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1"}}}}
	out, err := SlimPod(s)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := out.(*discoveryv1.EndpointSlice)
	if !ok || got.ManagedFields != nil || got.Labels["a"] != "b" || len(got.Endpoints) != 1 {
		t.Errorf("EndpointSlice after SlimPod: %+v", out)
	}
}

// BenchmarkPodCacheBytes reports the heap a cache of the fleet's pods holds
// per pod, decoded (managedFields already dropped, as before SlimPod) and
// slim. Memory, not time, is the figure: run with -benchtime=1x.
func BenchmarkPodCacheBytes(b *testing.B) {
	raw, err := os.ReadFile("testdata/fleet-pod.json")
	if err != nil {
		b.Fatal(err)
	}
	benchCacheBytes[corev1.Pod](b, raw, SlimPod, "heapB/pod")
}

// benchCacheBytes reports the heap that a cache of 5,000 objects decoded
// from raw holds per object (in unit), managedFields dropped and after
// slim, each a sub-benchmark.
func benchCacheBytes[T any](b *testing.B, raw []byte, slim func(any) (any, error), unit string) {
	const n = 5000
	for _, bc := range []struct {
		name      string
		transform func(any) (any, error)
	}{{"managedFields-stripped", StripManagedFields}, {"slim", slim}} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				keep := make([]any, 0, n)
				runtime.GC()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				for range n {
					obj := new(T)
					if err := json.Unmarshal(raw, obj); err != nil {
						b.Fatal(err)
					}
					o, _ := bc.transform(obj)
					keep = append(keep, o)
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, unit)
				runtime.KeepAlive(keep)
			}
		})
	}
}
