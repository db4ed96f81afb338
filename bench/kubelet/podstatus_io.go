package kubelet

import (
	"context"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/stormbench/stormbench/bench/internal/protofield"
)

// The status manager's two requests (status/status_manager.go syncPod: a
// GET of the pod, then statusutil.PatchPodStatus's PATCH of pods/status)
// go out exactly as the typed client sends them: the same builder calls
// as client-go's gentype.Client Get and Patch, on the same REST client,
// so the URL, headers and body the API server sees do not change. What
// changes is the client's work on the answers. The model reads three
// fields of the GET's pod (its UID, spec.nodeName and status) and none of
// the PATCH's, so the GET is decoded to those fields (decodePodForStatus)
// and the PATCH's answer is read and dropped. Decoding whole pods, with
// their managed fields and specs, was the largest part of a simulated
// restart's allocations (BenchmarkKubeletReplay).
//
// The typed calls' empty GetOptions and PatchOptions encode to no query
// parameters, so the two requests leave VersionedParams out: it converts
// the options by reflection on every request, for nothing
// (TestPodStatusRequestURLs).
//
// A client without a REST client (the fake clientsets of the model's
// tests) takes the typed calls.

// podsREST returns the kubelet's core/v1 REST client, or nil when its
// client has none.
func (s *session) podsREST() *rest.RESTClient {
	rc, _ := s.client.CoreV1().RESTClient().(*rest.RESTClient)
	return rc
}

// getPodStatus GETs a pod for the status manager: the returned pod has its
// UID, spec.nodeName and status, and nothing else is guaranteed.
func (s *session) getPodStatus(ctx context.Context, ns, name string) (*corev1.Pod, error) {
	rc := s.podsREST()
	if rc == nil {
		return s.client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	}
	body, err := rc.Get().
		Namespace(ns).
		Resource("pods").
		Name(name).
		Do(ctx).
		Raw()
	if err != nil {
		return nil, err
	}
	if pod, ok := decodePodForStatus(body); ok {
		return pod, nil
	}
	pod := &corev1.Pod{}
	if err := runtime.DecodeInto(scheme.Codecs.UniversalDecoder(corev1.SchemeGroupVersion), body, pod); err != nil {
		return nil, fmt.Errorf("decoding pod %s/%s: %w", ns, name, err)
	}
	return pod, nil
}

// patchPodStatus sends the status manager's strategic merge patch of
// pods/<name>/status and drops the answer.
func (s *session) patchPodStatus(ctx context.Context, ns, name string, patch []byte) error {
	rc := s.podsREST()
	if rc == nil {
		_, err := s.client.CoreV1().Pods(ns).Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
		return err
	}
	return rc.Patch(types.StrategicMergePatchType).
		Namespace(ns).
		Resource("pods").
		Name(name).
		SubResource("status").
		Body(patch).
		Do(ctx).
		Error()
}

// decodePodForStatus reads a protobuf-encoded v1 Pod (the envelope as in
// decodeServiceIdentity) into a pod holding only its UID (metadata 1, uid
// 5), spec.nodeName (spec 2, nodeName 10) and status (3, decoded whole).
// ok is false for anything else (JSON, a Status, another kind) and for
// anything it cannot read.
func decodePodForStatus(data []byte) (*corev1.Pod, bool) {
	raw, ok := protobufObject(data, "v1", "Pod")
	if !ok {
		return nil, false
	}
	pod := &corev1.Pod{}
	if !protofield.Each(raw, func(num protowire.Number, v []byte) bool {
		switch num {
		case 1:
			return protofield.Each(v, func(num protowire.Number, v []byte) bool {
				if num == 5 {
					pod.UID = types.UID(v)
				}
				return true
			})
		case 2:
			return protofield.Each(v, func(num protowire.Number, v []byte) bool {
				if num == 10 {
					pod.Spec.NodeName = string(v)
				}
				return true
			})
		case 3:
			return pod.Status.Unmarshal(v) == nil
		}
		return true
	}) {
		return nil, false
	}
	return pod, true
}

// protobufObject returns the encoded object of a protobuf envelope when it
// holds an uncompressed apiVersion/kind.
func protobufObject(data []byte, apiVersion, kind string) (raw []byte, ok bool) {
	u, ok := protofield.ParseUnknown(data)
	if !ok || u.APIVersion != apiVersion || u.Kind != kind || u.Encoded {
		return nil, false
	}
	return u.Raw, true
}
