package watchers

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/stormbench/stormbench/bench/measure"
	"github.com/stormbench/stormbench/bench/result"
	"github.com/stormbench/stormbench/profiles"
)

// recorder stands in for the production opener: it logs every open and
// close of a node's component watches.
type recorder struct {
	mu  sync.Mutex
	log []string
}

func (r *recorder) open(component, node string, initial bool) func() {
	r.add(fmt.Sprintf("open %s/%s initial=%v", node, component, initial))
	return func() { r.add(fmt.Sprintf("close %s/%s", node, component)) }
}

func (r *recorder) add(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.log = append(r.log, s)
}

func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.log
	r.log = nil
	slices.Sort(out)
	return out
}

// TestLifecycle drives the hooks as the simulator calls them for each
// storm kind (bench/kubelet model.go: down for kubelet restarts and
// reboots, the handback for every kind) and checks which watches close
// and how they reopen.
func TestLifecycle(t *testing.T) {
	both := &profiles.SteadyWatches{Kubelet: true, KubeProxy: true}
	type step struct {
		call string // down, up
		want []string
	}
	for _, tc := range []struct {
		name    string
		kind    string
		watches *profiles.SteadyWatches
		steps   []step
	}{
		{"kubelet restart", profiles.StormKubelet, both, []step{
			{"down", []string{"close n1/kubelet"}},
			{"up", []string{"open n1/kubelet initial=false"}},
		}},
		{"runtime restart", profiles.StormRuntime, both, []step{
			// The model calls no down for a runtime restart; were it
			// called, nothing would stop.
			{"down", nil},
			{"up", nil},
		}},
		{"reboot", profiles.StormReboot, both, []step{
			{"down", []string{"close n1/kube-proxy", "close n1/kubelet"}},
			{"up", []string{"open n1/kube-proxy initial=true", "open n1/kubelet initial=false"}},
			{"up", nil},
		}},
		{"reboot, kube-proxy only", profiles.StormReboot, &profiles.SteadyWatches{KubeProxy: true}, []step{
			{"down", []string{"close n1/kube-proxy"}},
			{"down", nil},
			{"up", []string{"open n1/kube-proxy initial=true"}},
		}},
		{"kubelet restart, kube-proxy only", profiles.StormKubelet, &profiles.SteadyWatches{KubeProxy: true}, []step{
			{"down", nil},
			{"up", nil},
		}},
		{"a failed restart handed back without down", profiles.StormKubelet, both, []step{
			{"up", nil},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{}
			p := New(Options{Watches: tc.watches, StormKind: tc.kind})
			p.open = rec.open
			// Hooks before the population starts do nothing.
			p.NodeDown("n1")
			p.NodeUp("n1")
			p.begin([]string{"n1", "n2"})
			var want []string
			for _, c := range p.components {
				for _, n := range []string{"n1", "n2"} {
					want = append(want, fmt.Sprintf("open %s/%s initial=false", n, c))
				}
			}
			slices.Sort(want)
			if got := rec.take(); !slices.Equal(got, want) {
				t.Fatalf("begin: %q, want %q", got, want)
			}
			for i, s := range tc.steps {
				switch s.call {
				case "down":
					p.NodeDown("n1")
				case "up":
					p.NodeUp("n1")
				}
				if got := rec.take(); !slices.Equal(got, s.want) {
					t.Errorf("step %d (%s): %q, want %q", i, s.call, got, s.want)
				}
			}
			// A node outside the population is ignored.
			p.NodeDown("other")
			p.NodeUp("other")
			if got := rec.take(); len(got) != 0 {
				t.Errorf("hooks for a node outside the population: %q", got)
			}
			p.Dispose()
			closes := rec.take()
			if len(closes) != 2*len(p.components) {
				t.Errorf("Dispose closed %q, want every open group", closes)
			}
			p.NodeUp("n1")
			if got := rec.take(); len(got) != 0 {
				t.Errorf("hooks after Dispose: %q", got)
			}
		})
	}
}

func TestDisabled(t *testing.T) {
	for _, w := range []*profiles.SteadyWatches{nil, {}} {
		p := New(Options{Watches: w, StormKind: profiles.StormKubelet})
		if p.Enabled() {
			t.Errorf("%+v: enabled", w)
		}
		rec := &recorder{}
		p.open = rec.open
		p.NodeDown("n1")
		p.NodeUp("n1")
		if got := rec.take(); len(got) != 0 {
			t.Errorf("%+v: lifecycle hooks acted: %q", w, got)
		}
		if ctors := p.With(map[string]measure.Constructor{}); len(ctors) != 0 {
			t.Errorf("%+v: With added %d measurements", w, len(ctors))
		}
	}
	p := New(Options{Watches: &profiles.SteadyWatches{Kubelet: true}})
	set, err := measure.NewSetFrom(p.With(map[string]measure.Constructor{}), profiles.Measurements{})
	if err != nil {
		t.Fatal(err)
	}
	if ms := set.Measurements(); len(ms) != 1 || ms[0] != measure.Measurement(p) {
		t.Errorf("an enabled population's set holds %v, want the population", ms)
	}
}

func TestWatchesPerNode(t *testing.T) {
	if got := WatchesPerNode(ComponentKubelet); got != 5 {
		t.Errorf("kubelet: %d watches per node, want 5 (pods, node, services, CSIDrivers, RuntimeClasses)", got)
	}
	if got := WatchesPerNode(ComponentKubeProxy); got != 4 {
		t.Errorf("kube-proxy: %d watches per node, want 4 (EndpointSlices, services, ServiceCIDRs, node)", got)
	}
	want := map[string]url.Values{
		"kubelet pods":              {"fieldSelector": {"spec.nodeName=n1"}},
		"kubelet nodes":             {"fieldSelector": {"metadata.name=n1"}},
		"kubelet services":          {"fieldSelector": {"spec.clusterIP!=None"}},
		"kube-proxy endpointslices": {"labelSelector": {"!service.kubernetes.io/headless"}},
		"kube-proxy services":       {"fieldSelector": {"spec.clusterIP!=None"}, "labelSelector": {"!service.kubernetes.io/service-proxy-name"}},
		"kube-proxy nodes":          {"fieldSelector": {"metadata.name=n1"}},
	}
	for _, c := range []string{ComponentKubelet, ComponentKubeProxy} {
		for _, sp := range specsOf(c, "n1") {
			if w, ok := want[c+" "+sp.resource]; ok && sp.query().Encode() != w.Encode() {
				t.Errorf("%s %s: query %s, want %s", c, sp.resource, sp.query().Encode(), w.Encode())
			}
		}
	}
}

// fakeServer answers the watches of one collection from a script: each
// request gets the next answer, and the test reads the requests' queries.
type fakeServer struct {
	mu      sync.Mutex
	queries []url.Values
	answers []func(w http.ResponseWriter)
	served  chan struct{}
}

func (s *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.queries = append(s.queries, r.URL.Query())
	n := len(s.queries)
	var answer func(http.ResponseWriter)
	if n <= len(s.answers) {
		answer = s.answers[n-1]
	}
	s.mu.Unlock()
	if answer == nil {
		// The script is over: hold the watch until the client leaves.
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		s.served <- struct{}{}
		<-r.Context().Done()
		return
	}
	answer(w)
}

func jsonStream(t *testing.T, events string) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(events))
	}
}

// TestWatchResumes runs one watch against a scripted server: it resumes
// from its last resourceVersion when the server ends the watch, starts over
// with initial events after a 410, and backs off after a 500.
func TestWatchResumes(t *testing.T) {
	events := `{"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"a","resourceVersion":"11"}}}
{"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"12"}}}
{"type":"MODIFIED","object":{"kind":"Pod","metadata":{"name":"a","resourceVersion":"13"}}}
`
	expired := `{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Expired","code":410}}
`
	srv := &fakeServer{served: make(chan struct{}, 1), answers: []func(http.ResponseWriter){
		jsonStream(t, events),
		jsonStream(t, expired),
		func(w http.ResponseWriter) { http.Error(w, "overloaded", http.StatusInternalServerError) },
		jsonStream(t, events),
	}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	fc := clocktesting.NewFakeClock(time.Now())
	p := New(Options{Watches: &profiles.SteadyWatches{Kubelet: true}, StormKind: profiles.StormKubelet, Accept: runtime.ContentTypeJSON})
	p.clk = fc
	p.url, _ = url.Parse(ts.URL)
	ten := "10"
	p.latest[kubeletSpecs("n1")[0].collection()].Store(&ten)
	sp := kubeletSpecs("n1")[0]
	st := p.stats[statsKey(ComponentKubelet, sp.resource)]
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.watch(ctx, ts.Client(), st, sp, false)
	}()
	// The 500 makes the watch wait on the clock: step it until the last
	// answer is being served.
	deadline := time.After(time.Minute)
	for waiting := true; waiting; {
		select {
		case <-srv.served:
			waiting = false
		case <-deadline:
			t.Fatal("the watch never reached the script's end")
		default:
			if fc.HasWaiters() {
				fc.Step(backoffMax * 2)
			}
			time.Sleep(time.Millisecond)
		}
	}
	cancel()
	<-done
	srv.mu.Lock()
	defer srv.mu.Unlock()
	type q struct{ rv, initial string }
	var got []q
	for _, v := range srv.queries {
		if v.Get("watch") != "1" || v.Get("allowWatchBookmarks") != "true" || v.Get("fieldSelector") != "spec.nodeName=n1" {
			t.Errorf("watch query %v lacks watch, bookmarks or the node's field selector", v)
		}
		got = append(got, q{v.Get("resourceVersion"), v.Get("sendInitialEvents")})
	}
	want := []q{
		{"10", ""},   // from the population's resourceVersion
		{"13", ""},   // resumed from the last event
		{"", "true"}, // 410: start over with initial events
		{"", "true"}, // the 500 came before any event: still starting over
		{"13", ""},   // resumed after the initial events
	}
	if !slices.Equal(got, want) {
		t.Errorf("requests (resourceVersion, sendInitialEvents) = %v, want %v", got, want)
	}
	if e, b := st.events.Load(), st.bookmarks.Load(); e != 4 || b != 2 {
		t.Errorf("events %d, bookmarks %d; want 4 and 2", e, b)
	}
	if r, rc, rs := st.renewed.Load(), st.reconnects.Load(), st.resyncs.Load(); r != 2 || rc != 1 || rs != 2 {
		t.Errorf("renewed %d, reconnects %d, resyncs %d; want 2, 1, 2", r, rc, rs)
	}
	if want := int64(2*len(events) + len(expired)); st.bytes.Load() != want {
		t.Errorf("bytes %d, want %d", st.bytes.Load(), want)
	}
	if v := p.latest[sp.collection()].Load(); v == nil || *v != "13" {
		t.Errorf("the population's resourceVersion is %v, want the last event's 13", v)
	}
}

// TestGather checks the figures: the storm window's deltas, per component
// and per resource, and a warning when watches were not open at the start.
func TestGather(t *testing.T) {
	fc := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	p := New(Options{Watches: &profiles.SteadyWatches{Kubelet: true, KubeProxy: true}, StormKind: profiles.StormReboot})
	p.clk = fc
	p.open = (&recorder{}).open
	p.begin([]string{"n1", "n2"})
	pods := p.stats[statsKey(ComponentKubelet, "pods")]
	slices := p.stats[statsKey(ComponentKubeProxy, "endpointslices")]
	pods.events.Add(5) // before the storm: not counted
	pods.open.Store(10)
	slices.open.Store(2)
	p.MarkStormStart(fc.Now())
	pods.events.Add(3)
	pods.bytes.Add(300)
	slices.events.Add(7)
	slices.bytes.Add(700)
	slices.reconnects.Add(1)
	fc.Step(time.Minute)
	m, err := p.Gather(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{FigureWatchers, []string{result.LabelComponent, ComponentKubelet}, 10},
		{FigureWatchers, []string{result.LabelComponent, ComponentKubeProxy}, 8},
		{FigureOpenAtStormStart, []string{result.LabelComponent, ComponentKubelet}, 10},
		{FigureOpenAtStormStart, []string{result.LabelComponent, ComponentKubeProxy}, 2},
		{FigureEvents, []string{result.LabelComponent, ComponentKubelet}, 3},
		{FigureEvents, []string{result.LabelComponent, ComponentKubelet, result.LabelResource, "pods"}, 3},
		{FigureBytes, []string{result.LabelComponent, ComponentKubeProxy}, 700},
		{FigureEvents, []string{result.LabelComponent, ComponentKubeProxy, result.LabelResource, "endpointslices"}, 7},
		{FigureReconnects, []string{result.LabelComponent, ComponentKubeProxy}, 1},
		{FigureReconnects, []string{result.LabelComponent, ComponentKubelet}, 0},
	} {
		got, ok := m.Value(tc.name, result.WindowStorm, tc.labels...)
		if !ok || got != tc.want {
			t.Errorf("%s%v = %v (found %v), want %v", tc.name, tc.labels, got, ok, tc.want)
		}
	}
	if len(m.Warnings) != 1 || !strings.Contains(m.Warnings[0], "kube-proxy: 2 of 8") {
		t.Errorf("warnings %q, want one about kube-proxy's closed watches", m.Warnings)
	}
	if len(m.Windows) != 1 || m.Windows[0].End.Sub(m.Windows[0].Start) != time.Minute {
		t.Errorf("windows %+v, want the one-minute storm window", m.Windows)
	}
}

func TestGatherWithoutStorm(t *testing.T) {
	p := New(Options{Watches: &profiles.SteadyWatches{Kubelet: true}})
	if _, err := p.Gather(context.Background()); err == nil {
		t.Error("Gather before MarkStormStart: no error")
	}
}

func TestKubeProxyIdentity(t *testing.T) {
	p := New(Options{Watches: &profiles.SteadyWatches{Kubelet: true, KubeProxy: true}})
	p.opts.Base = &rest.Config{Host: "https://example"}
	if got := p.clientConfig(ComponentKubeProxy, "n1").Impersonate.UserName; got != "system:kube-proxy" {
		t.Errorf("kube-proxy impersonates %q", got)
	}
	if got := p.clientConfig(ComponentKubelet, "n1").Impersonate.UserName; got != "system:node:n1" {
		t.Errorf("the kubelet impersonates %q", got)
	}
}
