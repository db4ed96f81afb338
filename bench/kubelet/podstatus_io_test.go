package kubelet

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/clock"
)

// statusTestPod is a pod with what a KWOK pod carries: managed fields, an
// owner, a spec with probes, and a status with conditions and container
// states.
func statusTestPod() *corev1.Pod {
	tru := true
	started := metav1.Unix(1700000000, 0)
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "web-0", Namespace: "ns", UID: "uid-web-0", ResourceVersion: "42",
			Labels:          map[string]string{"app": "web"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web", UID: "uid-rs"}},
			ManagedFields:   []metav1.ManagedFieldsEntry{{Manager: "kwok", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status"}},
		},
		Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "app", Image: "web:1",
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}, PeriodSeconds: 10}}}},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning, PodIP: "10.244.1.3", PodIPs: []corev1.PodIP{{IP: "10.244.1.3"}}, HostIP: "10.0.0.1",
			StartTime: &started, QOSClass: corev1.PodQOSBestEffort,
			Conditions: []corev1.PodCondition{
				{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: started},
				{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: started},
			},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Ready: true, Started: &tru, ContainerID: "containerd://web-0-app",
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}}}},
		},
	}
}

func encodeProtobuf(t *testing.T, obj runtime.Object) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme).Encode(obj, &b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestDecodePodForStatus: the lean decoding reads a pod's UID, node and
// whole status as the full decoder does, and refuses what it does not know.
func TestDecodePodForStatus(t *testing.T) {
	want := statusTestPod()
	got, ok := decodePodForStatus(encodeProtobuf(t, want))
	if !ok {
		t.Fatal("a protobuf pod was not decoded")
	}
	if got.UID != want.UID || got.Spec.NodeName != want.Spec.NodeName {
		t.Errorf("uid %q node %q, want %q %q", got.UID, got.Spec.NodeName, want.UID, want.Spec.NodeName)
	}
	if !apiequality.Semantic.DeepEqual(got.Status, want.Status) {
		t.Errorf("status differs:\n got %+v\nwant %+v", got.Status, want.Status)
	}
	if got.Name != "" || len(got.ManagedFields) != 0 || len(got.Spec.Containers) != 0 {
		t.Errorf("decoded more than the status manager reads: %+v", got.ObjectMeta)
	}
	svc := &corev1.Service{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"}, ObjectMeta: metav1.ObjectMeta{Name: "s"}}
	for name, data := range map[string][]byte{
		"json":      []byte(`{"kind":"Pod","apiVersion":"v1","metadata":{"uid":"u"}}`),
		"service":   encodeProtobuf(t, svc),
		"truncated": encodeProtobuf(t, want)[:40],
		"empty":     nil,
	} {
		if _, ok := decodePodForStatus(data); ok {
			t.Errorf("%s: decoded as a pod", name)
		}
	}
}

// recordedRequest is what the API server sees of a request.
type recordedRequest struct {
	method, uri, body string
	header            http.Header
}

func (r recordedRequest) String() string {
	keys := make([]string, 0, len(r.header))
	for k := range r.header {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s body=%q", r.method, r.uri, r.body)
	for _, k := range keys {
		fmt.Fprintf(&b, " %s=%q", k, r.header[k])
	}
	return b.String()
}

// TestPodStatusRequestsAsTyped: the status manager's GET and PATCH, sent
// through the REST client with the answers read lean, are the requests
// the typed client sends, byte for byte and header for header, and give
// the same results: the pod's status, NotFound and Forbidden.
func TestPodStatusRequestsAsTyped(t *testing.T) {
	pod := statusTestPod()
	podBytes := encodeProtobuf(t, pod)
	var mu sync.Mutex
	var seen []recordedRequest
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		h := r.Header.Clone()
		h.Del("Authorization")
		mu.Lock()
		seen = append(seen, recordedRequest{r.Method, r.RequestURI, string(body), h})
		mu.Unlock()
		switch {
		case strings.Contains(r.URL.Path, "/pods/gone"):
			writeStatus(w, http.StatusNotFound, "NotFound")
		case strings.Contains(r.URL.Path, "/pods/other"):
			writeStatus(w, http.StatusForbidden, "Forbidden")
		default:
			w.Header().Set("Content-Type", "application/vnd.kubernetes.protobuf")
			_, _ = w.Write(podBytes)
		}
	}))
	base := startTLS(t, srv, "harness-token")
	s, err := newSession(base, "n1", nil, clock.RealClock{}, sessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	if s.podsREST() == nil {
		t.Fatal("a session's client has no REST client: the lean path is not taken")
	}
	ctx := context.Background()
	patch := []byte(`{"metadata":{"uid":"uid-web-0"},"status":{"phase":"Running"}}`)
	take := func() []recordedRequest {
		mu.Lock()
		defer mu.Unlock()
		out := seen
		seen = nil
		return out
	}

	for _, name := range []string{"web-0", "gone", "other"} {
		typedPod, typedGetErr := s.client.CoreV1().Pods("ns").Get(ctx, name, metav1.GetOptions{})
		_, typedPatchErr := s.client.CoreV1().Pods("ns").Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
		typed := take()
		leanPod, leanGetErr := s.getPodStatus(ctx, "ns", name)
		leanPatchErr := s.patchPodStatus(ctx, "ns", name, patch)
		lean := take()

		if len(typed) != 2 || len(lean) != 2 {
			t.Fatalf("%s: typed sent %d requests, lean %d; want 2 each", name, len(typed), len(lean))
		}
		for i := range typed {
			if typed[i].String() != lean[i].String() {
				t.Errorf("%s: request %d differs:\ntyped %s\n lean %s", name, i, typed[i], lean[i])
			}
		}
		for _, e := range []struct {
			what        string
			typed, lean error
		}{{"GET", typedGetErr, leanGetErr}, {"PATCH", typedPatchErr, leanPatchErr}} {
			if apierrors.IsNotFound(e.typed) != apierrors.IsNotFound(e.lean) ||
				apierrors.IsForbidden(e.typed) != apierrors.IsForbidden(e.lean) || (e.typed == nil) != (e.lean == nil) {
				t.Errorf("%s %s: typed error %v, lean %v", name, e.what, e.typed, e.lean)
			}
		}
		if typedGetErr == nil {
			if leanPod.UID != typedPod.UID || leanPod.Spec.NodeName != typedPod.Spec.NodeName ||
				!apiequality.Semantic.DeepEqual(leanPod.Status, typedPod.Status) {
				t.Errorf("%s: lean GET read %+v, typed %+v", name, leanPod, typedPod)
			}
		}
	}
}

// BenchmarkPodStatusPatch is one status manager patch of a readiness flip
// (the legacy gate's write) of a one-container pod, written directly and
// as strategicpatch computes it.
func BenchmarkPodStatusPatch(b *testing.B) {
	pod := statusTestPod()
	now := metav1.Unix(1700000100, 0)
	cur := pod.Status.DeepCopy()
	setReadiness(cur, func(string) bool { return false }, now)
	for _, v := range []struct {
		name  string
		patch func(types.UID, corev1.PodStatus, corev1.PodStatus) ([]byte, bool, error)
	}{{"direct", podStatusPatch}, {"strategicpatch", strategicStatusPatch}} {
		b.Run(v.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := v.patch(pod.UID, pod.Status, *cur); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestDropEqualFieldsKeepsPatch: the patch from the trimmed statuses is
// the patch statusutil.PatchPodStatus computes from the whole ones, for
// each kind of write the model makes.
func TestDropEqualFieldsKeepsPatch(t *testing.T) {
	now := metav1.Unix(1700000100, 0)
	later := metav1.Unix(1700000200, 0)
	for _, tc := range []struct {
		name   string
		mutate func(st *corev1.PodStatus)
	}{
		{"unchanged", func(*corev1.PodStatus) {}},
		{"not ready", func(st *corev1.PodStatus) { setReadiness(st, func(string) bool { return false }, now) }},
		{"terminated", func(st *corev1.PodStatus) {
			terminateContainers(st, nil, 0, "Completed", now)
			st.Phase = corev1.PodSucceeded
		}},
		{"reboot: new sandbox", func(st *corev1.PodStatus) {
			st.PodIP, st.PodIPs = "10.244.1.9", []corev1.PodIP{{IP: "10.244.1.9"}}
			st.StartTime = &later
			st.HostIPs = []corev1.HostIP{{IP: "10.0.0.2"}}
			setReadiness(st, func(string) bool { return false }, now)
		}},
		{"addresses gone", func(st *corev1.PodStatus) {
			st.PodIP, st.PodIPs, st.HostIP, st.StartTime = "", nil, "", nil
		}},
		{"observed generation, message", func(st *corev1.PodStatus) {
			st.ObservedGeneration = 2
			st.Message, st.Reason = "Pod was terminated in response to imminent node shutdown.", "Terminated"
		}},
		{"init containers appear", func(st *corev1.PodStatus) {
			st.InitContainerStatuses = []corev1.ContainerStatus{{Name: "init", Ready: true}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := statusTestPod()
			pod.Status.HostIPs = []corev1.HostIP{{IP: "10.0.0.1"}}
			old := pod.Status.DeepCopy()
			cur := pod.Status.DeepCopy()
			tc.mutate(cur)
			got, gotUnchanged, err := podStatusPatch(pod.UID, *old, *cur)
			if err != nil {
				t.Fatal(err)
			}
			oldData, _ := json.Marshal(corev1.Pod{Status: *old})
			newData, _ := json.Marshal(corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: pod.UID}, Status: *cur})
			want, err := strategicpatch.CreateTwoWayMergePatch(oldData, newData, corev1.Pod{})
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("patch\n got %s\nwant %s", got, want)
			}
			if wantUnchanged := tc.name == "unchanged"; gotUnchanged != wantUnchanged {
				t.Errorf("unchanged = %v, want %v (patch %s)", gotUnchanged, wantUnchanged, got)
			}
			if !apiequality.Semantic.DeepEqual(*old, pod.Status) {
				t.Error("podStatusPatch changed its caller's status")
			}
		})
	}
}
