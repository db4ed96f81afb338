package calibrate_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stormbench/stormbench/bench/calibrate"
	"github.com/stormbench/stormbench/bench/cluster"
	"github.com/stormbench/stormbench/bench/cluster/clustertest"
)

// knownDivergent are the rows where the simulated kubelet is known to
// differ from the real one today, each with the model-fidelity item that
// fixes it. A row listed here may disagree; any other row must agree.
// Remove a row as the model is fixed; never widen a tolerance instead.
// A key "*: metric" covers the metric in every case. The numbers are the
// items of the model-fidelity issue (issue 15).
var knownDivergent = map[string]string{
	"*: kubelet: get pods":                                    "item 2: the model GETs twice per pod with either gate; the real status manager once per sync (1 per pod preserved, about 3 per probed pod legacy, about 2.75 after a reboot)",
	"*: kubelet: create events":                               "item 9: the real kubelet's event correlator PATCHes a repeated event (its count) and records per-pod events; the model creates a fixed set",
	"*: kubelet: patch events":                                "item 9: as above",
	"*: kubelet: get nodes":                                   "item 8: the real kubelet GETs its node again for CSINode initialisation and volume reconstruction",
	"*: kubelet: get csinodes":                                "item 8: CSINode initialisation is 2 GETs, not 1",
	"*: kubelet: create csinodes":                             "item 8: the real CSINode exists after the first start and is not created again",
	"*: kubelet: patch nodes/status":                          "item 6: the model PATCHes NotReady then Ready; the real node status stays Ready and is PATCHed once",
	"*: node Ready transitions":                               "item 6: the real node never leaves Ready on a kubelet restart or a short reboot",
	"*: node-controller: patch nodes":                         "item 6: follows the model's NotReady flash (not-ready taint on and off)",
	"*: node-controller: create events":                       "item 6: follows the model's NotReady flash",
	"*: node-controller: patch events":                        "item 6: follows the model's NotReady flash",
	"*: kubelet: update leases":                               "structural: a real kubelet renews its lease as the node for its whole life; a simulated node hands heartbeats back to KWOK (not node identity) once Ready",
	"*: kubelet: create leases":                               "structural: as above; the real kubelet re-creates a lease it cannot find",
	"kubelet/legacy: " + calibrate.MetricNotReadyP50:          "item 1: the real legacy flip lasts one status-manager round trip (about 10 ms); the model's lasts seconds",
	"kubelet/legacy: " + calibrate.MetricNotReadyMax:          "item 1: as above",
	"kubelet/legacy: " + calibrate.MetricLastRequest:          "item 1: both sides' last write lands at a random point of the probe period",
	"kubelet/preserve: " + calibrate.MetricLastRequest:        "items 1 and 2: the real kubelet is done in about 1 s with readiness preserved; the model syncs over a probe period",
	"reboot: kubelet: patch pods/status":                      "item 14: the real kubelet writes about 2.75 statuses per pod after a reboot, the model 2",
	"reboot: endpoint-controller: update endpoints":           "item 14: follows the pod status writes",
	"reboot: endpointslice-controller: update endpointslices": "item 14: follows the pod status writes",
	"reboot: " + calibrate.MetricSliceWrites:                  "item 14: follows the pod status writes",
	"reboot: " + calibrate.MetricLastRequest:                  "item 14: the reboot's status writes end at a random point of the probe period",
}

// knownToDiverge reports the known-divergence reason of "case: metric".
func knownToDiverge(row string) (string, bool) {
	if why, ok := knownDivergent[row]; ok {
		return why, true
	}
	_, metric, _ := strings.Cut(row, ": ")
	why, ok := knownDivergent["*: "+metric]
	return why, ok
}

// TestCalibration runs the oracle in CI: 2 real (hollow) kubelets and 2
// simulated ones, kubelet restart with both gate values and a reboot, and
// fails when the simulated kubelet diverges beyond tolerance on a row not
// known to diverge.
func TestCalibration(t *testing.T) {
	c := clustertest.Start(t, nil, clustertest.WithAuditLog())
	comps := c.Components()
	if err := comps.CheckRealNodes(); err != nil {
		t.Fatal(err)
	}
	cases, err := calibrate.SelectCases([]string{"kubelet/legacy", "kubelet/preserve", "reboot"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	res, err := calibrate.Run(ctx, calibrate.Options{
		Target: c.Target, Embedded: c.Embedded, Components: comps, RunID: "calt",
		Nodes: 2, PodsPerNode: 4, ProbePeriod: 10 * time.Second, Cases: cases,
		Tolerance: calibrate.DefaultTolerance(), Seed: 1, KeepObjects: true, Logf: t.Logf,
	})
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
		if cr.Restarts.Real != 2 || cr.Restarts.Simulated != 2 || len(cr.Errors) > 0 {
			t.Errorf("%s: restarts real %d simulated %d, errors %v", cr.Name, cr.Restarts.Real, cr.Restarts.Simulated, cr.Errors)
		}
	}
	// The oracle really ran: a restarting real kubelet re-lists its pods
	// and registers its node (kubelet_node_status.go registerWithAPIServer).
	for _, name := range []string{"kubelet/legacy", "kubelet/preserve", "reboot"} {
		for _, metric := range []string{"kubelet: watch pods", "kubelet: create nodes"} {
			if row, ok := res.Row(name, metric); !ok || row.Real < 1 {
				t.Errorf("%s: real kubelets sent no %q (row %+v)", name, metric, row)
			}
		}
	}
	// With the legacy gate the probed pods of a real kubelet go not ready
	// and back (prober/worker.go); with the 1.36 default none does. (Not
	// every pod: when the prober's Failure and Success both land before
	// the status manager's first sync of a pod, it writes Ready once.)
	if row, _ := res.Row("kubelet/legacy", calibrate.MetricReadyFlips); row.Real < 1 {
		t.Errorf("kubelet/legacy: real ready flips %v per restart, want at least 1", row.Real)
	}
	if row, _ := res.Row("kubelet/preserve", calibrate.MetricReadyFlips); row.Real != 0 {
		t.Errorf("kubelet/preserve: real ready flips %v per restart, want 0", row.Real)
	}
	for _, d := range res.Disagreements() {
		if why, ok := knownToDiverge(d); ok {
			t.Logf("known divergence: %s (%s)", d, why)
			continue
		}
		t.Errorf("simulated kubelet diverges from the real one: %s", d)
	}
	if os.Getenv("STORMBENCH_CALIBRATION_MD") != "" {
		f, err := os.Create(os.Getenv("STORMBENCH_CALIBRATION_MD"))
		if err == nil {
			_ = calibrate.WriteMarkdown(f, res)
			f.Close()
		}
	}
}
