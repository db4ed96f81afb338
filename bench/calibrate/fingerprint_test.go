package calibrate

import (
	"testing"
	"testing/fstest"
)

// TestModelFingerprint: the fingerprint follows the goldens' paths and
// bytes, not the order they are listed in or their modes.
func TestModelFingerprint(t *testing.T) {
	base := fstest.MapFS{
		"restart/kubelet-legacy.golden": {Data: []byte("GET pods\nPATCH pods/status\n")},
		"plan/reboot.golden":            {Data: []byte("start\n")},
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
			"plan/reboot.golden":            {Data: []byte("start\n"), Mode: 0o600},
			"restart/kubelet-legacy.golden": {Data: []byte("GET pods\nPATCH pods/status\n")},
		}, true},
		{"a request more", fstest.MapFS{
			"restart/kubelet-legacy.golden": {Data: []byte("GET pods\nPATCH pods/status\nPATCH pods/status\n")},
			"plan/reboot.golden":            {Data: []byte("start\n")},
		}, false},
		{"a file renamed", fstest.MapFS{
			"restart/kubelet-preserve.golden": {Data: []byte("GET pods\nPATCH pods/status\n")},
			"plan/reboot.golden":              {Data: []byte("start\n")},
		}, false},
		{"bytes moved from one file to the next", fstest.MapFS{
			"restart/kubelet-legacy.golden": {Data: []byte("GET pods\nPATCH pods/status\nstart\n")},
			"plan/reboot.golden":            {Data: []byte("")},
		}, false},
		{"a golden added", fstest.MapFS{
			"restart/kubelet-legacy.golden": {Data: []byte("GET pods\nPATCH pods/status\n")},
			"plan/reboot.golden":            {Data: []byte("start\n")},
			"plan/runtime.golden":           {Data: []byte("wait\n")},
		}, false},
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
