package kubelet

import (
	"context"
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
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

// TestServiceInformerIdentities runs the simulated kubelet's Service
// informer request (LIST/WATCH of Services with spec.clusterIP!=None, as
// the kubelet's, through the session's Service client) against the
// embedded cluster's API server, into a store that keeps what it is given:
// the initial list (a streaming watch list ended by its bookmark) and later
// watch events arrive as identities only, headless Services are not asked
// for.
func TestServiceInformerIdentities(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the embedded cluster")
	}
	c := SharedTestCluster.Get(t)
	client := c.Target.Client
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	create := func(name string, headless bool) {
		t.Helper()
		t.Cleanup(func() {
			_ = client.CoreV1().Services(metav1.NamespaceDefault).Delete(context.Background(), name, metav1.DeleteOptions{})
		})
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": name}},
			Spec: corev1.ServiceSpec{Selector: map[string]string{"app": name}, Ports: []corev1.ServicePort{{Port: 80}}}}
		if headless {
			svc.Spec.ClusterIP = corev1.ClusterIPNone
		}
		if _, err := client.CoreV1().Services(metav1.NamespaceDefault).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	create("a", false)
	create("b", false)
	create("headless", true)

	s, err := newSession(c.Target.Config, "identities-node", nil, clock.RealClock{}, sessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	store := cache.NewStore(cache.MetaNamespaceKeyFunc)
	refl := cache.NewReflector(cache.NewListWatchFromClient(s.lists.(restListWatches).services, "services", metav1.NamespaceAll,
		fields.OneTermNotEqualSelector("spec.clusterIP", corev1.ClusterIPNone)), &corev1.Service{}, store, 0)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { defer close(done); refl.Run(stop) }()
	defer func() { close(stop); <-done }()

	waitKeys := func(want ...string) {
		t.Helper()
		slices.Sort(want)
		var got []string
		err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(context.Context) (bool, error) {
			got = store.ListKeys()
			slices.Sort(got)
			return slices.Equal(got, want), nil
		})
		if err != nil {
			t.Fatalf("Services in the informer's store %v, want %v", got, want)
		}
		for _, o := range store.List() {
			svc := o.(*corev1.Service)
			if svc.ResourceVersion == "" || svc.UID == "" || !reflect.DeepEqual(svc.Spec, corev1.ServiceSpec{}) || svc.Labels != nil {
				t.Errorf("%s/%s is not an identity: %+v", svc.Namespace, svc.Name, svc)
			}
		}
	}
	waitKeys("default/a", "default/b", "default/kubernetes")
	create("c", false)
	if err := client.CoreV1().Services(metav1.NamespaceDefault).Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitKeys("default/b", "default/c", "default/kubernetes")
}
