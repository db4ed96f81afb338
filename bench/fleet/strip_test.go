package fleet

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestStripManagedFields(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{"a": "b"},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kube-scheduler"}}}}
	out, err := StripManagedFields(pod)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*corev1.Pod)
	if got.ManagedFields != nil || got.Name != "p" || got.Labels["a"] != "b" {
		t.Errorf("after the transform: %+v", got.ObjectMeta)
	}
	// Objects without metadata (a tombstone) pass through untouched.
	if out, err := StripManagedFields("not an object"); err != nil || out != "not an object" {
		t.Errorf("non-object: %v, %v", out, err)
	}
}
