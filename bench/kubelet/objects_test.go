package kubelet

import (
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestPodObjectRefs: every place a pod names a Secret or ConfigMap is
// found, as the kubelet's managers find it, and mounted ones are told apart.
func TestPodObjectRefs(t *testing.T) {
	local := func(n string) corev1.LocalObjectReference { return corev1.LocalObjectReference{Name: n} }
	for _, tc := range []struct {
		name string
		spec corev1.PodSpec
		want []string // kind/name, "+" when mounted
	}{
		{"nothing", corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}}}, nil},
		{"image pull secret", corev1.PodSpec{ImagePullSecrets: []corev1.LocalObjectReference{local("pull"), local("")}}, []string{"secrets/pull"}},
		{"env and envFrom of every container kind", corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "i", EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: local("init-env")}}}}},
			Containers: []corev1.Container{{Name: "c",
				EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: local("env-secret")}}},
				Env: []corev1.EnvVar{
					{Name: "A", Value: "plain"},
					{Name: "B", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: local("key-secret"), Key: "k"}}},
					{Name: "C", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: local("key-cm"), Key: "k"}}},
					{Name: "D", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
				}}},
			EphemeralContainers: []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "e",
				EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: local("debug-env")}}}}}},
		}, []string{"configmaps/init-env", "secrets/env-secret", "secrets/key-secret", "configmaps/key-cm", "configmaps/debug-env"}},
		{"volumes", corev1.PodSpec{Volumes: []corev1.Volume{
			{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "vol-secret"}}},
			{Name: "c", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: local("vol-cm")}}},
			{Name: "token", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}},
				{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: local("kube-root-ca.crt")}},
				{Secret: &corev1.SecretProjection{LocalObjectReference: local("proj-secret")}},
			}}}},
			{Name: "csi", VolumeSource: corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "d", NodePublishSecretRef: ptr.To(local("csi-secret"))}}},
			{Name: "empty", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		}}, []string{"secrets/vol-secret+", "configmaps/vol-cm+", "configmaps/kube-root-ca.crt+", "secrets/proj-secret+", "secrets/csi-secret+"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, r := range podObjectRefs(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns"}, Spec: tc.spec}) {
				if r.ns != "ns" {
					t.Errorf("%s/%s in namespace %q", r.kind, r.name, r.ns)
				}
				s := r.kind + "/" + r.name
				if r.volume {
					s += "+"
				}
				got = append(got, s)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("refs %q, want %q", got, tc.want)
			}
		})
	}
}

// TestObjectStoreImmutable: the object store keeps only identities but
// remembers whether the object it saw is immutable.
func TestObjectStoreImmutable(t *testing.T) {
	for _, tc := range []struct {
		obj  any
		want bool
	}{
		{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, false},
		{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Immutable: ptr.To(false)}, false},
		{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Immutable: ptr.To(true)}, true},
		{&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Immutable: ptr.To(true)}, true},
		{&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, false},
	} {
		t.Run(fmt.Sprintf("%T %v", tc.obj, tc.want), func(t *testing.T) {
			s := &objectStore{}
			out, err := s.Transformer()(tc.obj)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := out.(*metav1.PartialObjectMetadata); !ok {
				t.Errorf("stored %T, want only the identity", out)
			}
			if got := s.immutable.Load(); got != tc.want {
				t.Errorf("immutable %v, want %v", got, tc.want)
			}
		})
	}
}
