package main

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stormbench/stormbench/bench/result"
)

// TestResultsRecordMachine fails when a run result under results/ does not
// record the machine it was made on (run.machine): its figures are that
// machine's, and the catalogue and every figure block print it (issue 47:
// every result under results/ says where it was made), nor the reach of
// a machine (scripts/reach). A result made
// before the machine was recorded is made again at the head with its make
// target (make published lists them), not kept. Calibrations are another
// kind of document; bench/calibrate's TestCommittedCalibrationFollowsModel
// requires their machine.
func TestResultsRecordMachine(t *testing.T) {
	root := filepath.Join("..", "..")
	checked := 0
	err := filepath.WalkDir(filepath.Join(root, "results"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".json") {
			return err
		}
		name, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		name = filepath.ToSlash(name)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		var probe struct {
			Kind    string          `json:"kind"`
			Machine *result.Machine `json:"machine"`
		}
		if err := json.Unmarshal(data, &probe); err != nil {
			t.Errorf("%s: %v", name, err)
			return nil
		}
		switch probe.Kind {
		case "CalibrationResult":
			return nil
		case "ReachResult": // scripts/reach: the machine is the first run's
			if m := probe.Machine; m == nil || m.CPUs == 0 {
				t.Errorf("%s does not record the machine it was made on", name)
			}
			return nil
		}
		r, err := result.ReadFile(p)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			return nil
		}
		checked++
		if m := r.Run.Machine; m == nil || m.CPUs == 0 || m.GoVersion == "" {
			t.Errorf("%s (run %s) does not record the machine it was made on (run.machine: %s): make it again at the head (make published lists the targets) or remove it; git keeps it",
				name, r.Run.ID, m)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The gate A/B's baseline and the A/A check at least.
	if checked < 2 {
		t.Errorf("checked %d run results under results/, want the gate baseline and the A/A check at least", checked)
	}
}

// TestDescribeReach: the catalogue's line of a reach file names the
// answer, the sizes tried and how many failed.
func TestDescribeReach(t *testing.T) {
	data := []byte(`{"kind":"ReachResult","tool":"abc1234","start":"2026-12-06T13:00:00Z","profile":"results/host/host-300-budget.yaml",
"machine":{"cpus":2,"goVersion":"go1.26.8","os":"linux","arch":"amd64"},"min":300,"max":5000,"resolution":0.2,"largest":450,"smallestFailed":525,
"trials":[{"nodes":300,"passed":true},{"nodes":600,"passed":false},{"nodes":450,"passed":true},{"nodes":525,"passed":false}]}`)
	e, err := describeReach("results/host/reach.json", data)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ got, want string }{
		{e.what, "the reach of this machine: the largest fleet whose storm completed and was not host-bound, 450 nodes (525 failed)"},
		{e.profile, "host-300-budget"}, {e.commit, "abc1234"}, {e.date, "2026-12-06"},
		{e.n, "4 sizes in 300–5000, to 20 %"}, {e.hostBound, "2 of 4 sizes failed"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
