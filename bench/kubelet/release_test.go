package kubelet

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"

	"github.com/stormbench/stormbench/bench/kubelet/plan"
	"github.com/stormbench/stormbench/bench/kubeversion"
	"github.com/stormbench/stormbench/profiles"
)

// versionFacts is what a kubelet restart of each supported version sends
// differently, as read in the sources (k8s.io/kubernetes and
// k8s.io/client-go at each tag), written out here apart from the model's
// tables (kubeversion's gates, release) so that the test checks them.
var versionFacts = map[kubeversion.Version]struct {
	// listThenWatch: every informer and reflector LISTs, then WATCHes
	// from the list's resourceVersion (client-go features/known_features.go
	// WatchListClient false in v0.34.4; tools/cache/reflector.go
	// ListAndWatchWithContext falls back to list). Otherwise its initial
	// sync is a WATCH with sendInitialEvents=true (WatchListClient true
	// from v0.35).
	listThenWatch bool
	// podCertificates: the PodCertificateRequest informer by
	// spec.nodeName (pkg/kubelet/kubelet.go NewMainKubelet, gate
	// PodCertificateRequest GA and on in v1.37.2), at this API version.
	podCertificates    bool
	podCertificatesAPI string
	// csiNodeGetsNode: the CSI plugin's start GETs the node
	// (nodeinfomanager.go tryInitializeCSINodeWithAnnotation, from
	// v1.35.4).
	csiNodeGetsNode bool
	// legacyReadiness: a restart resets probed containers' readiness by
	// default (no ChangeContainerStatusOnKubeletRestart gate in v1.34.4,
	// prober/worker.go; the gate false from v1.35.4).
	legacyReadiness bool
	// userAgent is the simulated kubelet's.
	userAgent string
	// sandboxReadyWrite: a rebooted pod's new sandbox is reported ready in
	// a status of its own, before its containers run (kubelet.go
	// OnPodSandboxReady, from v1.36.3).
	sandboxReadyWrite bool
}{
	kubeversion.V1_34: {listThenWatch: true, legacyReadiness: true, userAgent: "kubelet/v1.34.4 (linux/amd64) stormbench"},
	kubeversion.V1_35: {csiNodeGetsNode: true, userAgent: "kubelet/v1.35.4 (linux/amd64) stormbench"},
	kubeversion.V1_36: {csiNodeGetsNode: true, userAgent: "kubelet/v1.36.3 (linux/amd64) stormbench", sandboxReadyWrite: true},
	kubeversion.V1_37: {csiNodeGetsNode: true, podCertificates: true, podCertificatesAPI: "v1", userAgent: "kubelet/v1.37.2 (linux/amd64) stormbench", sandboxReadyWrite: true},
}

// TestRebootPerVersion: a reboot's status writes per version. Every
// version writes the exited containers first and the running ones with
// PodReadyToStartContainers True; from 1.36 a write in between reports the
// new sandbox ready alone (the containers still exited), one write more
// per pod.
func TestRebootPerVersion(t *testing.T) {
	writes := map[kubeversion.Version]int{}
	for _, v := range kubeversion.Supported() {
		t.Run(v.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				kubelet, _ := kubeletRequests(t, restartCase{name: "reboot", version: v, cfg: func(c *Config) { c.Kind = profiles.StormReboot }})
				sandboxAlone := 0
				for _, s := range kubelet {
					if !strings.HasPrefix(s, "patch pods/status ") {
						continue
					}
					writes[v]++
					if strings.Contains(s, "Sandbox=True") && strings.Contains(s, "exited(") {
						sandboxAlone++
					}
				}
				if (sandboxAlone > 0) != versionFacts[v].sandboxReadyWrite {
					t.Errorf("%d status writes with the new sandbox ready and the containers exited; want them %t", sandboxAlone, versionFacts[v].sandboxReadyWrite)
				}
			})
		})
	}
	// The fixture's four pods: one write each more with the sandbox's own.
	for _, v := range kubeversion.Supported() {
		want := writes[kubeversion.Default]
		if versionFacts[v].sandboxReadyWrite != versionFacts[kubeversion.Default].sandboxReadyWrite {
			want -= 4
		}
		if writes[v] != want {
			t.Errorf("%s: %d pod status writes in a reboot, want %d (%s: %d)", v, writes[v], want, kubeversion.Default, writes[kubeversion.Default])
		}
	}
}

// informerResources are the resources of a starting kubelet's informers
// and reflectors in the restart fixture (restartFixture: one ConfigMap and
// one Secret referenced).
var informerResources = []string{"nodes", "pods", "services", "csidrivers", "runtimeclasses", "configmaps", "secrets"}

// TestRestartPerVersion checks by rule what a kubelet restart sends per
// Kubernetes version, on the fake API server of TestRestartGolden with the
// version's default gates: 1.34 relists with LIST then WATCH (no
// sendInitialEvents), 1.35+ opens watch-list streams (WATCH with
// sendInitialEvents, no LIST); 1.37 adds a PodCertificateRequest
// list-watch by spec.nodeName; 1.34's CSI plugin start GETs no node; 1.34
// resets readiness by default.
func TestRestartPerVersion(t *testing.T) {
	if len(versionFacts) != len(kubeversion.Supported()) {
		t.Fatalf("versionFacts has %d versions, stormbench supports %d: say what the new one sends", len(versionFacts), len(kubeversion.Supported()))
	}
	nodeGETs := map[kubeversion.Version]int{}
	for _, v := range kubeversion.Supported() {
		facts := versionFacts[v]
		t.Run(v.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				kubelet, sim := kubeletRequests(t, restartCase{name: "kubelet", version: v, cfg: func(c *Config) { c.Kind = profiles.StormKubelet }})
				resources := informerResources
				if facts.podCertificates {
					resources = append(slices.Clone(resources), "podcertificaterequests")
				}
				for _, r := range resources {
					checkRelist(t, kubelet, r, facts.listThenWatch)
				}
				pcr := slices.IndexFunc(kubelet, func(s string) bool { return strings.Contains(s, " podcertificaterequests ") })
				switch {
				case facts.podCertificates && pcr < 0:
					t.Error("no PodCertificateRequest list or watch")
				case facts.podCertificates && !strings.Contains(kubelet[pcr], "fieldSelector=spec.nodeName=n1"):
					t.Errorf("%q: want the node's PodCertificateRequests (spec.nodeName=n1)", kubelet[pcr])
				case !facts.podCertificates && pcr >= 0:
					t.Errorf("%q: no PodCertificateRequest informer before 1.37", kubelet[pcr])
				}
				n := 0
				for _, s := range kubelet {
					if s == "get nodes n1" {
						n++
					}
				}
				if facts.csiNodeGetsNode {
					n-- // the CSI plugin's
				}
				nodeGETs[v] = n
				if flips := sim.Counters.ReadyFlipsDown.Load(); (flips > 0) != facts.legacyReadiness {
					t.Errorf("%d Ready=False flips with the default gates, want legacy readiness %t", flips, facts.legacyReadiness)
				}
			})
		})
	}
	// Every version's other node GETs (registration, volume
	// reconstruction) are the same: only the CSI plugin's differ.
	for _, v := range kubeversion.Supported() {
		if nodeGETs[v] != nodeGETs[kubeversion.Default] {
			t.Errorf("%s: %d node GETs besides the CSI plugin's, %s %d", v, nodeGETs[v], kubeversion.Default, nodeGETs[kubeversion.Default])
		}
	}
}

// kubeletRequests plays tc on the fake API server and returns the requests
// the simulated kubelet sent, in order, and its simulator.
func kubeletRequests(t *testing.T, tc restartCase) ([]string, *Simulator) {
	t.Helper()
	api, _, _, out, sim := tc.run(t)
	if out.Err != nil {
		t.Fatalf("%s: %v", tc.name, out.Err)
	}
	api.mu.Lock()
	defer api.mu.Unlock()
	var kubelet []string
	for _, c := range api.calls {
		if c.client == "kubelet" {
			kubelet = append(kubelet, c.text)
		}
	}
	return kubelet, sim
}

// checkRelist checks the initial sync of resource r among a kubelet's
// requests, in order: LIST, then WATCH without sendInitialEvents; or a
// WATCH with sendInitialEvents and no LIST.
func checkRelist(t *testing.T, reqs []string, r string, listThenWatch bool) {
	t.Helper()
	list := slices.IndexFunc(reqs, func(s string) bool { return strings.HasPrefix(s, "list "+r+" ") })
	watch := slices.IndexFunc(reqs, func(s string) bool { return strings.HasPrefix(s, "watch "+r+" ") })
	if watch < 0 {
		t.Errorf("%s: no WATCH", r)
		return
	}
	initial := strings.HasSuffix(reqs[watch], " sendInitialEvents")
	if listThenWatch {
		if list < 0 || list > watch || initial {
			t.Errorf("%s: want LIST then WATCH without sendInitialEvents; list %d (%q), watch %d (%q)", r, list, at(reqs, list), watch, reqs[watch])
		}
		return
	}
	if list >= 0 || !initial {
		t.Errorf("%s: want one WATCH with sendInitialEvents and no LIST; list %d (%q), watch %q", r, list, at(reqs, list), reqs[watch])
	}
}

func at(s []string, i int) string {
	if i < 0 {
		return ""
	}
	return s[i]
}

// TestSessionPerVersion: a simulated kubelet's clients carry its version's
// user agent, and with the PodCertificateRequest gate on (1.37's default)
// its PodCertificateRequest informer lists
// /apis/certificates.k8s.io/<its API version>/podcertificaterequests by
// spec.nodeName, decoding the version's kind; without it there is no such
// client.
func TestSessionPerVersion(t *testing.T) {
	var mu sync.Mutex
	var agents, paths []string
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		agents = append(agents, r.UserAgent())
		paths = append(paths, r.URL.Path+"?"+r.URL.RawQuery)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/podcertificaterequests") {
			gv := strings.TrimPrefix(strings.TrimSuffix(r.URL.Path, "/podcertificaterequests"), "/apis/")
			_, _ = w.Write([]byte(`{"kind":"PodCertificateRequestList","apiVersion":"` + gv + `","metadata":{"resourceVersion":"7"},"items":[{"metadata":{"name":"pcr-1","namespace":"ns"},"spec":{"nodeName":"n1"}}]}`))
			return
		}
		writeStatus(w, http.StatusNotFound, "NotFound")
	}))
	base := startTLS(t, srv, "")
	ctx := context.Background()
	for _, v := range kubeversion.Supported() {
		facts := versionFacts[v]
		t.Run(v.String(), func(t *testing.T) {
			mu.Lock()
			agents, paths = nil, nil
			mu.Unlock()
			sim, err := NewSimulator(Config{Base: base, Harness: fake.NewClientset(), RunID: "run1", Kind: profiles.StormKubelet, Version: v})
			if err != nil {
				t.Fatal(err)
			}
			s, err := sim.sessions("n1")
			if err != nil {
				t.Fatal(err)
			}
			defer s.close()
			_, _ = s.client.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
			_, _ = s.heartbeat.CoordinationV1().Leases(nodeLeaseNamespace).Get(ctx, "n1", metav1.GetOptions{})
			certs := s.lists.(restListWatches).certificates
			if (certs != nil) != facts.podCertificates {
				t.Fatalf("PodCertificateRequest client %v, want one: %t", certs, facts.podCertificates)
			}
			if certs != nil {
				lw := s.lists.listWatch("podcertificaterequests", metav1.NamespaceAll, fields.OneTermEqualSelector("spec.nodeName", "n1"))
				obj, err := lw.List(metav1.ListOptions{ResourceVersion: "0"})
				if err != nil {
					t.Fatalf("listing PodCertificateRequests: %v", err)
				}
				list, ok := obj.(*certificatesv1beta1.PodCertificateRequestList)
				if !ok || len(list.Items) != 1 || list.Items[0].Name != "pcr-1" || list.Items[0].Spec.NodeName != "n1" {
					t.Errorf("PodCertificateRequests decoded as %#v", obj)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			for _, ua := range agents {
				if ua != facts.userAgent {
					t.Errorf("user agent %q, want %q", ua, facts.userAgent)
				}
			}
			if len(agents) < 2 {
				t.Errorf("%d requests seen, want the main and heartbeat clients'", len(agents))
			}
			if facts.podCertificates {
				want := "/apis/certificates.k8s.io/" + facts.podCertificatesAPI + "/podcertificaterequests?fieldSelector=spec.nodeName%3Dn1&resourceVersion=0"
				if !slices.Contains(paths, want) {
					t.Errorf("requests %q: want %s", paths, want)
				}
			}
		})
	}
}

// TestReleaseTable: plan.ReleaseOf agrees with what the sources say
// (versionFacts), the zero Version is the default's, and a version of a
// release stormbench does not know is refused by NewSimulator.
func TestReleaseTable(t *testing.T) {
	for _, v := range kubeversion.Supported() {
		r, facts := plan.ReleaseOf(v), versionFacts[v]
		if r.CSINodeGetsNode != facts.csiNodeGetsNode || r.UserAgent() != facts.userAgent {
			t.Errorf("%s: %+v (user agent %q), want csiNodeGetsNode %t, %q", v, r, r.UserAgent(), facts.csiNodeGetsNode, facts.userAgent)
		}
		if facts.podCertificates && r.PodCertificateAPI != facts.podCertificatesAPI {
			t.Errorf("%s: PodCertificateRequest API %q, want %q", v, r.PodCertificateAPI, facts.podCertificatesAPI)
		}
	}
	if plan.ReleaseOf(kubeversion.Version{}) != plan.ReleaseOf(kubeversion.Default) {
		t.Error("the zero Version is not the default's release")
	}
	_, err := NewSimulator(Config{Base: &rest.Config{}, Harness: fake.NewClientset(), RunID: "r", Kind: profiles.StormKubelet, Version: kubeversion.Version{Minor: 33, Patch: 1}})
	if err == nil || !strings.Contains(err.Error(), "v1.33.1 is not supported") {
		t.Errorf("Kubernetes v1.33.1: %v, want refused", err)
	}
}

// TestGateFixedByVersion: a gate the version's kubelet does not have is
// what that kubelet always does, whatever Config.Gates says (v1.34.4 has no
// ChangeContainerStatusOnKubeletRestart: always legacy); otherwise
// Config.Gates, over the version's defaults.
func TestGateFixedByVersion(t *testing.T) {
	const gate = kubeversion.GateChangeContainerStatusOnKubeletRestart
	for _, tc := range []struct {
		v     kubeversion.Version
		gates map[string]bool
		want  bool
	}{
		{kubeversion.V1_34, nil, true},
		{kubeversion.V1_34, map[string]bool{gate: false}, true},
		{kubeversion.V1_35, nil, false},
		{kubeversion.V1_35, map[string]bool{gate: true}, true},
		{kubeversion.Version{}, nil, false},
	} {
		s := &Simulator{cfg: Config{Version: tc.v, Gates: tc.gates}}
		if got := s.gate(gate); got != tc.want {
			t.Errorf("%s with %v: %s %t, want %t", tc.v, tc.gates, gate, got, tc.want)
		}
	}
	for _, tc := range []struct {
		v    kubeversion.Version
		want bool
	}{{kubeversion.V1_34, false}, {kubeversion.V1_35, true}, {kubeversion.V1_37, true}} {
		s := &Simulator{cfg: Config{Version: tc.v}}
		if got := s.gate(kubeversion.GateWatchListClient); got != tc.want {
			t.Errorf("%s: WatchListClient %t, want %t", tc.v, got, tc.want)
		}
	}
	if s := (&Simulator{cfg: Config{Version: kubeversion.V1_36}}); s.gate(kubeversion.GatePodCertificateRequest) {
		t.Error("v1.36.3: PodCertificateRequest on by default")
	}
}
