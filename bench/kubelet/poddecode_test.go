package kubelet

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
)

// TestPodDecoder: protobuf pods decode as the full decoder decodes them,
// less their managed fields; a pod whose spec bytes did not change shares
// the decoded spec of its previous version, a changed spec is decoded
// again; anything else goes to the normal decoder.
func TestPodDecoder(t *testing.T) {
	specs := &podSpecs{byUID: map[types.UID]*decodedSpec{}}
	dec := podDecoding{NegotiatedSerializer: coreSerializer, specs: specs}.DecoderToVersion(
		scheme.Codecs.UniversalDeserializer(), corev1.SchemeGroupVersion)
	full := scheme.Codecs.UniversalDeserializer()

	decode := func(t *testing.T, data []byte, into runtime.Object) *corev1.Pod {
		t.Helper()
		obj, gvk, err := dec.Decode(data, nil, into)
		if err != nil {
			t.Fatal(err)
		}
		pod, ok := obj.(*corev1.Pod)
		if !ok || *gvk != podGVK {
			t.Fatalf("decoded %T %v, want a v1 Pod", obj, gvk)
		}
		want, _, err := full.Decode(data, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		want.(*corev1.Pod).ManagedFields = nil
		want.(*corev1.Pod).TypeMeta = pod.TypeMeta
		if !apiequality.Semantic.DeepEqual(pod, want) {
			a, _ := json.Marshal(pod)
			b, _ := json.Marshal(want)
			t.Fatalf("decoded\n%s\nwant\n%s", a, b)
		}
		return pod
	}

	v1 := statusTestPod()
	first := decode(t, encodeProtobuf(t, v1), nil)
	if len(specs.byUID) != 1 {
		t.Fatalf("%d specs kept, want 1", len(specs.byUID))
	}

	// A status write: same spec bytes, so the same decoded containers.
	v2 := v1.DeepCopy()
	v2.ResourceVersion = "43"
	v2.Status.Conditions[1].Status = corev1.ConditionFalse
	second := decode(t, encodeProtobuf(t, v2), &corev1.Pod{})
	if &second.Spec.Containers[0] != &first.Spec.Containers[0] {
		t.Error("a status write decoded the unchanged spec again")
	}

	// A spec change (an ephemeral container) is decoded.
	v3 := v2.DeepCopy()
	v3.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debug"}}}
	third := decode(t, encodeProtobuf(t, v3), nil)
	if &third.Spec.Containers[0] == &first.Spec.Containers[0] {
		t.Error("a changed spec reused the old decoding")
	}

	// Another pod with the same spec bytes but another UID is its own.
	other := v1.DeepCopy()
	other.UID, other.Name = "uid-web-1", "web-1"
	if p := decode(t, encodeProtobuf(t, other), nil); &p.Spec.Containers[0] == &third.Spec.Containers[0] {
		t.Error("two pods share a decoded spec")
	}

	// Not a protobuf Pod: the normal decoder.
	svc := &corev1.Service{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"}, ObjectMeta: metav1.ObjectMeta{Name: "s"}}
	obj, _, err := dec.Decode(encodeProtobuf(t, svc), nil, nil)
	if err != nil || obj.(*corev1.Service).Name != "s" {
		t.Errorf("service: %v, %v", obj, err)
	}
	js, _ := json.Marshal(v1)
	obj, _, err = dec.Decode(js, nil, nil)
	if err != nil || obj.(*corev1.Pod).ManagedFields == nil {
		t.Errorf("a JSON pod is decoded whole by the normal decoder: %v", err)
	}
}

func TestWithoutField(t *testing.T) {
	meta := metav1.ObjectMeta{Name: "p", Namespace: "ns", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "a"}, {Manager: "b"}},
		Labels: map[string]string{"x": "y"}}
	b, err := meta.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	var got metav1.ObjectMeta
	if err := got.Unmarshal(withoutField(b, 17)); err != nil {
		t.Fatal(err)
	}
	meta.ManagedFields = nil
	if !apiequality.Semantic.DeepEqual(got, meta) {
		t.Errorf("got %+v, want %+v", got, meta)
	}
	if withoutField([]byte{0x0a, 0x05, 'a'}, 17) != nil {
		t.Error("a truncated message parsed")
	}
}

// BenchmarkPodWatchDecode is one MODIFIED event of the pod source after a
// status write (the spec unchanged), decoded whole and by podDecoder.
func BenchmarkPodWatchDecode(b *testing.B) {
	pod := statusTestPod()
	var t testing.T
	data := encodeProtobuf(&t, pod)
	full := scheme.Codecs.UniversalDeserializer()
	specs := &podSpecs{byUID: map[types.UID]*decodedSpec{}}
	lean := podDecoding{NegotiatedSerializer: coreSerializer, specs: specs}.DecoderToVersion(full, corev1.SchemeGroupVersion)
	for _, v := range []struct {
		name string
		dec  runtime.Decoder
	}{{"whole", full}, {"podDecoder", lean}} {
		b.Run(v.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := v.dec.Decode(data, nil, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
