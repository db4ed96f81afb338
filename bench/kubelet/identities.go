package kubelet

import (
	"google.golang.org/protobuf/encoding/protowire"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/stormbench/stormbench/bench/internal/protofield"
)

// serviceIdentities is the NegotiatedSerializer of a simulated kubelet's
// Service reflector. The reflector sends the kubelet's requests unchanged
// (LIST/WATCH of Services, protobuf, kubelet.go NewMainKubelet) and feeds a
// sinkStore that keeps only each Service's identity; decoding every
// Service's spec and status to throw them away was the largest part of
// stormbench's watch decoding (each restarted kubelet of a 900-Service fleet
// receives all 900). Protobuf Services are decoded to their metadata
// identity (name, namespace, uid, resourceVersion, annotations: the watch
// list's initial-events-end bookmark is an annotation); everything else
// (Status errors, lists, JSON) goes to the normal decoder.
type serviceIdentities struct{ runtime.NegotiatedSerializer }

func (n serviceIdentities) DecoderToVersion(d runtime.Decoder, gv runtime.GroupVersioner) runtime.Decoder {
	return serviceIdentityDecoder{n.NegotiatedSerializer.DecoderToVersion(d, gv)}
}

type serviceIdentityDecoder struct{ next runtime.Decoder }

var serviceGVK = corev1.SchemeGroupVersion.WithKind("Service")

func (d serviceIdentityDecoder) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	if svc, ok := decodeServiceIdentity(data); ok {
		gvk := serviceGVK
		return svc, &gvk, nil
	}
	return d.next.Decode(data, defaults, into)
}

// decodeServiceIdentity reads a protobuf-encoded v1 Service
// (protobufObject) and its metadata (field 1). ok is
// false for anything else, and for anything it cannot read.
func decodeServiceIdentity(data []byte) (*corev1.Service, bool) {
	raw, ok := protobufObject(data, "v1", "Service")
	if !ok {
		return nil, false
	}
	svc := &corev1.Service{}
	if !protofield.Each(raw, func(num protowire.Number, v []byte) bool {
		if num != 1 {
			return true // spec, status: skipped
		}
		// ObjectMeta: name 1, namespace 3, uid 5, resourceVersion 6,
		// annotations 12 (map entries: key 1, value 2).
		return protofield.Each(v, func(num protowire.Number, v []byte) bool {
			switch num {
			case 1:
				svc.Name = string(v)
			case 3:
				svc.Namespace = string(v)
			case 5:
				svc.UID = types.UID(v)
			case 6:
				svc.ResourceVersion = string(v)
			case 12:
				var key, value string
				if !protofield.Each(v, func(num protowire.Number, v []byte) bool {
					switch num {
					case 1:
						key = string(v)
					case 2:
						value = string(v)
					}
					return true
				}) {
					return false
				}
				if svc.Annotations == nil {
					svc.Annotations = map[string]string{}
				}
				svc.Annotations[key] = value
			}
			return true
		})
	}) {
		return nil, false
	}
	return svc, true
}
