package fleet

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestObjectKeyKinds(t *testing.T) {
	m := metav1.ObjectMeta{Name: "x"}
	for want, o := range map[string]runtime.Object{
		"configmap/x": &corev1.ConfigMap{ObjectMeta: m}, "secret/x": &corev1.Secret{ObjectMeta: m},
		"service/x": &corev1.Service{ObjectMeta: m}, "pod/x": &corev1.Pod{ObjectMeta: m},
		"deployment/x": &appsv1.Deployment{ObjectMeta: m}, "statefulset/x": &appsv1.StatefulSet{ObjectMeta: m},
		"daemonset/x": &appsv1.DaemonSet{ObjectMeta: m}, "poddisruptionbudget/x": &policyv1.PodDisruptionBudget{ObjectMeta: m},
	} {
		if got := objectKey(o); got != want {
			t.Errorf("objectKey = %q, want %q", got, want)
		}
	}
}
