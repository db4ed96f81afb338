package protofield

import (
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// TestParseUnknown: the envelope's apiVersion, kind, raw object and
// encoding are read; no prefix, a malformed message or no raw object is not
// an object.
func TestParseUnknown(t *testing.T) {
	bytesField := func(b []byte, num protowire.Number, v []byte) []byte {
		return protowire.AppendBytes(protowire.AppendTag(b, num, protowire.BytesType), v)
	}
	typeMeta := bytesField(bytesField(nil, 1, []byte("v1")), 2, []byte("Pod"))
	envelope := bytesField(bytesField(nil, 1, typeMeta), 2, []byte("object"))
	for _, tc := range []struct {
		name string
		data []byte
		want Unknown
		ok   bool
	}{
		{"pod", append([]byte("k8s\x00"), envelope...), Unknown{APIVersion: "v1", Kind: "Pod", Raw: []byte("object")}, true},
		{"gzipped", append([]byte("k8s\x00"), bytesField(envelope, 3, []byte("gzip"))...), Unknown{APIVersion: "v1", Kind: "Pod", Raw: []byte("object"), Encoded: true}, true},
		{"no prefix", envelope, Unknown{}, false},
		{"no raw object", append([]byte("k8s\x00"), bytesField(nil, 1, typeMeta)...), Unknown{APIVersion: "v1", Kind: "Pod"}, false},
		{"truncated", append([]byte("k8s\x00"), envelope[:len(envelope)-2]...), Unknown{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := ParseUnknown(tc.data)
			if ok != tc.ok || (ok && (got.APIVersion != tc.want.APIVersion || got.Kind != tc.want.Kind || string(got.Raw) != string(tc.want.Raw) || got.Encoded != tc.want.Encoded)) {
				t.Errorf("ParseUnknown = %+v, %t; want %+v, %t", got, ok, tc.want, tc.ok)
			}
		})
	}
}
