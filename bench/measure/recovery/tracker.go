package recovery

import (
	"maps"
	"slices"
	"sort"
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	"github.com/stormbench/stormbench/bench/fleet"
	"github.com/stormbench/stormbench/bench/measure/internal/track"
	"github.com/stormbench/stormbench/bench/result"
	"github.com/stormbench/stormbench/bench/storm"
)

// recoveryHighest is the largest recovery latency the histograms track.
// Longer ones (a reboot past the 300 s eviction toleration, then a
// reschedule) are recorded as this value and counted as clamped.
const recoveryHighest = 2 * time.Hour

// transition is one observed change of a yes/no condition (Ready,
// containers running) at the time the watch delivered it.
type transition struct {
	at   time.Time
	ok   bool
	node string // the pod's node at that time; empty for nodes
	// message is a node's Ready condition message at that time.
	message string
}

// timeline is the observed transitions of one object, oldest first. The
// first entry is the state seen by the initial list.
type timeline []transition

func (tl *timeline) observe(at time.Time, ok bool, node, message string) {
	if n := len(*tl); n > 0 && (*tl)[n-1].ok == ok {
		return
	}
	*tl = append(*tl, transition{at: at, ok: ok, node: node, message: message})
}

// lastAt returns the last of xs, in time order, at or before t.
func lastAt[T any](xs []T, at func(T) time.Time, t time.Time) (T, bool) {
	i := sort.Search(len(xs), func(i int) bool { return at(xs[i]).After(t) })
	if i == 0 {
		var zero T
		return zero, false
	}
	return xs[i-1], true
}

func transitionAt(tr transition) time.Time { return tr.at }
func identity(t time.Time) time.Time       { return t }

// firstAfter returns the first transition to ok at or after t.
func (tl timeline) firstAfter(t time.Time, ok bool) (transition, bool) {
	for _, tr := range tl {
		if !tr.at.Before(t) && tr.ok == ok {
			return tr, true
		}
	}
	return transition{}, false
}

type podTimelines struct {
	ready, running timeline
}

// degradation is an interval during which a Service had not-ready
// endpoints, with the nodes those endpoints were on.
type degradation struct {
	service    string
	start, end time.Time // end is zero while open
	nodes      map[string]bool
}

type svcRecovery struct {
	notReady int
	nodes    map[string]int // not-ready endpoints per node
	open     *degradation
}

// Tracker records when nodes, pods and Services were observed
// becoming unready and ready again, and turns that into recovery latencies
// against the storm's restart times. It is the pure core of the recovery
// measurement; feed it watch events and it timestamps each with its clock.
// It is safe for concurrent use.
//
// Observation error. Every "ready again" time is the time the watch
// delivered the change to stormbench, not the time the API server stored it:
// it is late by the watch delivery delay (the API server's watch cache
// dispatch plus the informer's queue; milliseconds when idle, and growing
// with API-server load during the storm, which is when it matters). Restart
// times come from the restarts' outcomes, stamped by the same clock when the
// node was taken down, so there is no clock skew between the two. A
// recovery latency therefore overestimates the true one by the delivery
// delay of the Ready update, and is quantized by nothing else; the
// HdrHistograms add at most 0.1 % on top. A watch that breaks and relists
// sees only final states: a flip to not-ready and back that happened
// entirely during the gap is missed.
type Tracker struct {
	mu  sync.Mutex
	clk clock.PassiveClock

	nodes    map[string]*timeline
	pods     map[string]*podTimelines
	idx      *track.EndpointIndex
	services map[string]*svcRecovery
	degraded []*degradation
}

// NewTracker returns an empty tracker.
func NewTracker(clk clock.PassiveClock) *Tracker {
	return &Tracker{
		clk:      clk,
		nodes:    map[string]*timeline{},
		pods:     map[string]*podTimelines{},
		idx:      track.NewEndpointIndex(),
		services: map[string]*svcRecovery{},
	}
}

// podRunning reports whether a pod is Running with every container running.
func podRunning(p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodRunning || len(p.Status.ContainerStatuses) == 0 {
		return false
	}
	for _, c := range p.Status.ContainerStatuses {
		if c.State.Running == nil {
			return false
		}
	}
	return true
}

// ObserveNode records a node's state from an add or update event.
func (r *Tracker) ObserveNode(n *corev1.Node) {
	r.mu.Lock()
	defer r.mu.Unlock()
	tl := track.Entry(r.nodes, n.Name, nil)
	var message string
	if c := fleet.NodeReadyCondition(n); c != nil {
		message = c.Message
	}
	tl.observe(r.clk.Now(), fleet.NodeReady(n), "", message)
}

// ObservePod records a pod's state from an add or update event; deleted
// true records its deletion, which makes it neither ready nor running (a
// StatefulSet pod recreated under the same name then recovers as one pod).
func (r *Tracker) ObservePod(p *corev1.Pod, deleted bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.clk.Now()
	pt := track.Entry(r.pods, p.Namespace+"/"+p.Name, nil)
	node := p.Spec.NodeName
	pt.ready.observe(now, !deleted && fleet.PodReady(p), node, "")
	pt.running.observe(now, !deleted && podRunning(p), node, "")
}

// ObserveSlice records an EndpointSlice from an add or update event, or its
// deletion.
func (r *Tracker) ObserveSlice(s *discoveryv1.EndpointSlice, deleted bool) {
	id, eps, ok := track.SliceEndpoints(s)
	if !ok {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if deleted {
		eps = nil
	}
	now := r.clk.Now()
	for _, c := range r.idx.Apply(id, eps) {
		svcID := c.Key.ServiceID()
		sr := track.Entry(r.services, svcID, func(sr *svcRecovery) { sr.nodes = map[string]int{} })
		if c.From == track.EpNotReady {
			sr.notReady--
			if sr.nodes[c.Node]--; sr.nodes[c.Node] <= 0 {
				delete(sr.nodes, c.Node)
			}
		}
		if c.To == track.EpNotReady {
			sr.notReady++
			sr.nodes[c.Node]++
			if sr.open == nil {
				sr.open = &degradation{service: svcID, start: now, nodes: map[string]bool{}}
				r.degraded = append(r.degraded, sr.open)
			}
			sr.open.nodes[c.Node] = true
		}
		if sr.notReady == 0 && sr.open != nil {
			sr.open.end = now
			sr.open = nil
		}
	}
}

// Figures is Tracker's result: recovery-latency histograms
// (microseconds) and counts of what could not be measured.
type Figures struct {
	// Node holds per node restart: Down → Ready observed again.
	Node *hdrhistogram.Histogram
	// Pod holds per affected pod: its node's Down → Ready observed again.
	Pod *hdrhistogram.Histogram
	// PodRunning holds per pod whose containers stopped: Down event → every
	// container running again (reboots).
	PodRunning *hdrhistogram.Histogram
	// Service holds per Service degradation: earliest Down event of a node
	// hosting one of its not-ready endpoints → every endpoint ready again.
	Service *hdrhistogram.Histogram
	// FleetRecovered holds one value: first Down event → the last of the
	// above recoveries; empty if anything had not recovered.
	FleetRecovered *hdrhistogram.Histogram
	// Unrecovered counts, by kind (node, pod, pod_running, service), what
	// had not recovered at the end.
	Unrecovered map[string]int
	// Unattributed counts, by kind, not-ready observations that no restart
	// explains (no Down event of the node before them).
	Unattributed map[string]int
	// NodesFromEvents counts node recoveries taken from the storm's
	// ReportedReady event because the watch never saw the node not Ready.
	NodesFromEvents int
	// UnrecoveredNodes is the number of restarted nodes not yet recovered,
	// per second from the first Down event.
	UnrecoveredNodes result.Series
	// Clamped counts latencies above the histograms' range.
	Clamped int
}

func newRecoveryHist() *hdrhistogram.Histogram { return result.NewHDR(recoveryHighest) }

// recordLatency records d, clamping it into the histogram's range.
func recordLatency(h *hdrhistogram.Histogram, d time.Duration, clamped *int) {
	us := max(d.Microseconds(), 0)
	if us > h.HighestTrackableValue() {
		us = h.HighestTrackableValue()
		*clamped++
	}
	// In range by construction, so RecordValue cannot fail.
	_ = h.RecordValue(us)
}

// downsOf indexes the outcomes' Down and ReportedReady times per node.
func downsOf(outcomes []storm.Outcome) (downs, reported map[string][]time.Time, first time.Time) {
	downs, reported = map[string][]time.Time{}, map[string][]time.Time{}
	for i := range outcomes {
		o := &outcomes[i]
		if o.Restarted() {
			downs[o.Node] = append(downs[o.Node], o.Down)
			if first.IsZero() || o.Down.Before(first) {
				first = o.Down
			}
		}
		if !o.ReportedReady.IsZero() {
			reported[o.Node] = append(reported[o.Node], o.ReportedReady)
		}
	}
	for _, m := range []map[string][]time.Time{downs, reported} {
		for _, ts := range m {
			slices.SortFunc(ts, time.Time.Compare)
		}
	}
	return downs, reported, first
}

// Transition is one observed change of a pod's or a node's readiness, at
// the time the watch delivered it.
type Transition struct {
	At time.Time
	// Node is the pod's node, or the node itself.
	Node string
	// Object is the pod (namespace/name) or the node.
	Object string
	Ready  bool
	// Message is a node's Ready condition message then.
	Message string
}

// Transitions returns the pods' Ready transitions and the nodes' observed
// in [from, to), each in time order; an object's first sighting is its
// state, not a transition.
func (r *Tracker) Transitions(from, to time.Time) (pods, nodes []Transition) {
	r.mu.Lock()
	defer r.mu.Unlock()
	in := func(out []Transition, object string, tl timeline, node func(transition) string) []Transition {
		for i, tr := range tl {
			if i > 0 && !tr.at.Before(from) && tr.at.Before(to) {
				out = append(out, Transition{At: tr.at, Node: node(tr), Object: object, Ready: tr.ok, Message: tr.message})
			}
		}
		return out
	}
	for _, key := range slices.Sorted(maps.Keys(r.pods)) {
		pods = in(pods, key, r.pods[key].ready, func(tr transition) string { return tr.node })
	}
	for _, name := range slices.Sorted(maps.Keys(r.nodes)) {
		nodes = in(nodes, name, *r.nodes[name], func(transition) string { return name })
	}
	byTime := func(a, b Transition) int { return a.At.Compare(b.At) }
	slices.SortStableFunc(pods, byTime)
	slices.SortStableFunc(nodes, byTime)
	return pods, nodes
}

// Compute matches the observations with the storm's outcomes as of now.
func (r *Tracker) Compute(outcomes []storm.Outcome) Figures {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.clk.Now()
	out := Figures{
		Node: newRecoveryHist(), Pod: newRecoveryHist(), PodRunning: newRecoveryHist(),
		Service: newRecoveryHist(), FleetRecovered: newRecoveryHist(),
		Unrecovered: map[string]int{}, Unattributed: map[string]int{},
	}
	downs, reported, first := downsOf(outcomes)
	if first.IsZero() {
		return out
	}
	p := &recoveryPass{out: &out, downs: downs, last: first}
	nodeSpans := r.computeNodes(p, reported)
	r.countUnattributedNodes(p)
	r.computePods(p)
	r.computeServices(p)
	if len(out.Unrecovered) == 0 { // its counts only grow from 1
		recordLatency(out.FleetRecovered, p.last.Sub(first), &out.Clamped)
	}
	out.UnrecoveredNodes = unrecoveredSeries(first, now, nodeSpans)
	return out
}

// recoveryPass is one Compute: the figures it fills, the storm's Down
// events by node, and the last recovery seen so far.
type recoveryPass struct {
	out   *Figures
	downs map[string][]time.Time
	last  time.Time
}

// done records a recovery at t.
func (p *recoveryPass) done(t time.Time) {
	if t.After(p.last) {
		p.last = t
	}
}

// computeNodes records each restart's node recovery: the first Ready
// observed after the node was seen not Ready, following its Down event and
// before its next one. It returns each restart's [down, recovered) span,
// recovered zero if it did not.
func (r *Tracker) computeNodes(p *recoveryPass, reported map[string][]time.Time) [][2]time.Time {
	out := p.out
	var nodeSpans [][2]time.Time
	for _, node := range slices.Sorted(maps.Keys(p.downs)) {
		ts := p.downs[node]
		tl := ptr.Deref(r.nodes[node], timeline{})
		for i, t0 := range ts {
			next := time.Time{}
			if i+1 < len(ts) {
				next = ts[i+1]
			}
			before := func(t time.Time) bool { return next.IsZero() || t.Before(next) }
			notReadyAt := time.Time{}
			if st, ok := lastAt(tl, transitionAt, t0); ok && !st.ok {
				notReadyAt = t0
			} else if tr, ok := tl.firstAfter(t0, false); ok && before(tr.at) {
				notReadyAt = tr.at
			}
			var recovered time.Time
			if !notReadyAt.IsZero() {
				if tr, ok := tl.firstAfter(notReadyAt, true); ok && before(tr.at) {
					recovered = tr.at
				}
			} else if i := slices.IndexFunc(reported[node], func(at time.Time) bool { return !at.Before(t0) }); i >= 0 && before(reported[node][i]) {
				// The node never looked unready to the watch (its
				// NotReady report and the Ready one fell between two
				// deliveries, or the model never reported NotReady): the
				// storm's own ReportedReady event is the best estimate.
				recovered = reported[node][i]
				out.NodesFromEvents++
			}
			if recovered.IsZero() {
				out.Unrecovered["node"]++
			} else {
				recordLatency(out.Node, recovered.Sub(t0), &out.Clamped)
				p.done(recovered)
			}
			nodeSpans = append(nodeSpans, [2]time.Time{t0, recovered})
		}
	}
	return nodeSpans
}

// countUnattributedNodes counts the nodes the storm did not restart that
// went NotReady anyway: the cascade of an overloaded control plane (their
// leases renewed too late, LeaseTracker) or a fault outside the storm.
func (r *Tracker) countUnattributedNodes(p *recoveryPass) {
	for _, node := range slices.Sorted(maps.Keys(r.nodes)) {
		if _, restarted := p.downs[node]; restarted {
			continue
		}
		for i, tr := range *r.nodes[node] {
			if i > 0 && !tr.ok {
				p.out.Unattributed["node"]++
			}
		}
	}
}

// computePods records the pods' recoveries: every observed transition to
// not ready (or not running) that a Down event of the pod's node explains
// recovers at the next transition back.
func (r *Tracker) computePods(p *recoveryPass) {
	out := p.out
	for _, key := range slices.Sorted(maps.Keys(r.pods)) {
		pt := r.pods[key]
		for _, c := range []struct {
			kind string
			tl   timeline
			h    *hdrhistogram.Histogram
		}{{"pod", pt.ready, out.Pod}, {"pod_running", pt.running, out.PodRunning}} {
			attributed := map[time.Time]bool{}
			for i, tr := range c.tl {
				if tr.ok || i == 0 {
					continue // the initial state is not a transition
				}
				t0, ok := lastAt(p.downs[tr.node], identity, tr.at)
				if !ok {
					out.Unattributed[c.kind]++
					continue
				}
				if attributed[t0] {
					continue // a second flip after the same restart
				}
				attributed[t0] = true
				if back, ok := c.tl.firstAfter(tr.at, true); ok {
					recordLatency(c.h, back.at.Sub(t0), &out.Clamped)
					p.done(back.at)
				} else {
					out.Unrecovered[c.kind]++
				}
			}
		}
	}
}

// computeServices records the Services' recoveries: each degradation
// recovers when its last not-ready endpoint is ready (or gone), measured
// from the earliest restart of a node that hosted one of its not-ready
// endpoints.
func (r *Tracker) computeServices(p *recoveryPass) {
	out := p.out
	for _, d := range r.degraded {
		var t0 time.Time
		for node := range d.nodes {
			if t, ok := lastAt(p.downs[node], identity, d.start); ok && (t0.IsZero() || t.Before(t0)) {
				t0 = t
			}
		}
		switch {
		case t0.IsZero():
			out.Unattributed["service"]++
		case d.end.IsZero():
			out.Unrecovered["service"]++
		default:
			recordLatency(out.Service, d.end.Sub(t0), &out.Clamped)
			p.done(d.end)
		}
	}
}

// unrecoveredSeries counts, at the end of every second from first to now,
// the restarts that have started and not yet recovered.
func unrecoveredSeries(first, now time.Time, spans [][2]time.Time) result.Series {
	s := track.SecondSeries{Origin: first}
	type edge struct {
		at time.Time
		d  float64
	}
	var edges []edge
	for _, sp := range spans {
		edges = append(edges, edge{sp[0], 1})
		if !sp[1].IsZero() {
			edges = append(edges, edge{sp[1], -1})
		}
	}
	slices.SortStableFunc(edges, func(a, b edge) int { return a.at.Compare(b.at) })
	level := 0.0
	for _, e := range edges {
		level += e.d
		s.Observe(e.at, level)
	}
	return s.Series(SeriesUnrecoveredNodes, result.UnitCount, now)
}

// recoveryResult turns Figures into result figures.
func recoveryResult(rec Figures, perPod bool) (result.Measurement, error) {
	out := result.Measurement{Name: Name}
	hists := []*hdrhistogram.Histogram{rec.Node, rec.Service, rec.FleetRecovered, rec.Pod, rec.PodRunning}
	if !perPod {
		hists = hists[:3]
	}
	for i, x := range hists {
		h, err := result.FromHDR([]string{Node, Service, FleetRecovered, Pod, PodRunning}[i], result.WindowStorm, nil, x)
		if err != nil {
			return out, err
		}
		out.Histograms = append(out.Histograms, h)
	}
	for i, counts := range []map[string]int{rec.Unrecovered, rec.Unattributed} {
		for _, kind := range slices.Sorted(maps.Keys(counts)) {
			out.Values = append(out.Values, result.Value{Name: []string{Unrecovered, Unattributed}[i], Window: result.WindowStorm,
				Unit: result.UnitCount, Value: float64(counts[kind]), Labels: result.Labels(result.LabelKind, kind)})
		}
	}
	out.Values = append(out.Values, result.Value{Name: FromEvents, Window: result.WindowStorm, Unit: result.UnitCount, Value: float64(rec.NodesFromEvents)})
	if rec.Clamped > 0 {
		out.Warnings = append(out.Warnings, "some recovery latencies exceeded 2h and were recorded as 2h")
	}
	if len(rec.UnrecoveredNodes.Points) > 0 {
		out.Series = append(out.Series, rec.UnrecoveredNodes)
	}
	return out, nil
}
