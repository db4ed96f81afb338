package calibrate_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stormbench/stormbench/bench"
	"github.com/stormbench/stormbench/bench/calibrate"
	"github.com/stormbench/stormbench/bench/cluster"
	"github.com/stormbench/stormbench/bench/cluster/clustertest"
	"github.com/stormbench/stormbench/bench/realnode"
	"github.com/stormbench/stormbench/profiles"
)

// knownDivergent are the rows where the simulated kubelet is known to
// differ from the real one today, each with the model-fidelity item that
// fixes it. A row listed here may disagree; any other row must agree.
// Rows that are random on both sides (a pod's U(0, probe period) probe
// offset decides them: the last request, a reboot's not-ready times) are
// not listed: their 95 % intervals judge them (interval.go), wide at 2
// nodes a side.
// Remove a row as the model is fixed; never widen a tolerance instead.
// A key "*: metric" covers the metric in every case. The numbers are the
// items of the model-fidelity issue (issue 15).
var knownDivergent = map[string]string{
	"*: kubelet: create events":                   "the hollow kubelet's stub container manager records no NodeAllocatableEnforced, which a kubelet enforcing cgroups (and the model) does: 4 against 5 on a kubelet restart",
	"*: kubelet: patch events":                    "item 9: the real kubelet's event correlator PATCHes a NodeHas* event when it records it twice within a start (0 to 3 per restart, timing-dependent); the model never does",
	"*: kubelet: create leases":                   "structural: the real kubelet's first lease is created about 10 s after its first start (its node was not registered yet), which can fall into the first case",
	"*: kubelet: deletecollection resourceslices": "the hollow kubelet's stub container manager has no DRA manager; the kubelet on containerd wipes its node's ResourceSlices at start, as the model does (TestCalibrationContainerd)",
	"reboot: " + calibrate.MetricLastRequest:      "the hollow kubelet's fake runtime runs a rebooted node's containers sooner than containerd, so its last status write comes earlier: 8.54 s [7.68–9.4] against the model's 12.6 [12.1–13.1] and containerd's 10.9 [9.88–11.9], 5 restarts a side (results/calibration, 2026-12-05); containerd judges reboots, and agrees",
	"reboot: " + calibrate.MetricNotReadyKS:       "the same fake runtime shortens a rebooted pod's not-ready period: hollow's mean 4.39 s [3.52–5.25] against the model's 5.31 [4.71–5.9], KS p 0.017 (results/calibration/hollow.md); containerd judges reboots, and agrees (combined.md)",
	// The model's start follows the kubelet on containerd, which probes the
	// host at start (calibrate.startTimed); the hollow kubelet's stub
	// container manager and fake cAdvisor skip that probing. Two restarts a
	// side judged this row inside or outside from run to run (CI runs of
	// bf40ed0 and 640f137 saw it outside).
	"kubelet/preserve: " + calibrate.MetricLastRequest: "the hollow kubelet skips the host probing a kubelet on containerd does at start, so its last request comes earlier: 1.1 s [1.09–1.12] against the model's 1.42 [1.41–1.43] (results/calibration/hollow.md); containerd, 1.32 [1.3–1.35], judges it (combined.md, TestCalibrationContainerd)",
}

// knownDivergentContainerd are the rows where the simulated kubelet is
// known to differ from the kubelet on containerd (real containers, real
// cAdvisor, real exec probes), measured in results/calibration/2026-12-02/containerd.md (in git history).
var knownDivergentContainerd = map[string]string{
	"*: kubelet: create leases":                   knownDivergent["*: kubelet: create leases"],
	"*: kubelet: patch events":                    knownDivergent["*: kubelet: patch events"],
	"runtime/refused: kubelet: get pods":          "the kubelet on containerd wrote one pod's status after the runtime came back in one of three runs (GET + PATCH; not explained), none in the other two",
	"runtime/refused: kubelet: patch pods/status": "as get pods above",
}

// raceOnReal are the kubelet/legacy rows a millisecond race decides on the
// real side. A legacy flip lasts about 13 ms (prober/worker.go sets the
// initial Failure and then the first Success within one probe), so a real
// kubelet writes Ready once, with no flip, when both land before the status
// manager's sync of the pod (status_manager.go syncBatch reads the latest
// cached status), and an endpoint controller sees no change when both
// updates fall into one sync of its Service. Either only lowers the real
// count: the CI run of stop 20 saw 4.5 flips and 8 writes per restart
// against the model's 5 and 10; results/calibration (10 pods a case) saw 5
// and 10 to 10.5. So these rows check one side: the real count may fall
// below the model's by the race, never by more than half, and may not rise
// above it beyond tolerance.
// The reboot's controller writes race the same way when the endpoint
// controllers merge two pods' updates into one sync of the Service
// (measured once on the kubelet on containerd: 12 writes against 15).
// So do the reboot's own status writes. The new sandbox's
// PodReadyToStartContainers=True is set from a goroutine
// (kubelet.go OnPodSandboxReady), and the running containers come with
// the next SyncPod, after a PLEG relist, 0.2 to 0.6 s later. The status
// manager has one goroutine per kubelet, syncs each pod's latest status
// (status_manager.go syncBatch), and GETs before each PATCH. When it is
// behind by more than that gap, the two statuses go out as one write. The
// model writes them apart, which is what an unloaded kubelet on containerd
// does: 20 writes against 20 at 2026-12-02 04:57. The CI run of stop 24
// saw 15.5 against 20, with other packages' clusters on the same two cores.
// The hollow kubelet saw 15 to 19 in five runs.
var raceOnReal = map[string]bool{
	"reboot: kubelet: get pods":                               true,
	"reboot: kubelet: patch pods/status":                      true,
	"reboot: endpoint-controller: update endpoints":           true,
	"reboot: endpointslice-controller: update endpointslices": true,
	"reboot: " + calibrate.MetricSliceWrites:                  true,
	// The controllers' status writes follow the pods' readiness writes:
	// fewer of those, fewer of these (a run of 2026-12-05 saw 9 against 10
	// ReplicaSet status writes with 15.5 pod status writes against 20).
	"reboot: replicaset-controller: update replicasets/status":         true,
	"reboot: deployment-controller: update deployments/status":         true,
	"kubelet/legacy: deployment-controller: update deployments/status": true,
	"kubelet/legacy: endpoint-controller: update endpoints":            true,
	"kubelet/legacy: endpointslice-controller: update endpointslices":  true,
	"kubelet/legacy: replicaset-controller: update replicasets/status": true,
	"kubelet/legacy: " + calibrate.MetricSliceWrites:                   true,
	"kubelet/legacy: " + calibrate.MetricReadyFlips:                    true,
	// A flip the real side coalesced (its Failure and Success before the
	// status manager's first sync of the pod) is one status write fewer:
	// the fresh-clone run of ec1cda5 saw 4 flips against 5 and 9 writes
	// against 10.
	"kubelet/legacy: kubelet: patch pods/status": true,
}

// statusRaceOnReal are rows where a real kubelet sometimes sends more than
// the model by a known mechanism the model does not draw, with the most it
// adds per restart. When a refused runtime comes back, the node status
// loop (every 10 s) and the runtime check (kubelet.go updateRuntimeUp,
// every 5 s) each find it on their own ticks. A status sync that comes
// first gets the runtime's version again (nodestatus/setters.go
// VersionInfo) while the runtime still counts as down (its last successful
// check is older than 30 s), so it PATCHes the version with the node still
// NotReady, and the next sync PATCHes Ready: 4 node-status writes where
// the model, which reports the version and Ready in one, writes 3. The
// kubelet on containerd wrote 4 per restart (2 restarts) in both runs of
// 2026-12-04, and 3 in earlier runs: more often than the tick phases alone
// explain, so something on containerd's side (its start, or the CRI
// client's reconnect back-off) may widen the window; not yet read from a
// kubelet log. These rows may exceed the model's by at most that many per
// restart (plus tolerance), never fall below it.
var statusRaceOnReal = map[string]float64{
	"runtime/refused: kubelet: patch nodes/status": 1,
}

// exceedsByAtMost reports whether a row's real count lies between the
// model's and the model's plus extra, each widened by the tolerance: the
// bound of a race that only adds requests on the real side.
func exceedsByAtMost(r calibrate.Row, extra float64) bool {
	slack := max(0.5, 0.2*r.Simulated)
	return r.Real >= r.Simulated-slack && r.Real <= r.Simulated+extra+slack
}

// plegRaceRows are the rows a real kubelet's NotReady at start raises
// (calibrate.MetricStartFlashes: its first node status beat its first PLEG
// relist, kubelet.go Run): its own NotReady and Ready node-status writes
// and event, the node Ready transitions, and the node-lifecycle
// controller's not-ready taints (NoSchedule and NoExecute, each added and
// removed) and its events (the node's, and a cancelled eviction per pod).
// In a case where the harness saw that flash on a real node, these rows
// may exceed the model's by up to plegFlashCost per flash, never fall
// below it. The node-lifecycle controller's events are created, or
// patched when the same event exists already from an earlier flash of the
// node (client-go's event correlator, tools/record/events_cache.go): a
// make test of 2026-12-05 saw 5 patches per restart in kubelet/preserve
// and reboot, every real restart having flashed.
var plegRaceRows = map[string]bool{
	calibrate.MetricNodeTransitions:  true,
	"kubelet: patch nodes/status":    true,
	"kubelet: create events":         true,
	"node-controller: patch nodes":   true,
	"node-controller: create events": true,
	"node-controller: patch events":  true,
}

// plegFlashDelay bounds how much later than the model's a real kubelet's
// last request may come after a start flash: it reports Ready at its next
// node status update (nodeStatusUpdateFrequency, 10 s;
// kubelet_node_status.go), where the model, which does not flash, sent its
// last request at start; 2 s more for the update's jitter and the
// harness's resolution. Seen: kubelet/preserve, real 10.9 s, simulated
// 1.23 s, one flash per restart.
const plegFlashDelay = 12.0

// plegRaceLastRequest reports whether the last-request row is within what
// the real side's start flashes explain: later than the model's by at most
// plegFlashDelay, never earlier.
func plegRaceLastRequest(r calibrate.Row, flashes float64) bool {
	return flashes > 0 && r.Real >= r.Simulated && r.Real <= r.Simulated+plegFlashDelay
}

// plegFlashCost bounds what one start flash adds to a plegRaceRows row on a
// node with pods pods.
func plegFlashCost(pods int) float64 { return float64(4 + pods) }

// plegRaceBounded reports whether a plegRaceRows row is within its bounds
// given the case's start flashes per restart on the real side.
func plegRaceBounded(r calibrate.Row, flashes float64, pods int) bool {
	return flashes > 0 && exceedsByAtMost(r, flashes*plegFlashCost(pods))
}

// raceBounded reports whether a raceOnReal row is within its bounds: real
// in [simulated/2, simulated + max(0.5, 20 %)]. On a host-bound case the
// model's status manager can fall behind as the real one does (it batches
// as syncBatch does, statusmanager.go), and coalesce writes the real side
// made apart: the CI run of stop 57, host saturated 13 of 60 s, saw the
// reboot's status writes at 20 real against 17 simulated, endpoint writes
// 15 against 12 and ReplicaSet status writes 10 against 8. There the race
// may fall on either side: each side at least half the other.
func raceBounded(r calibrate.Row, hostBound bool) bool {
	if hostBound {
		return r.Real >= r.Simulated/2 && r.Simulated >= r.Real/2
	}
	slack := max(0.5, 0.2*r.Simulated)
	return r.Real >= r.Simulated/2 && r.Real <= r.Simulated+slack
}

// hostBound reports whether the named case ran on a host-bound machine
// (calibrate.CaseHost.Bound).
func hostBound(res *calibrate.Result, caseName string) bool {
	for _, c := range res.Cases {
		if c.Name == caseName {
			return c.Host != nil && c.Host.Bound
		}
	}
	return false
}

// knownToDiverge reports the known-divergence reason of "case: metric" in
// known.
func knownToDiverge(known map[string]string, row string) (string, bool) {
	if why, ok := known[row]; ok {
		return why, true
	}
	_, metric, _ := strings.Cut(row, ": ")
	why, ok := known["*: "+metric]
	return why, ok
}

// TestCalibration runs the oracle in CI: 2 real (hollow) kubelets and 2
// simulated ones, kubelet restart with both gate values and a reboot, and
// fails when the simulated kubelet diverges beyond tolerance on a row not
// known to diverge.
func TestCalibration(t *testing.T) {
	calibrationTest(t, calibrate.BackendHollow, []string{"kubelet/legacy", "kubelet/preserve", "reboot"}, knownDivergent)
}

// TestCalibrationContainerd runs the oracle on the kubelet itself with a
// containerd of its own (real containers): the reference for the runtime
// restart and the reboot. Its first case's pods have HTTP probes (the
// kubelet dials the pods' own server), the rest are rolled to exec probes
// before kubelet/preserve; kubelet/exited kills one container per node
// while the kubelet is down. Without root or the packages it skips, saying
// what is missing; under CI=true it fails instead.
func TestCalibrationContainerd(t *testing.T) {
	calibrationTest(t, calibrate.BackendContainerd, []string{"kubelet/legacy+http", "kubelet/preserve", "kubelet/exited", "runtime/refused", "reboot"}, knownDivergentContainerd)
}

// TestCalibrationBusyStatusManager runs kubelet/legacy with both sides'
// kubelets at kubeAPIQPS 2, burst 2: every pod GET and status PATCH waits
// for a token, so the status manager is busy for most of the probes' first
// period, and a flip whose Failure and Success come while it is busy never
// reaches the API server (status_manager.go syncBatch writes the latest
// status). Measured on both backends (results/calibration, 3 + 3 nodes, 8
// pods): 0.33 and 0 flips per restart of 8 probed pods, and the model 0.33
// and 0; the model without the busy rule flipped all 8. Asserted: both
// sides flip fewer than half the probed pods, and the status writes agree.
// It runs a reboot the same way: the status writes agree, and both sides
// write fewer than 3 per pod where an idle status manager writes 4.
func TestCalibrationBusyStatusManager(t *testing.T) {
	const nodes, pods = 3, 8
	res := runCalibration(t, calibrate.BackendHollow, []string{"kubelet/legacy", "reboot"}, nodes, pods, 2)
	// The few flips that get through are random on both sides (a probe
	// that comes while the status manager is idle): bounded, not compared.
	// Without the busy rule the model flipped every probed pod, with two
	// EndpointSlice writes each.
	for metric, bound := range map[string]float64{calibrate.MetricReadyFlips: pods / 2, calibrate.MetricSliceWrites: pods} {
		row, ok := res.Row("kubelet/legacy", metric)
		if !ok {
			t.Fatalf("no %q row", metric)
		}
		if row.Real >= bound || row.Simulated >= bound {
			t.Errorf("%s per restart: real %v, simulated %v; want both below %v with a busy status manager", metric, row.Real, row.Simulated, bound)
		}
	}
	for _, c := range []string{"kubelet/legacy", "reboot"} {
		for _, metric := range []string{"kubelet: patch pods/status", "kubelet: get pods"} {
			row, ok := res.Row(c, metric)
			if !ok {
				t.Fatalf("%s: no %q row", c, metric)
			}
			if !row.Agree {
				t.Errorf("%s: %s per restart: real %v, simulated %v", c, metric, row.Real, row.Simulated)
			}
		}
	}
	// A reboot hands the status manager four statuses per pod (restartPod);
	// one that keeps up writes them all (the default calibration: 20 per
	// 5-pod restart). Behind by its first batch (8 pods' GET and PATCH at
	// QPS 2), it writes what came meanwhile as one: measured 2 to 2.2 writes
	// per pod on the hollow kubelet, the kubelet on containerd and the
	// model alike, where the model before its batching status manager
	// wrote 4.
	row, ok := res.Row("reboot", "kubelet: patch pods/status")
	if !ok {
		t.Fatal("reboot: no patch pods/status row")
	}
	if bound := 3.0 * pods; row.Real >= bound || row.Simulated >= bound {
		t.Errorf("reboot: patch pods/status per restart: real %v, simulated %v; want both below %v (3 per pod) with a busy status manager", row.Real, row.Simulated, bound)
	}
}

func calibrationTest(t *testing.T, backend string, caseNames []string, known map[string]string) {
	const pods = 5
	res := runCalibration(t, backend, caseNames, 2, pods, 0)
	checkCalibration(t, res, caseNames, known, pods)
}

// runCalibration runs the cases on an embedded cluster of the test's own,
// nodes real and as many simulated with pods each, both sides' kubelets
// at kubeAPIQPS and kubeAPIBurst qps (0: the defaults), and logs the
// tables. It fails the test when the run fails or leaves real-node
// processes behind.
func runCalibration(t *testing.T, backend string, caseNames []string, nodes, pods, qps int) *calibrate.Result {
	t.Helper()
	// As stormbench calibrate starts its cluster (calibrate.NodeEvictionRate).
	p := &profiles.Profile{Timing: profiles.Timing{NodeEvictionRate: calibrate.NodeEvictionRate}}
	c := clustertest.Start(t, p, clustertest.WithAuditLog())
	comps := c.Components()
	if err := comps.CheckRealNodes(); err != nil {
		t.Fatal(err)
	}
	if backend == calibrate.BackendContainerd {
		if err := realnode.CheckContainerdHost(comps); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("CI=true: %v", err)
			}
			t.Skip(err)
		}
	}
	cases, err := calibrate.SelectCases(caseNames)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	o := calibrate.Options{
		Target: c.Target, Embedded: c.Embedded, RunID: "calt",
		Nodes: nodes, PodsPerNode: pods, ProbePeriod: 10 * time.Second, Cases: cases,
		Tolerance: calibrate.DefaultTolerance(), Seed: 1, KeepObjects: true, Logf: t.Logf, Backend: backend,
		KubeAPIQPS: qps, KubeAPIBurst: qps,
	}
	o.Model = bench.CalibrationModel(o)
	res, err := calibrate.Run(ctx, o)
	if res != nil {
		var b strings.Builder
		_ = calibrate.WriteText(&b, res)
		t.Log("\n" + b.String())
	}
	if err != nil {
		t.Fatalf("calibration: %v\n%s", err, c.LogTail("kube-apiserver", 20))
	}
	// Nothing of the real nodes survives the run.
	if pids, _ := filepath.Glob(filepath.Join(c.Dir(), cluster.RealNodesDir, "*", "*.pid")); len(pids) > 0 {
		t.Errorf("real-node processes left running: %v", pids)
	}
	for _, cr := range res.Cases {
		if cr.Restarts.Real != nodes || cr.Restarts.Simulated != nodes || len(cr.Errors) > 0 {
			t.Errorf("%s: restarts real %d simulated %d, errors %v", cr.Name, cr.Restarts.Real, cr.Restarts.Simulated, cr.Errors)
		}
		// The host was sampled over the case's window (host.go).
		if cr.Host == nil || cr.Host.WindowSeconds < (cr.Downtime+cr.Observe).Seconds()/2 {
			t.Errorf("%s: host figures %+v, want the case's window sampled", cr.Name, cr.Host)
		}
	}
	return res
}

// checkCalibration fails the test for every row outside tolerance that is
// neither a bounded race on the real side nor a known divergence.
func checkCalibration(t *testing.T, res *calibrate.Result, caseNames []string, known map[string]string, pods int) {
	t.Helper()
	cases, err := calibrate.SelectCases(caseNames)
	if err != nil {
		t.Fatal(err)
	}
	// The oracle really ran: a restarting real kubelet re-lists its pods
	// and registers its node (kubelet_node_status.go registerWithAPIServer).
	for _, cs := range cases {
		if cs.Kind == "runtime" {
			// The kubelet keeps running: its node goes NotReady and back.
			if row, _ := res.Row(cs.Name, calibrate.MetricNodeTransitions); row.Real < 1 {
				t.Errorf("%s: real nodes made %v Ready transitions per restart, want NotReady and back", cs.Name, row.Real)
			}
			continue
		}
		for _, metric := range []string{"kubelet: watch pods", "kubelet: create nodes"} {
			if row, ok := res.Row(cs.Name, metric); !ok || row.Real < 1 {
				t.Errorf("%s: real kubelets sent no %q (row %+v)", cs.Name, metric, row)
			}
		}
	}
	// With the legacy gate the probed pods of a real kubelet go not ready
	// and back (prober/worker.go); with the 1.36 default none does. (Not
	// every pod: when the prober's Failure and Success both land before
	// the status manager's first sync of a pod, it writes Ready once.)
	for _, cs := range cases {
		switch base, _, _ := strings.Cut(cs.Name, "+"); base {
		case "kubelet/legacy":
			if row, _ := res.Row(cs.Name, calibrate.MetricReadyFlips); row.Real < 1 {
				t.Errorf("%s: real ready flips %v per restart, want at least 1", cs.Name, row.Real)
			}
		case "kubelet/preserve":
			if row, _ := res.Row(cs.Name, calibrate.MetricReadyFlips); row.Real != 0 {
				t.Errorf("%s: real ready flips %v per restart, want 0", cs.Name, row.Real)
			}
		}
	}
	for _, dis := range res.Disagreements() {
		// A case with network probes ("kubelet/legacy+http") races as its
		// exec case does: the races above are the kubelet's, not the
		// probe's. d names the exec case for the lookups; the row itself
		// is read from its own case.
		caseName, metric, _ := strings.Cut(dis, ": ")
		base, _, _ := strings.Cut(caseName, "+")
		d := base + ": " + metric
		if plegRaceRows[metric] {
			flash, _ := res.Row(caseName, calibrate.MetricStartFlashes)
			if row, _ := res.Row(caseName, metric); plegRaceBounded(row, flash.Real, pods) {
				t.Logf("PLEG start race on the real side: %s (real %v, simulated %v, %v flashes per restart)", dis, row.Real, row.Simulated, flash.Real)
				continue
			}
		}
		if metric == calibrate.MetricLastRequest {
			flash, _ := res.Row(caseName, calibrate.MetricStartFlashes)
			if row, _ := res.Row(caseName, metric); plegRaceLastRequest(row, flash.Real) {
				t.Logf("PLEG start race on the real side: %s (real %v s, simulated %v s, %v flashes per restart)", dis, row.Real, row.Simulated, flash.Real)
				continue
			}
		}
		if extra, ok := statusRaceOnReal[d]; ok {
			if row, _ := res.Row(caseName, metric); exceedsByAtMost(row, extra) {
				t.Logf("status race on the real side: %s (real %v, simulated %v, at most %v more per restart)", dis, row.Real, row.Simulated, extra)
				continue
			}
		}
		if raceOnReal[d] {
			row, _ := res.Row(caseName, metric)
			if raceBounded(row, hostBound(res, caseName)) {
				t.Logf("race on the real side: %s (real %v, simulated %v)", dis, row.Real, row.Simulated)
				continue
			}
			t.Errorf("simulated kubelet diverges beyond the legacy race: %s (real %v, simulated %v)", dis, row.Real, row.Simulated)
			continue
		}
		if why, ok := knownToDiverge(known, d); ok {
			t.Logf("known divergence: %s (%s)", dis, why)
			continue
		}
		t.Errorf("simulated kubelet diverges from the real one: %s", dis)
	}
	if os.Getenv("STORMBENCH_CALIBRATION_MD") != "" {
		f, err := os.Create(os.Getenv("STORMBENCH_CALIBRATION_MD"))
		if err == nil {
			_ = calibrate.WriteMarkdown(f, res)
			f.Close()
		}
	}
}

func TestPLEGRaceBounded(t *testing.T) {
	for _, tc := range []struct {
		real, sim, flashes float64
		want               bool
	}{
		{1, 0, 0.5, true},  // the flash of one of two real nodes: NotReady and back
		{2, 0, 0.5, true},  // node-controller: two taints added and removed
		{1, 0, 0, false},   // no flash seen: the row must agree
		{0, 1, 0.5, false}, // the model may not exceed the real side
		{5, 0, 0.5, true},  // 4 + 5 pods per flash, half a flash per restart
		{5.5, 0, 0.5, false},
	} {
		if got := plegRaceBounded(calibrate.Row{Real: tc.real, Simulated: tc.sim}, tc.flashes, 5); got != tc.want {
			t.Errorf("plegRaceBounded(real %v, sim %v, flashes %v) = %v, want %v", tc.real, tc.sim, tc.flashes, got, tc.want)
		}
	}
}

func TestPLEGRaceLastRequest(t *testing.T) {
	for _, tc := range []struct {
		real, sim, flashes float64
		want               bool
	}{
		{10.9, 1.23, 1, true},  // kubelet/preserve, make test of 2026-12-05
		{10.9, 1.23, 0, false}, // no flash seen: the row must agree
		{1.0, 1.23, 1, false},  // the real side may not come earlier
		{13.5, 1.23, 1, false}, // more than one status period later
	} {
		if got := plegRaceLastRequest(calibrate.Row{Real: tc.real, Simulated: tc.sim}, tc.flashes); got != tc.want {
			t.Errorf("plegRaceLastRequest(real %v, sim %v, flashes %v) = %v, want %v", tc.real, tc.sim, tc.flashes, got, tc.want)
		}
	}
}

func TestRaceBounded(t *testing.T) {
	for _, tc := range []struct {
		real, sim float64
		hostBound bool
		want      bool
	}{
		{10, 10, false, true},
		{8, 10, false, true},    // the stop-20 CI run: one flip skipped, one coalesced
		{5, 10, false, true},    // half the flips lost to the race
		{4.5, 10, false, false}, // more than the race can take
		{12, 10, false, true},   // within tolerance above
		{12.5, 10, false, false},
		{0.5, 0, false, true}, // absolute slack of 0.5
		{1, 0, false, false},
		{15, 12, false, false}, // the model coalesced on a host that was not saturated
		{15, 12, true, true},   // the stop-57 CI run's reboot, host-bound
		{10, 8, true, true},
		{20, 9.5, true, false}, // more than the race can take, on either side
		{4.5, 10, true, false},
	} {
		if got := raceBounded(calibrate.Row{Real: tc.real, Simulated: tc.sim}, tc.hostBound); got != tc.want {
			t.Errorf("raceBounded(real %v, sim %v, host-bound %v) = %v, want %v", tc.real, tc.sim, tc.hostBound, got, tc.want)
		}
	}
}

func TestExceedsByAtMost(t *testing.T) {
	for _, tc := range []struct {
		real, sim, extra float64
		want             bool
	}{
		{3, 3, 1, true},
		{4, 3, 1, true},   // 2026-12-04: 4 on average over 2 restarts
		{3.5, 3, 1, true}, // one of two
		{4.6, 3, 1, true}, // the tolerance on top
		{4.7, 3, 1, false},
		{2.4, 3, 1, true}, // below by the tolerance
		{2.3, 3, 1, false},
		{5, 3, 2, true},
	} {
		if got := exceedsByAtMost(calibrate.Row{Real: tc.real, Simulated: tc.sim}, tc.extra); got != tc.want {
			t.Errorf("exceedsByAtMost(real %v, sim %v, extra %v) = %v, want %v", tc.real, tc.sim, tc.extra, got, tc.want)
		}
	}
}
