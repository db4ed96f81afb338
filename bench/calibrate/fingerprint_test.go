package calibrate

import (
	"testing"
	"testing/fstest"

	"github.com/stormbench/stormbench/bench/kubeversion"
)

// TestModelFingerprint: the fingerprint follows the goldens' paths and
// bytes, not the order they are listed in or their modes, nor a kubelet
// start's plans (played in full by the request goldens).
func TestModelFingerprint(t *testing.T) {
	base := fstest.MapFS{
		"restart/kubelet-legacy.golden": {Data: []byte("GET pods\nPATCH pods/status\n")},
		"plan/runtime-refused.golden":   {Data: []byte("start\n")},
	}
	want, err := ModelFingerprint(base)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		fs   fstest.MapFS
		same bool
	}{
		{"the same files, another mode", fstest.MapFS{
			"plan/runtime-refused.golden":   {Data: []byte("start\n"), Mode: 0o600},
			"restart/kubelet-legacy.golden": {Data: []byte("GET pods\nPATCH pods/status\n")},
		}, true},
		{"a request more", fstest.MapFS{
			"restart/kubelet-legacy.golden": {Data: []byte("GET pods\nPATCH pods/status\nPATCH pods/status\n")},
			"plan/runtime-refused.golden":   {Data: []byte("start\n")},
		}, false},
		{"a file renamed", fstest.MapFS{
			"restart/kubelet-preserve.golden": {Data: []byte("GET pods\nPATCH pods/status\n")},
			"plan/runtime-refused.golden":     {Data: []byte("start\n")},
		}, false},
		{"bytes moved from one file to the next", fstest.MapFS{
			"restart/kubelet-legacy.golden": {Data: []byte("GET pods\nPATCH pods/status\nstart\n")},
			"plan/runtime-refused.golden":   {Data: []byte("")},
		}, false},
		{"a golden added", fstest.MapFS{
			"restart/kubelet-legacy.golden": {Data: []byte("GET pods\nPATCH pods/status\n")},
			"plan/runtime-refused.golden":   {Data: []byte("start\n")},
			"plan/runtime-hung.golden":      {Data: []byte("wait\n")},
		}, false},
		{"a start's plan added and another changed", fstest.MapFS{
			"restart/kubelet-legacy.golden": {Data: []byte("GET pods\nPATCH pods/status\n")},
			"plan/runtime-refused.golden":   {Data: []byte("start\n")},
			"plan/restart-legacy.golden":    {Data: []byte("first-sync\n")},
			"plan/start-kubelet.golden":     {Data: []byte("node-status\n")},
		}, true},
	} {
		got, err := ModelFingerprint(tc.fs)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if (got == want) != tc.same {
			t.Errorf("%s: fingerprint %s, base %s: same %t, want %t", tc.name, got, want, got == want, tc.same)
		}
	}
	if _, err := ModelFingerprint(fstest.MapFS{}); err == nil {
		t.Error("no goldens: no error")
	}
}

// TestModelFingerprintAt: the default version's fingerprint leaves out the
// other versions' goldens (a calibration of the default made before they
// existed stays of the head's model), and another version's hashes its own
// folder only.
func TestModelFingerprintAt(t *testing.T) {
	def := fstest.MapFS{
		"restart/kubelet-legacy.golden": {Data: []byte("GET pods\nPATCH pods/status\n")},
		"plan/reboot.golden":            {Data: []byte("start\n")},
	}
	want, err := ModelFingerprint(def)
	if err != nil {
		t.Fatal(err)
	}
	withVersions := fstest.MapFS{
		"versions/v1.37.2/restart/kubelet-legacy.golden": {Data: []byte("GET pods\nWATCH podcertificaterequests\n")},
		"versions/v1.34.4/restart/kubelet-legacy.golden": {Data: []byte("LIST pods\nWATCH pods\n")},
	}
	for p, f := range def {
		withVersions[p] = f
	}
	for _, v := range []kubeversion.Version{{}, kubeversion.Default} {
		got, err := ModelFingerprintAt(withVersions, v)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("ModelFingerprintAt(%q) = %.12s with other versions' goldens, want the default's %.12s", v, got, want)
		}
	}
	if got, _ := ModelFingerprint(withVersions); got != want {
		t.Errorf("ModelFingerprint = %.12s with other versions' goldens, want %.12s", got, want)
	}
	v137, err := ModelFingerprintAt(withVersions, kubeversion.V1_37)
	if err != nil {
		t.Fatal(err)
	}
	alone, err := ModelFingerprint(fstest.MapFS{"restart/kubelet-legacy.golden": withVersions["versions/v1.37.2/restart/kubelet-legacy.golden"]})
	if err != nil {
		t.Fatal(err)
	}
	if v137 != alone {
		t.Errorf("v1.37.2: %.12s, want the hash of its folder %.12s", v137, alone)
	}
	if v134, _ := ModelFingerprintAt(withVersions, kubeversion.V1_34); v134 == v137 || v134 == want {
		t.Errorf("v1.34.4's fingerprint %.12s is another version's", v134)
	}
	if _, err := ModelFingerprintAt(withVersions, kubeversion.V1_35); err == nil {
		t.Error("v1.35.4 without goldens: no error")
	}
	if got, want := ModelGoldensAt(kubeversion.V1_37), "bench/kubelet/testdata/versions/v1.37.2"; got != want {
		t.Errorf("ModelGoldensAt(v1.37.2) = %q, want %q", got, want)
	}
}
