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
// every result under results/ says where it was made). A result made
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
			Kind string `json:"kind"`
		}
		if err := json.Unmarshal(data, &probe); err != nil {
			t.Errorf("%s: %v", name, err)
			return nil
		}
		if probe.Kind == "CalibrationResult" {
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
