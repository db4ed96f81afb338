package watchers

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
	restclientwatch "k8s.io/client-go/rest/watch"
)

// recordedEvents is a watch stream as the API server sends one: changes,
// a bookmark, a large object, and the 410 ERROR of an expired
// resourceVersion.
func recordedEvents() []watch.Event {
	pod := func(rv string) *corev1.Pod {
		return &corev1.Pod{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "run", ResourceVersion: rv, UID: "u1",
				Labels:        map[string]string{"app": "web"},
				ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet", APIVersion: "v1"}}},
			Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "c", Image: "pause"}}},
		}
	}
	big := pod("104")
	big.Annotations = map[string]string{"big": strings.Repeat("x", 100<<10)}
	slice := &discoveryv1.EndpointSlice{
		TypeMeta:    metav1.TypeMeta{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice"},
		ObjectMeta:  metav1.ObjectMeta{Name: "web-abc", Namespace: "run", ResourceVersion: "105"},
		AddressType: discoveryv1.AddressTypeIPv4,
	}
	bookmark := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{ResourceVersion: "150", Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}}
	gone := apierrors.NewResourceExpired("too old resource version: 100 (150)").Status()
	gone.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}
	return []watch.Event{
		{Type: watch.Added, Object: pod("101")},
		{Type: watch.Modified, Object: pod("102")},
		{Type: watch.Bookmark, Object: bookmark},
		{Type: watch.Modified, Object: big},
		{Type: watch.Added, Object: slice},
		{Type: watch.Deleted, Object: pod("106")},
		{Type: watch.Error, Object: &gone},
	}
}

// wantFrames is what the frame readers must see in recordedEvents.
var wantFrames = []frame{
	{typ: "ADDED", rv: "101"},
	{typ: "MODIFIED", rv: "102"},
	{typ: "BOOKMARK", rv: "150"},
	{typ: "MODIFIED", rv: "104"},
	{typ: "ADDED", rv: "105"},
	{typ: "DELETED", rv: "106"},
	{typ: "ERROR", expired: true},
}

// encodeStream writes events as the API server's watch handler does: the
// media type's stream serializer and framer around metav1.WatchEvent, the
// object embedded with the media type's serializer
// (client-go rest/watch Encoder). It returns the stream's content type.
func encodeStream(t *testing.T, mediaType string, events []watch.Event) ([]byte, string) {
	t.Helper()
	info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), mediaType)
	if !ok || info.StreamSerializer == nil {
		t.Fatalf("no stream serializer for %s", mediaType)
	}
	var buf bytes.Buffer
	embedded := scheme.Codecs.EncoderForVersion(info.Serializer, schema.GroupVersions{corev1.SchemeGroupVersion, discoveryv1.SchemeGroupVersion, metav1.SchemeGroupVersion})
	enc := restclientwatch.NewEncoder(streaming.NewEncoder(info.StreamSerializer.Framer.NewFrameWriter(&buf), info.StreamSerializer.Serializer), embedded)
	for i := range events {
		if err := enc.Encode(&events[i]); err != nil {
			t.Fatalf("encoding event %d: %v", i, err)
		}
	}
	return buf.Bytes(), mediaType + ";stream=watch"
}

func readAll(t *testing.T, contentType string, stream []byte) ([]frame, error) {
	t.Helper()
	fr, err := newFrameReader(contentType, bytes.NewReader(stream))
	if err != nil {
		t.Fatal(err)
	}
	var out []frame
	for {
		f, err := fr.next()
		if err != nil {
			return out, err
		}
		out = append(out, f)
	}
}

func TestFrameReaders(t *testing.T) {
	for _, mediaType := range []string{runtime.ContentTypeProtobuf, runtime.ContentTypeJSON} {
		t.Run(mediaType, func(t *testing.T) {
			stream, contentType := encodeStream(t, mediaType, recordedEvents())
			got, err := readAll(t, contentType, stream)
			if !errors.Is(err, io.EOF) {
				t.Fatalf("reading the stream: %v, want io.EOF at its end", err)
			}
			if len(got) != len(wantFrames) {
				t.Fatalf("read %d frames, want %d: %+v", len(got), len(wantFrames), got)
			}
			total := 0
			for i, f := range got {
				total += f.size
				if f.size <= 0 {
					t.Errorf("frame %d: size %d", i, f.size)
				}
				f.size = 0
				if f != wantFrames[i] {
					t.Errorf("frame %d = %+v, want %+v", i, f, wantFrames[i])
				}
			}
			if total != len(stream) {
				t.Errorf("frames sum to %d bytes, the stream has %d", total, len(stream))
			}
			// The big event is counted whole.
			if got[3].size < 100<<10 {
				t.Errorf("the 100 KiB event counted %d bytes", got[3].size)
			}
		})
	}
}

// TestFrameReadersTruncated: a stream cut inside a frame is an error, not
// a clean end; a JSON stream whose last event lacks its newline still
// delivers it.
func TestFrameReadersTruncated(t *testing.T) {
	events := recordedEvents()[:2]
	pb, pbType := encodeStream(t, runtime.ContentTypeProtobuf, events)
	for _, cut := range []int{2, 6, len(pb) - 1} {
		got, err := readAll(t, pbType, pb[:cut])
		if err == nil || errors.Is(err, io.EOF) {
			t.Errorf("protobuf cut at %d of %d bytes: %d frames, err %v; want an unexpected EOF", cut, len(pb), len(got), err)
		}
	}
	js, jsType := encodeStream(t, runtime.ContentTypeJSON, events)
	got, err := readAll(t, jsType, bytes.TrimSuffix(js, []byte("\n")))
	if !errors.Is(err, io.EOF) || len(got) != 2 || got[1].rv != "102" {
		t.Errorf("JSON without the last newline: %+v, %v; want both events", got, err)
	}
}

func TestFrameReaderContentTypes(t *testing.T) {
	for _, tc := range []struct {
		contentType string
		proto, ok   bool
	}{
		{"application/vnd.kubernetes.protobuf;stream=watch", true, true},
		{"application/json", false, true},
		{"application/json; charset=utf-8", false, true},
		{"", false, true},
		{"application/yaml", false, false},
	} {
		fr, err := newFrameReader(tc.contentType, strings.NewReader(""))
		if (err == nil) != tc.ok {
			t.Errorf("%q: error %v, want ok=%v", tc.contentType, err, tc.ok)
			continue
		}
		if _, isProto := fr.(*protobufFrames); err == nil && isProto != tc.proto {
			t.Errorf("%q: protobuf reader %v, want %v", tc.contentType, isProto, tc.proto)
		}
	}
}

func TestProtobufFrameTooLarge(t *testing.T) {
	_, err := readAll(t, "application/vnd.kubernetes.protobuf;stream=watch", []byte{0x7f, 0xff, 0xff, 0xff})
	if err == nil || errors.Is(err, io.EOF) || !strings.Contains(err.Error(), "more than") {
		t.Errorf("a 2 GiB frame length: %v, want a refusal", err)
	}
}
