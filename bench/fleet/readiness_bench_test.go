package fleet

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// readinessFleet is fleet-5k's pod population: 50,000 Ready pods, 5,000 of
// them standalone, one of those lost.
func readinessFleet() (*Plan, []*corev1.Pod, cache.Store) {
	plan := &Plan{Namespace: "ns"}
	store := cache.NewStore(cache.MetaNamespaceKeyFunc)
	var pods []*corev1.Pod
	for i := range 50000 {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("pod-%05d", i)},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}}
		if i%10 == 0 {
			plan.StandalonePods = append(plan.StandalonePods, p.Name)
		}
		if i == 0 {
			continue // lost
		}
		pods = append(pods, p)
		_ = store.Add(p)
	}
	return plan, pods, store
}

// TestReadinessCountLookup: the cache lookup and the name index count the
// same lost pods.
func TestReadinessCountLookup(t *testing.T) {
	plan, pods, store := readinessFleet()
	var byIndex, byLookup Readiness
	byIndex.PodReasons, byLookup.PodReasons = map[string]int{}, map[string]int{}
	byIndex.count(plan, pods, nil, nil)
	byLookup.count(plan, pods, func(name string) bool { _, ok, _ := store.GetByKey("ns/" + name); return ok }, nil)
	if byIndex.LostPods != 1 || byLookup.LostPods != 1 || byIndex.ReadyPods != len(pods) || byLookup.ReadyPods != len(pods) {
		t.Errorf("lost %d / %d, ready %d / %d; want 1 lost and %d ready both ways", byIndex.LostPods, byLookup.LostPods, byIndex.ReadyPods, byLookup.ReadyPods, len(pods))
	}
}

// BenchmarkReadinessCount is one readiness count of fleet-5k's pods, as the
// readiness wait does every second: the standalone pods found by indexing
// every pod's name (index), or looked up in the informer's store (lookup).
func BenchmarkReadinessCount(b *testing.B) {
	plan, pods, store := readinessFleet()
	for _, bc := range []struct {
		name   string
		exists func(string) bool
	}{
		{"index", nil},
		{"lookup", func(name string) bool { _, ok, _ := store.GetByKey("ns/" + name); return ok }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r := Readiness{PodReasons: map[string]int{}}
				r.count(plan, pods, bc.exists, nil)
			}
		})
	}
}
