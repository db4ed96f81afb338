package track

import (
	"slices"
	"strings"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/utils/ptr"
)

// epKey identifies one endpoint of one Service across EndpointSlices: the
// Service, the address type (a dual-stack pod is one endpoint per family)
// and the target (the targetRef, or the addresses when there is none). An
// endpoint that the EndpointSlice controller moves between slices keeps its
// Key.
type epKey struct {
	namespace, service, addressType, id string
}

func (k epKey) ServiceID() string { return k.namespace + "/" + k.service }

// epState is an endpoint's effective state across the slices that list it.
type epState int8

const (
	epAbsent epState = iota
	EpReady
	EpNotReady
)

// sliceEndpoint is one endpoint as one slice lists it.
type sliceEndpoint struct {
	key   epKey
	ready bool
	node  string
}

// epAgg counts the slices listing an endpoint as ready and as not ready.
type epAgg struct {
	ready, notReady int
	node            string
}

func (a *epAgg) state() epState {
	switch {
	case a == nil:
		return epAbsent
	case a.ready > 0:
		return EpReady
	case a.notReady > 0:
		return EpNotReady
	}
	return epAbsent
}

// epChange is a change of an endpoint's effective state.
type epChange struct {
	Key      epKey
	Node     string
	From, To epState
}

// EndpointIndex tracks every endpoint of the watched EndpointSlices and
// turns slice add/update/delete events into endpoint state changes. It is
// not safe for concurrent use.
type EndpointIndex struct {
	slices map[string][]sliceEndpoint // by slice namespace/name
	Agg    map[epKey]*epAgg
}

func NewEndpointIndex() *EndpointIndex {
	return &EndpointIndex{slices: map[string][]sliceEndpoint{}, Agg: map[epKey]*epAgg{}}
}

// SliceEndpoints lists the endpoints of a slice. ok is false for a slice
// that belongs to no Service (no kubernetes.io/service-name label).
//
// Readiness follows the EndpointSlice API: conditions.ready unset means
// ready; a terminating endpoint has ready=false and counts as not ready,
// since it is out of load balancing too.
func SliceEndpoints(s *discoveryv1.EndpointSlice) (id string, eps []sliceEndpoint, ok bool) {
	svc := s.Labels[discoveryv1.LabelServiceName]
	if svc == "" {
		return "", nil, false
	}
	id = s.Namespace + "/" + s.Name
	eps = make([]sliceEndpoint, 0, len(s.Endpoints))
	for _, e := range s.Endpoints {
		k := epKey{namespace: s.Namespace, service: svc, addressType: string(s.AddressType)}
		if r := e.TargetRef; r != nil {
			k.id = r.Kind + "/" + r.Namespace + "/" + r.Name
		} else {
			k.id = strings.Join(e.Addresses, ",")
		}
		eps = append(eps, sliceEndpoint{key: k, ready: ptr.Deref(e.Conditions.Ready, true), node: ptr.Deref(e.NodeName, "")})
	}
	return id, eps, true
}

// Apply replaces the endpoints listed by slice id (nil eps: the slice was
// deleted) and returns the endpoints whose effective state changed, in a
// deterministic order.
func (x *EndpointIndex) Apply(id string, eps []sliceEndpoint) []epChange {
	old := x.slices[id]
	before := map[epKey]epState{}
	for _, e := range slices.Concat(old, eps) {
		if _, ok := before[e.key]; !ok {
			before[e.key] = x.Agg[e.key].state()
		}
	}
	for _, e := range old {
		x.count(e, -1)
	}
	for _, e := range eps {
		x.count(e, 1)
	}
	if eps == nil {
		delete(x.slices, id)
	} else {
		x.slices[id] = eps
	}
	var changes []epChange
	for k, from := range before {
		a := x.Agg[k]
		if to := a.state(); to != from {
			c := epChange{Key: k, From: from, To: to}
			if a != nil {
				c.Node = a.node
			}
			changes = append(changes, c)
		}
	}
	slices.SortFunc(changes, func(a, b epChange) int {
		return strings.Compare(a.Key.ServiceID()+"/"+a.Key.addressType+"/"+a.Key.id, b.Key.ServiceID()+"/"+b.Key.addressType+"/"+b.Key.id)
	})
	return changes
}

// count adds d to the slices listing e as e lists it, and drops an
// endpoint no slice lists any more.
func (x *EndpointIndex) count(e sliceEndpoint, d int) {
	a := Entry(x.Agg, e.key, nil)
	if e.ready {
		a.ready += d
	} else {
		a.notReady += d
	}
	if a.ready == 0 && a.notReady == 0 {
		delete(x.Agg, e.key)
	} else if d > 0 && e.node != "" {
		a.node = e.node
	}
}

// Has reports whether the index holds slice id.
func (x *EndpointIndex) Has(id string) bool {
	_, ok := x.slices[id]
	return ok
}
