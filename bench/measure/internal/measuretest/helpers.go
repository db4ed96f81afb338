package measuretest

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stormbench/stormbench/bench/result"
	"github.com/stormbench/stormbench/bench/testutil"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
)

var T0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func At(d time.Duration) time.Time { return T0.Add(d) }

// GoldenMeasurement sorts m and compares its JSON with a golden file.
func GoldenMeasurement(t *testing.T, name string, m result.Measurement) {
	t.Helper()
	m.Sort()
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, name, append(b, '\n'))
}

// Value returns a figure or fails the test.
func Value(t *testing.T, m *result.Measurement, name, window string, labels ...string) float64 {
	t.Helper()
	v, ok := m.Value(name, window, labels...)
	if !ok {
		t.Fatalf("no value %s window=%q labels=%v", name, window, labels)
	}
	return v
}

// Approx reports whether a and b are equal but for rounding.
func Approx(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(a), math.Abs(b)) }

const Ns = "sb-run"

// Ep is an endpoint in a scripted slice: a pod, its node and readiness.
type Ep struct {
	Pod, Node   string
	Ready       bool
	Terminating bool
}

func MkSlice(name, svc string, rv int, eps ...Ep) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: Ns, ResourceVersion: strconv.Itoa(rv),
			Labels: map[string]string{discoveryv1.LabelServiceName: svc}},
		AddressType: discoveryv1.AddressTypeIPv4,
	}
	for i, e := range eps {
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{
			Addresses:  []string{fmt.Sprintf("10.1.%d.%d", len(name), i+1)},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(e.Ready), Terminating: ptr.To(e.Terminating)},
			NodeName:   ptr.To(e.Node),
			TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: Ns, Name: e.Pod},
		})
	}
	return s
}

// WaitFor polls cond until it holds; the deadline only bounds a broken test.
func WaitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), time.Millisecond, 10*time.Second, true,
		func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}
