package fleet

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/stormbench/stormbench/bench/poll"
)

// slice is an EndpointSlice of ns with one endpoint per ready value (nil:
// the condition unset).
func slice(name string, ready ...*bool) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name,
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "endpointslice-controller"}}}}
	for i, r := range ready {
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{fmt.Sprintf("10.0.0.%d", i)},
			Conditions: discoveryv1.EndpointConditions{Ready: r}})
	}
	return s
}

var yes, no = func() *bool { b := true; return &b }(), func() *bool { b := false; return &b }()

// TestEndpointTally plays a seeded sequence of EndpointSlice events
// (created, updated, delivered twice, deleted, tombstoned, all through
// SlimEndpointSlice) and checks the tally against a count of the store
// after each.
func TestEndpointTally(t *testing.T) {
	tl := &endpointTally{bySlice: map[podKey]int{}}
	sim := newInformerSim(handlers(tl.set, tl.delete))
	rng := rand.New(rand.NewPCG(2, 50))
	conds := []*bool{yes, yes, no, nil}
	for step := range 2000 {
		var ready []*bool
		for range rng.IntN(5) {
			ready = append(ready, conds[rng.IntN(len(conds))])
		}
		obj, _ := SlimEndpointSlice(slice(fmt.Sprintf("s%d", rng.IntN(6)), ready...))
		s := obj.(*discoveryv1.EndpointSlice)
		switch r := rng.IntN(8); {
		case r == 0:
			sim.remove(s, rng.IntN(2) == 0)
		case r == 1:
			sim.set(s)
			sim.handler.OnUpdate(s, s)
		default:
			sim.set(s)
		}
		want := 0
		for _, o := range sim.store.List() {
			want += notReadyEndpoints(o.(*discoveryv1.EndpointSlice))
		}
		if got := tl.read(); got != want {
			t.Fatalf("step %d: tally %d not-ready endpoints, the store %d", step, got, want)
		}
	}
}

// TestSlimEndpointSlice: the endpoints' conditions stay, the rest goes.
func TestSlimEndpointSlice(t *testing.T) {
	full := slice("s", yes, no, nil)
	out, err := SlimEndpointSlice(full.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	s := out.(*discoveryv1.EndpointSlice)
	if s.Name != "s" || s.Namespace != "ns" || len(s.Endpoints) != 3 || notReadyEndpoints(s) != 2 || s.ManagedFields != nil || s.Endpoints[0].Addresses != nil {
		t.Errorf("slim slice %+v", s)
	}
}

// TestWaitEndpointsReady: the wait ends when the last endpoint turns ready,
// and says how many are not when it gives up. It runs in a synctest
// bubble, so the informer and the poll run on fake time.
func TestWaitEndpointsReady(t *testing.T) {
	f := func(t *testing.T, objs ...*discoveryv1.EndpointSlice) (*Fleet, *fake.Clientset) {
		client := fake.NewClientset()
		for _, s := range objs {
			if _, err := client.DiscoveryV1().EndpointSlices("ns").Create(context.Background(), s, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		fl, err := FromPlan(client, &Plan{Namespace: "ns"}, Options{CreateParallelism: 1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return fl, client
	}
	t.Run("catches up", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			fl, client := f(t, slice("a", yes, yes), slice("b", yes, no))
			done := make(chan error, 1)
			go func() { done <- fl.WaitEndpointsReady(context.Background(), time.Minute) }()
			time.Sleep(5 * time.Second)
			synctest.Wait()
			select {
			case err := <-done:
				t.Fatalf("the wait ended with an endpoint not ready: %v", err)
			default:
			}
			if _, err := client.DiscoveryV1().EndpointSlices("ns").Update(context.Background(), slice("b", yes, yes), metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := <-done; err != nil {
				t.Errorf("the wait: %v", err)
			}
		})
	})
	t.Run("gives up", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			fl, _ := f(t, slice("a", yes, nil), slice("b", no, yes))
			err := fl.WaitEndpointsReady(context.Background(), 10*time.Second)
			if !errors.Is(err, poll.ErrTimeout) || !strings.Contains(err.Error(), "2 endpoints not ready") {
				t.Errorf("the wait: %v, want a timeout saying 2 endpoints not ready", err)
			}
		})
	})
}
