package kubelet

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// TestSinkStoreTransform checks what the reflector's watch-list temporary
// store keeps of each initial object when given the sink's transformer
// (as client-go's reflector does for a TransformingStore): the object's
// identity only, under the same key.
func TestSinkStoreTransform(t *testing.T) {
	var s cache.ReflectorStore = &sinkStore{}
	ts, ok := s.(cache.TransformingStore)
	if !ok || ts.Transformer() == nil {
		t.Fatal("sinkStore does not give the reflector a transformer")
	}
	tmp := cache.NewStore(cache.DeletionHandlingMetaNamespaceKeyFunc, cache.WithTransformer(ts.Transformer()))
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "ns", ResourceVersion: "42", UID: "u",
			Labels: map[string]string{"app": "web"}, ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}}},
		Spec: corev1.ServiceSpec{ClusterIP: "10.0.0.1", Ports: []corev1.ServicePort{{Port: 80}}, Selector: map[string]string{"app": "web"}},
	}
	if err := tmp.Add(svc); err != nil {
		t.Fatal(err)
	}
	got, exists, err := tmp.GetByKey("ns/web-1")
	if err != nil || !exists {
		t.Fatalf("transformed object not under its key: %v, %v", exists, err)
	}
	want := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "ns", ResourceVersion: "42"}}
	pm, ok := got.(*metav1.PartialObjectMetadata)
	if !ok || pm.Name != want.Name || pm.Namespace != want.Namespace || pm.ResourceVersion != want.ResourceVersion ||
		pm.UID != "" || pm.Labels != nil || pm.ManagedFields != nil {
		t.Errorf("kept %#v, want only %#v", got, want)
	}
	// Not an object with metadata (a tombstone): passed through.
	tomb := cache.DeletedFinalStateUnknown{Key: "ns/x"}
	if out, err := identityOnly(tomb); err != nil || out != tomb {
		t.Errorf("tombstone transformed to %v, %v", out, err)
	}
}

// TestPodStore checks the pod source's store: not synced before the
// reflector's first Replace, synced after it, and every way in (Replace,
// Add, Update, the watch-list temporary store's transformer) drops
// managedFields and keeps the rest.
func TestPodStore(t *testing.T) {
	pod := func(name, rv string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", ResourceVersion: rv,
				ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kube-scheduler"}}},
			Spec: corev1.PodSpec{NodeName: "n1"},
		}
	}
	s := newPodStore()
	var _ cache.ReflectorStore = s
	if s.HasSynced() {
		t.Fatal("synced before the initial list")
	}
	if err := s.Add(pod("early", "1")); err != nil {
		t.Fatal(err)
	}
	if s.HasSynced() {
		t.Fatal("an Add made the store synced; only the initial list's Replace does")
	}
	if err := s.Replace([]any{pod("a", "2"), pod("b", "3")}, "3"); err != nil {
		t.Fatal(err)
	}
	if !s.HasSynced() {
		t.Fatal("not synced after Replace")
	}
	if err := s.Update(pod("a", "4")); err != nil {
		t.Fatal(err)
	}
	if err := s.Add(pod("c", "5")); err != nil {
		t.Fatal(err)
	}
	transformed, err := s.Transformer()(pod("d", "6"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, o := range append(s.List(), transformed) {
		p := o.(*corev1.Pod)
		if p.ManagedFields != nil {
			t.Errorf("pod %s kept managedFields", p.Name)
		}
		if p.Spec.NodeName != "n1" {
			t.Errorf("pod %s lost its spec", p.Name)
		}
		got[p.Name] = p.ResourceVersion
	}
	want := map[string]string{"a": "4", "b": "3", "c": "5", "d": "6"}
	if len(got) != len(want) {
		t.Fatalf("store holds %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("pod %s at resourceVersion %q, want %q", k, got[k], v)
		}
	}
}
