package kubelet

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// fleetService is a Service of the fleet-5k fleet as the API server returned
// it (managedFields included).
func fleetService(t testing.TB) *corev1.Service {
	t.Helper()
	b, err := os.ReadFile("testdata/fleet-service.json")
	if err != nil {
		t.Fatal(err)
	}
	var s corev1.Service
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

func protoBytes(t testing.TB, obj runtime.Object) []byte {
	t.Helper()
	b, err := runtime.Encode(protobuf.NewSerializer(scheme.Scheme, scheme.Scheme), obj)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func identityDecoder() runtime.Decoder {
	ns := serviceIdentities{rest.CodecFactoryForGeneratedClient(scheme.Scheme, scheme.Codecs).WithoutConversion()}
	var proto runtime.Serializer
	for _, info := range ns.SupportedMediaTypes() {
		if info.MediaType == runtime.ContentTypeProtobuf {
			proto = info.Serializer
		}
	}
	return ns.DecoderToVersion(proto, corev1.SchemeGroupVersion)
}

// TestServiceIdentityDecoder: protobuf Services come out as their identity
// (and the watch list's bookmark annotation); Status errors and lists are
// decoded in full by the normal decoder; malformed input is an error, not a
// silent empty Service.
func TestServiceIdentityDecoder(t *testing.T) {
	dec := identityDecoder()
	full := fleetService(t)

	t.Run("Service", func(t *testing.T) {
		obj, gvk, err := dec.Decode(protoBytes(t, full), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := obj.(*corev1.Service)
		if !ok || gvk == nil || gvk.Kind != "Service" {
			t.Fatalf("decoded %T (%v)", obj, gvk)
		}
		want := metav1.ObjectMeta{Name: full.Name, Namespace: full.Namespace, UID: full.UID, ResourceVersion: full.ResourceVersion}
		if !reflect.DeepEqual(got.ObjectMeta, want) {
			t.Errorf("metadata %+v, want %+v", got.ObjectMeta, want)
		}
		if !reflect.DeepEqual(got.Spec, corev1.ServiceSpec{}) {
			t.Errorf("spec decoded: %+v", got.Spec)
		}
	})
	t.Run("initial-events-end bookmark", func(t *testing.T) {
		bm := &corev1.Service{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"}, ObjectMeta: metav1.ObjectMeta{
			ResourceVersion: "4711", Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true", "other": ""}}}
		obj, _, err := dec.Decode(protoBytes(t, bm), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := obj.(*corev1.Service)
		if got.ResourceVersion != "4711" || !reflect.DeepEqual(got.Annotations, bm.Annotations) {
			t.Errorf("bookmark decoded as %+v", got.ObjectMeta)
		}
	})
	t.Run("Status", func(t *testing.T) {
		st := &metav1.Status{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}, Status: metav1.StatusFailure,
			Reason: metav1.StatusReasonExpired, Code: 410, Message: "too old resource version"}
		obj, _, err := dec.Decode(protoBytes(t, st), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := obj.(*metav1.Status); !ok || got.Code != 410 || got.Reason != metav1.StatusReasonExpired {
			t.Errorf("Status decoded as %#v", obj)
		}
	})
	t.Run("ServiceList", func(t *testing.T) {
		list := &corev1.ServiceList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceList"}, Items: []corev1.Service{*full}}
		obj, _, err := dec.Decode(protoBytes(t, list), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := obj.(*corev1.ServiceList)
		if !ok || len(got.Items) != 1 || got.Items[0].Spec.ClusterIP != full.Spec.ClusterIP {
			t.Errorf("list decoded as %#v", obj)
		}
	})
	t.Run("malformed", func(t *testing.T) {
		b := protoBytes(t, full)
		if obj, _, err := dec.Decode(b[:len(b)/2], nil, nil); err == nil {
			t.Errorf("a truncated Service decoded as %#v", obj)
		}
	})
}

// BenchmarkServiceDecode compares decoding one of the fleet's Services in
// full (what the kubelet's Service informer did before) with decoding its
// identity, on the same protobuf bytes.
func BenchmarkServiceDecode(b *testing.B) {
	data := protoBytes(b, fleetService(b))
	full := rest.CodecFactoryForGeneratedClient(scheme.Scheme, scheme.Codecs).WithoutConversion()
	var proto runtime.Serializer
	for _, info := range full.SupportedMediaTypes() {
		if info.MediaType == runtime.ContentTypeProtobuf {
			proto = info.Serializer
		}
	}
	for _, bc := range []struct {
		name string
		dec  runtime.Decoder
	}{
		{"full", full.DecoderToVersion(proto, corev1.SchemeGroupVersion)},
		{"identity", identityDecoder()},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := bc.dec.Decode(data, nil, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
