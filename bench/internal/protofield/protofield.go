// Package protofield walks the length-delimited fields of a protobuf
// message without decoding it, for the places where stormbench reads one or
// two fields of a large message (a /metrics family's name, a Service's
// identity) and skips the rest.
package protofield

import (
	"bytes"

	"google.golang.org/protobuf/encoding/protowire"
)

// Each calls fn with the number and contents of each length-delimited field
// of msg, in order, and skips fields of other wire types. It returns false
// on malformed input or when fn does (to stop early).
func Each(msg []byte, fn func(protowire.Number, []byte) bool) bool {
	for len(msg) > 0 {
		num, typ, n := protowire.ConsumeTag(msg)
		if n < 0 {
			return false
		}
		msg = msg[n:]
		if typ != protowire.BytesType {
			n = protowire.ConsumeFieldValue(num, typ, msg)
			if n < 0 {
				return false
			}
			msg = msg[n:]
			continue
		}
		v, n := protowire.ConsumeBytes(msg)
		if n < 0 {
			return false
		}
		msg = msg[n:]
		if !fn(num, v) {
			return false
		}
	}
	return true
}

// magic prefixes every protobuf-encoded Kubernetes object
// (k8s.io/apimachinery/pkg/runtime/serializer/protobuf protoEncodingPrefix).
var magic = []byte("k8s\x00")

// Unknown is the envelope of a protobuf-encoded Kubernetes object, a
// runtime.Unknown: typeMeta 1 {apiVersion 1, kind 2}, raw 2,
// contentEncoding 3.
type Unknown struct {
	APIVersion, Kind string
	// Raw is the object's own message.
	Raw []byte
	// Encoded says the object is compressed (contentEncoding set).
	Encoded bool
}

// ParseUnknown reads the envelope of a protobuf-encoded object: false when
// data lacks the prefix, is malformed or holds no raw object.
func ParseUnknown(data []byte) (u Unknown, ok bool) {
	rest, ok := bytes.CutPrefix(data, magic)
	if !ok {
		return u, false
	}
	found := false
	if !Each(rest, func(num protowire.Number, v []byte) bool {
		switch num {
		case 1:
			return Each(v, func(num protowire.Number, v []byte) bool {
				switch num {
				case 1:
					u.APIVersion = string(v)
				case 2:
					u.Kind = string(v)
				}
				return true
			})
		case 2:
			u.Raw, found = v, true
		case 3:
			u.Encoded = len(v) > 0
		}
		return true
	}) {
		return u, false
	}
	return u, found
}
