package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stormbench/stormbench/bench/calibrate"
)

// fakeBinDir makes a bin directory with every component present (empty
// executables): enough for the checks calibrate runs before it starts
// anything.
func fakeBinDir(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestCalibrateBadInput: every bad input exits 2 with a message naming
// it, before any cluster starts; --list-cases and --dry-run exit 0.
func TestCalibrateBadInput(t *testing.T) {
	control := []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "etcd", "kwok", "kwokctl", "kubectl"}
	full := fakeBinDir(t, append(control, "hollow-kubelet", "fake-cri")...)
	noOracle := fakeBinDir(t, control...)
	out := t.TempDir()
	existing := filepath.Join(out, "exists.json")
	if err := os.WriteFile(existing, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"zero nodes", []string{"--nodes", "0", "--bin-dir", full}, 2, "nodes: 0"},
		{"too many nodes", []string{"--nodes", "17", "--bin-dir", full}, 2, "between 1 and 16"},
		{"no pods", []string{"--pods-per-node", "0", "--bin-dir", full}, 2, "pods per node"},
		{"unknown case", []string{"--cases", "kubelet/legacy,kubelet/fast", "--bin-dir", full}, 2, "unknown calibration case kubelet/fast"},
		{"negative tolerance", []string{"--tolerance-requests", "-1", "--bin-dir", full}, 2, "tolerance"},
		{"bad output format", []string{"-o", "xml", "--bin-dir", full}, 2, "xml"},
		{"result exists", []string{"--result", existing, "--bin-dir", full}, 2, "--force"},
		{"result directory missing", []string{"--markdown", filepath.Join(out, "no", "such.md"), "--bin-dir", full}, 2, "does not exist"},
		{"oracle binaries missing", []string{"--bin-dir", noOracle}, 2, "make components"},
		{"arguments", []string{"extra", "--bin-dir", full}, 2, "no arguments"},
		{"http probes on hollow", []string{"--cases", "kubelet/legacy,reboot+http", "--bin-dir", full}, 2, "case reboot+http: http probes need --backend containerd"},
		{"list cases", []string{"--list-cases"}, 0, "runtime/hung"},
		{"killed containers on hollow", []string{"--cases", "kubelet/exited", "--bin-dir", full}, 2, "case kubelet/exited kills containers: needs --backend containerd"},
		{"list the killed containers", []string{"--list-cases"}, 0, "kubelet/exited         kubelet  down 6s   watched 24s after (ChangeContainerStatusOnKubeletRestart=false, 1 container per node killed while down)"},
		{"list network cases", []string{"--list-cases"}, 0, "reboot+tcp             reboot   down 20s  watched 40s after (ChangeContainerStatusOnKubeletRestart=false, tcp probes)"},
		{"hollow runs exec cases by default", []string{"--dry-run", "--bin-dir", full}, 0, "cases kubelet/legacy, kubelet/preserve, runtime/refused, runtime/hung, reboot, kubelet/deleted (storm"},
		{"dry run", []string{"--dry-run", "--bin-dir", full, "--cases", "reboot"}, 0, "Would calibrate 2 real and 2 simulated nodes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, append([]string{"calibrate"}, tc.args...)...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, stdout, stderr)
			}
			if !strings.Contains(stdout+stderr, tc.want) {
				t.Errorf("output does not say %q:\nstdout: %s\nstderr: %s", tc.want, stdout, stderr)
			}
		})
	}
}

// oldCalibration is a table judged by an older rule: kubelet/preserve's
// last request, the model 0.7 s before the real kubelet on every restart,
// once read "ok".
const oldCalibration = `{"apiVersion": "stormbench.io/v1alpha1", "kind": "CalibrationResult", "schemaVersion": 1,
 "start": "2026-12-05T20:33:06Z", "end": "2026-12-05T20:40:31Z", "complete": true, "kubeVersion": "v1.36.3",
 "nodes": 4, "podsPerNode": 5, "probePeriod": "10s", "initDuration": "0s",
 "tolerance": {"requestsAbsolute": 0.5, "requestsRelative": 0.1, "secondsAbsolute": 0.2, "secondsRelative": 0.1},
 "realNodes": ["r0", "r1", "r2", "r3"], "simulatedNodes": ["s0", "s1", "s2", "s3"],
 "cases": [{"name": "kubelet/preserve", "kind": "kubelet", "downtime": 5000000000, "observe": 25000000000,
  "restarts": {"real": 4, "simulated": 4},
  "rows": [{"metric": "kubelet start → last request", "unit": "s", "real": 1.88, "simulated": 1.15, "agree": true, "rule": "shift",
   "realSpread": {"n": 4, "min": 1.87, "max": 1.89, "values": [1.87, 1.88, 1.88, 1.89]},
   "simulatedSpread": {"n": 4, "min": 1.14, "max": 1.16, "values": [1.14, 1.15, 1.15, 1.16]}}]}]}`

// TestCalibrateRejudge: a table judged "ok" by an older rule is judged
// again by this one and exits 1 naming the row; bad input exits 2.
func TestCalibrateRejudge(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "old.json")
	if err := os.WriteFile(in, []byte(oldCalibration), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "new.json")
	code, stdout, stderr := runCLI(t, "calibrate", "rejudge", in, "--result", out)
	if code != 1 || !strings.Contains(stdout, "DIFFERS (shift -0.73 s") || !strings.Contains(stderr, "kubelet/preserve: kubelet start → last request") {
		t.Errorf("exit %d, want 1 naming the row\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if _, err := os.Stat(out); err != nil {
		t.Errorf("rejudged result not written: %v", err)
	}
	for _, args := range [][]string{{}, {in, in}, {filepath.Join(dir, "missing.json")}} {
		if code, _, stderr := runCLI(t, append([]string{"calibrate", "rejudge"}, args...)...); code != 2 {
			t.Errorf("rejudge %q: exit %d, want 2 (%s)", args, code, stderr)
		}
	}
}

// TestCalibratePool: two rounds pooled into one table of both rounds'
// restarts, judged again; rounds of different set-ups, or one round, exit 2.
func TestCalibratePool(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	other := filepath.Join(dir, "v137.json")
	for p, doc := range map[string]string{a: oldCalibration, b: oldCalibration,
		other: strings.Replace(oldCalibration, `"kubeVersion": "v1.36.3"`, `"kubeVersion": "v1.37.2"`, 1)} {
		if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "pooled.json")
	code, stdout, stderr := runCLI(t, "calibrate", "pool", a, b, "--result", out)
	if code != 1 || !strings.Contains(stdout, "in each of 2 rounds") || !strings.Contains(stdout, "restarts real 8, simulated 8") {
		t.Errorf("exit %d, want 1 with 8 restarts a side from 2 rounds\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	res, err := calibrate.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if row, _ := res.Row("kubelet/preserve", calibrate.MetricLastRequest); len(res.Rounds) != 2 || row.RealSpread == nil || row.RealSpread.N != 8 || row.Agree {
		t.Errorf("pooled: %d rounds, row %+v; want 2 rounds, 8 real values, judged DIFFERS", len(res.Rounds), row)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{a}, "two result files or more"},
		{[]string{a, other}, "Kubernetes version differs"},
		{[]string{a, filepath.Join(dir, "missing.json")}, "missing.json"},
	} {
		if code, _, stderr := runCLI(t, append([]string{"calibrate", "pool"}, tc.args...)...); code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("pool %q: exit %d, want 2 saying %q (%s)", tc.args, code, tc.want, stderr)
		}
	}
}
