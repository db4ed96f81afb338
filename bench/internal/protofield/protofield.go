// Package protofield walks the length-delimited fields of a protobuf
// message without decoding it, for the places where stormbench reads one or
// two fields of a large message (a /metrics family's name, a Service's
// identity) and skips the rest.
package protofield

import "google.golang.org/protobuf/encoding/protowire"

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
