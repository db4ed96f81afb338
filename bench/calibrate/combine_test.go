package calibrate

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stormbench/stormbench/bench/testutil"
)

// combinePair is a hollow and a containerd calibration of a kubelet
// restart and a reboot, with rows chosen for each verdict rule.
func combinePair() (hollow, containerd *Result) {
	tol := DefaultTolerance()
	row := func(metric, unit string, real, sim float64) Row {
		return Row{Metric: metric, Unit: unit, Real: real, Simulated: sim, Agree: tol.agree(unit, real, sim)}
	}
	// spread gives a row its per-restart ranges and judges it by them.
	spread := func(r Row, rlo, rhi, slo, shi float64) Row {
		r.RealSpread, r.SimulatedSpread = &Spread{N: 2, Min: rlo, Max: rhi}, &Spread{N: 2, Min: slo, Max: shi}
		r.Agree = tol.agreeSpread(r.Unit, r.Real, r.Simulated, r.RealSpread, r.SimulatedSpread)
		return r
	}
	mk := func(backend string, kubelet, reboot []Row) *Result {
		r := sampleResult()
		r.Backend = backend
		c := CaseResult{Case: Cases()[0], Rows: kubelet}
		r.Cases = []CaseResult{c}
		if reboot != nil {
			b := CaseResult{Case: Cases()[4], Rows: reboot}
			r.Cases = append(r.Cases, b)
		}
		return r
	}
	hollow = mk(BackendHollow,
		[]Row{
			row("kubelet: get pods", "/restart", 15, 15),                       // all agree
			row("kubelet: deletecollection resourceslices", "/restart", 0, 1),  // hollow lacks it; containerd judges
			row("kubelet: update leases", "/restart", 3, 1),                    // both real sides say 3
			row("kubelet: patch events", "/restart", 1.5, 0),                   // containerd saw none on either side
			spread(row("kubelet: get csinodes", "/restart", 2, 2), 2, 2, 2, 2), // the real sides' ranges overlap
			row(MetricLastRequest, "s", 1.30, 1.49),                            // the model is 15 % after hollow's stub start-up
		},
		[]Row{row("kubelet: get pods", "/restart", 15, 15)})
	hollow.Command = "stormbench calibrate --result h.json"
	containerd = mk(BackendContainerd,
		[]Row{
			row("kubelet: get pods", "/restart", 15, 15),
			row("kubelet: deletecollection resourceslices", "/restart", 1, 1),
			row("kubelet: update leases", "/restart", 3, 1),
			spread(row("kubelet: get csinodes", "/restart", 3, 2), 2, 4, 2, 2), // a retried GET on one node of two
			row(MetricLastRequest, "s", 1.39, 1.49),                            // and 7 % after the kubelet on containerd
		},
		[]Row{row("kubelet: get pods", "/restart", 20, 15)}) // reboot: containerd is the reference
	return hollow, containerd
}

// TestCombineVerdicts: each case takes its reference's verdicts (hollow
// for kubelet restarts, containerd for reboots), and containerd judges the
// rows where the real backends disagree, and the kubelet's start-up times.
func TestCombineVerdicts(t *testing.T) {
	h, c := combinePair()
	got, err := Combine(h, c)
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		verdict, judge string
		split          bool
		hasContainerd  bool
	}
	wants := map[string]map[string]want{
		"kubelet/legacy": {
			"kubelet: get pods":                        {"ok", BackendHollow, false, true},
			"kubelet: deletecollection resourceslices": {"ok", BackendContainerd, true, true},
			"kubelet: update leases":                   {"DIFFERS", BackendHollow, false, true},
			"kubelet: patch events":                    {"ok", BackendContainerd, true, true},
			// 2 against 3 (2–4): not apart, by the ranges.
			"kubelet: get csinodes": {"ok", BackendHollow, false, true},
			// The real sides agree, but a start-up time is containerd's
			// to judge (startTimed): the hollow kubelet's start is a stub's.
			MetricLastRequest: {"ok", BackendContainerd, false, true},
		},
		"reboot": {"kubelet: get pods": {"DIFFERS", BackendContainerd, true, true}},
	}
	if len(got.Cases) != 2 || got.Cases[0].Reference != BackendHollow || got.Cases[1].Reference != BackendContainerd {
		t.Fatalf("cases %+v, want kubelet/legacy (hollow) and reboot (containerd)", got.Cases)
	}
	for _, cc := range got.Cases {
		if len(cc.Rows) != len(wants[cc.Name]) {
			t.Errorf("%s: %d rows, want %d", cc.Name, len(cc.Rows), len(wants[cc.Name]))
		}
		for _, r := range cc.Rows {
			w, ok := wants[cc.Name][r.Metric]
			if !ok {
				t.Errorf("%s: unexpected row %q", cc.Name, r.Metric)
				continue
			}
			if r.Verdict != w.verdict || r.Judge != w.judge || r.RealSidesDiffer != w.split || (r.Containerd != nil) != w.hasContainerd {
				t.Errorf("%s %s: verdict %s judge %s split %t containerd %v; want %+v", cc.Name, r.Metric, r.Verdict, r.Judge, r.RealSidesDiffer, r.Containerd, w)
			}
		}
	}
	if d := got.Disagreements(); len(d) != 2 {
		t.Errorf("disagreements %v, want update leases and reboot's get pods", d)
	}
	if n := got.RealSidesDiffer(); n != 3 {
		t.Errorf("%d rows with the real sides apart, want 3", n)
	}
}

func TestCombineRefuses(t *testing.T) {
	for name, mutate := range map[string]func(h, c *Result){
		"swapped":         func(h, c *Result) { h.Backend, c.Backend = BackendContainerd, BackendHollow },
		"two hollow":      func(h, c *Result) { c.Backend = "" },
		"kubelet version": func(h, c *Result) { c.KubeVersion = "v1.35.0" },
	} {
		h, c := combinePair()
		mutate(h, c)
		if _, err := Combine(h, c); err == nil {
			t.Errorf("%s: combined", name)
		}
	}
}

func TestCombineRenderGolden(t *testing.T) {
	h, c := combinePair()
	got, err := Combine(h, c)
	if err != nil {
		t.Fatal(err)
	}
	for name, render := range map[string]func(*bytes.Buffer) error{
		"combined.txt.golden":  func(b *bytes.Buffer) error { return WriteCombinedText(b, got) },
		"combined.md.golden":   func(b *bytes.Buffer) error { return WriteCombinedMarkdown(b, got) },
		"combined.html.golden": func(b *bytes.Buffer) error { return WriteCombinedHTML(b, got) },
		"outside.md.golden":    func(b *bytes.Buffer) error { return WriteOutsideMarkdown(b, got) },
	} {
		var b bytes.Buffer
		if err := render(&b); err != nil {
			t.Fatal(err)
		}
		testutil.Golden(t, name, b.Bytes())
	}
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	good, _ := json.Marshal(sampleResult())
	for name, tc := range map[string]struct {
		body string
		want string
	}{
		"valid":         {string(good), ""},
		"unknown field": {`{"kind":"CalibrationResult","schemaVersion":1,"bogus":1}`, "unknown field"},
		"wrong kind":    {`{"kind":"Result","schemaVersion":1}`, "not a calibration result"},
		"not json":      {"nope", "not a calibration result"},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".json")
		if err := os.WriteFile(path, []byte(tc.body), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := ReadFile(path)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want one containing %q", name, err, tc.want)
		}
	}
}
