package kubelet

import (
	"bytes"
	"net/http"
	"slices"
	"sync"

	"google.golang.org/protobuf/encoding/protowire"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"

	"github.com/stormbench/stormbench/bench/internal/protofield"
)

// The pods of a simulated kubelet's pod source, decoded for what the
// model reads.
//
// The pod source's watch (config/apiserver.go NewSourceApiserver) receives
// every pod of the node once, then a MODIFIED event for every status write
// to any of them: the status manager's own PATCHes come back to it. Each
// event is a whole pod, and decoding it whole (metadata with its managed
// fields, the spec with its containers, probes and volumes, the status)
// was the largest part of a restart's allocations after the status patch
// (BenchmarkKubeletReplay). A status write leaves the spec as it was, so
// the decoder keeps, per pod UID, the spec's encoded bytes and what they
// decoded to, and a pod whose spec bytes are unchanged shares the decoded
// spec of its previous version (the store's pods are read only). Managed
// fields, which the pod store strips anyway (podStore), are not decoded.
// The requests do not change: the client is core/v1's, with the same
// configuration (corev1client setConfigDefaults), and only the decoding of
// protobuf Pods differs; everything else goes to the normal decoder.

// coreClient is corev1client.NewForConfigAndClient with protobuf Pods
// decoded by a podDecoder of its own.
func coreClient(cfg *rest.Config, httpClient *http.Client) (*corev1client.CoreV1Client, error) {
	c := *cfg
	gv := corev1.SchemeGroupVersion
	c.GroupVersion = &gv
	c.APIPath = "/api"
	c.NegotiatedSerializer = podDecoding{NegotiatedSerializer: coreSerializer, specs: &podSpecs{byUID: map[types.UID]*decodedSpec{}}}
	if c.UserAgent == "" {
		c.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	rc, err := rest.RESTClientForConfigAndClient(&c, httpClient)
	if err != nil {
		return nil, err
	}
	return corev1client.New(rc), nil
}

// coreSerializer is core/v1's client serializer, built once.
var coreSerializer = rest.CodecFactoryForGeneratedClient(scheme.Scheme, scheme.Codecs).WithoutConversion()

// podDecoding is a NegotiatedSerializer whose decoders read protobuf Pods
// with podDecoder. client-go asks for a decoder per response, so the spec
// cache hangs off the serializer, one per kubelet client.
type podDecoding struct {
	runtime.NegotiatedSerializer
	specs *podSpecs
}

func (n podDecoding) DecoderToVersion(d runtime.Decoder, gv runtime.GroupVersioner) runtime.Decoder {
	return podDecoder{next: n.NegotiatedSerializer.DecoderToVersion(d, gv), specs: n.specs}
}

// podSpecs is the last decoded spec of each pod, by UID.
type podSpecs struct {
	mu    sync.Mutex
	byUID map[types.UID]*decodedSpec
}

type decodedSpec struct {
	raw  []byte
	spec corev1.PodSpec
}

type podDecoder struct {
	next  runtime.Decoder
	specs *podSpecs
}

var podGVK = corev1.SchemeGroupVersion.WithKind("Pod")

func (d podDecoder) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	if _, isPod := into.(*corev1.Pod); into == nil || isPod {
		if pod, ok := d.specs.decode(data); ok {
			if into != nil {
				*into.(*corev1.Pod) = *pod
				pod = into.(*corev1.Pod)
			}
			gvk := podGVK
			return pod, &gvk, nil
		}
	}
	return d.next.Decode(data, defaults, into)
}

// decode reads a protobuf-encoded v1 Pod (protobufObject): its metadata
// without managed fields (ObjectMeta field 17), its spec (shared with the
// pod's previous version when the bytes are the same), its status. ok is
// false for anything else and for anything it cannot read.
func (c *podSpecs) decode(data []byte) (*corev1.Pod, bool) {
	raw, ok := protobufObject(data, "v1", "Pod")
	if !ok {
		return nil, false
	}
	var meta, spec, status []byte
	if !protofield.Each(raw, func(num protowire.Number, v []byte) bool {
		switch num {
		case 1:
			meta = v
		case 2:
			spec = v
		case 3:
			status = v
		}
		return true
	}) {
		return nil, false
	}
	pod := &corev1.Pod{}
	if meta != nil {
		if bytes.Contains(meta, managedFieldsTag) {
			meta = withoutField(meta, 17)
		}
		if meta == nil || pod.ObjectMeta.Unmarshal(meta) != nil {
			return nil, false
		}
	}
	if status != nil && pod.Status.Unmarshal(status) != nil {
		return nil, false
	}
	if spec != nil {
		c.mu.Lock()
		defer c.mu.Unlock()
		if prev := c.byUID[pod.UID]; prev != nil && bytes.Equal(prev.raw, spec) {
			pod.Spec = prev.spec
			return pod, true
		}
		if pod.Spec.Unmarshal(spec) != nil {
			return nil, false
		}
		if pod.UID != "" {
			c.byUID[pod.UID] = &decodedSpec{raw: slices.Clone(spec), spec: pod.Spec}
		}
	}
	return pod, true
}

// managedFieldsTag is the tag byte of ObjectMeta's managedFields (field
// 17, length-delimited: varint 17<<3|2 = 0x8a 0x01); a metadata without it
// is read as it is.
var managedFieldsTag = protowire.AppendTag(nil, 17, protowire.BytesType)

// withoutField copies msg without the occurrences of field num, or returns
// nil if msg does not parse.
func withoutField(msg []byte, num protowire.Number) []byte {
	out := make([]byte, 0, len(msg))
	for b := msg; len(b) > 0; {
		n, typ, tagLen := protowire.ConsumeTag(b)
		if tagLen < 0 {
			return nil
		}
		valLen := protowire.ConsumeFieldValue(n, typ, b[tagLen:])
		if valLen < 0 {
			return nil
		}
		if n != num {
			out = append(out, b[:tagLen+valLen]...)
		}
		b = b[tagLen+valLen:]
	}
	return out
}
