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
