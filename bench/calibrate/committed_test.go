package calibrate

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stormbench/stormbench/bench/kubeversion"
)

// TestCommittedCalibrationFollowsModel: the committed calibration
// (results/calibration/*.json, and results/calibration/vX.Y.Z/*.json for
// another Kubernetes version) is of the model at the head. A change of
// the simulated kubelet's behaviour changes its request or plan goldens
// (ModelGoldens), so their fingerprint; the change lands with its
// calibration, made again by RemakeCommand.
//
// It records the machine it was made on: its timings are that machine's.
//
// A calibration of another Kubernetes version than the default is of that
// version's model (ModelFingerprintAt).
func TestCommittedCalibrationFollowsModel(t *testing.T) {
	goldens := os.DirFS(filepath.Join("..", "kubelet", "testdata"))
	root := filepath.Join("..", "..", "results", "calibration")
	files, err := filepath.Glob(filepath.Join(root, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	versioned, err := filepath.Glob(filepath.Join(root, "v*", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, versioned...)
	if len(files) == 0 {
		t.Fatalf("no committed calibration in results/calibration: run `%s` and commit results/calibration", RemakeCommand)
	}
	for _, f := range files {
		r, err := ReadFile(f)
		if err != nil {
			t.Errorf("committed calibration: %v", err)
			continue
		}
		rel, _ := filepath.Rel(root, f)
		name := filepath.ToSlash(filepath.Join("results", "calibration", rel))
		if r.Machine == nil {
			t.Errorf("%s does not record the machine it was made on; run `%s` and commit results/calibration", name, RemakeCommand)
		}
		var v kubeversion.Version // the default, for a result that names none
		if r.KubeVersion != "" {
			if v, err = kubeversion.Parse(r.KubeVersion); err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
		}
		// A version's folder holds that version's tables only.
		if dir := filepath.Base(filepath.Dir(f)); dir != "calibration" && dir != v.Or(kubeversion.Default).String() {
			t.Errorf("%s is of Kubernetes %s, in the folder of %s", name, v.Or(kubeversion.Default), dir)
		}
		head, err := ModelFingerprintAt(goldens, v)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		switch r.ModelFingerprint {
		case head:
		case "":
			t.Errorf("%s has no model fingerprint: it was made before calibrations followed the model; run `%s` and commit results/calibration", name, RemakeCommand)
		default:
			t.Errorf("%s is of model %.12s, the head's goldens (%s) are of %.12s: the simulated kubelet changed since its calibration; run `%s` and commit results/calibration with the change",
				name, r.ModelFingerprint, ModelGoldensAt(v), head, RemakeCommand)
		}
	}
}
