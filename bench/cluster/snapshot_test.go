package cluster

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSnapshotMetaCheck(t *testing.T) {
	good := SnapshotMeta{Kind: SnapshotKind, SchemaVersion: SnapshotSchemaVersion, ToolVersion: "0.1.0", KubeVersion: KubeVersion, Profile: "quick", FleetDigest: "abc"}
	want := SnapshotMeta{ToolVersion: "0.1.0", KubeVersion: KubeVersion, Profile: "quick", FleetDigest: "abc"}
	for _, tc := range []struct {
		name   string
		mutate func(*SnapshotMeta)
		want   string // "" for accepted
	}{
		{"same", func(*SnapshotMeta) {}, ""},
		{"not a snapshot", func(m *SnapshotMeta) { m.Kind = "Result" }, "not a stormbench fleet snapshot"},
		{"newer format", func(m *SnapshotMeta) { m.SchemaVersion = 2 }, "snapshot format 2"},
		{"other stormbench", func(m *SnapshotMeta) { m.ToolVersion = "0.0.9" }, "stormbench version"},
		{"other Kubernetes", func(m *SnapshotMeta) { m.KubeVersion = "v1.35.0" }, "Kubernetes version"},
		{"other profile", func(m *SnapshotMeta) { m.Profile = "fleet-1k" }, "profile"},
		{"other fleet", func(m *SnapshotMeta) { m.FleetDigest = "def" }, "fleet section changed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := good
			tc.mutate(&m)
			err := m.Check(want)
			if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("Check = %v, want %q", err, tc.want)
			}
		})
	}
}

// TestSnapshotFile: metadata first, the data directory after it, read
// back without reading the data; a file of anything else is refused.
func TestSnapshotFile(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "etcd")
	if err := os.MkdirAll(filepath.Join(data, "member", "wal"), 0o700); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"member/snap-db": "etcd bytes", "member/wal/0.wal": "wal bytes"} {
		if err := os.WriteFile(filepath.Join(data, filepath.FromSlash(name)), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "s.snap")
	if err := writeSnapshotTar(path, []byte(`{"kind":"StormbenchFleetSnapshot","schemaVersion":1,"runID":"r1","nodes":3}`), data); err != nil {
		t.Fatal(err)
	}
	m, err := ReadSnapshotMeta(path)
	if err != nil || m.RunID != "r1" || m.Nodes != 3 {
		t.Fatalf("ReadSnapshotMeta = %+v, %v", m, err)
	}
	out := filepath.Join(dir, "restored")
	if err := extractSnapshotData(path, out); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"member/snap-db": "etcd bytes", "member/wal/0.wal": "wal bytes"} {
		if b, _ := os.ReadFile(filepath.Join(out, filepath.FromSlash(name))); string(b) != want {
			t.Errorf("%s: %q, want %q", name, b, want)
		}
	}
	if _, err := ReadSnapshotMeta(filepath.Join(data, "member", "snap-db")); err == nil || !strings.Contains(err.Error(), "not a stormbench fleet snapshot") {
		t.Errorf("a non-snapshot read as %v", err)
	}
	// writeSnapshotTar never overwrites.
	if err := writeSnapshotTar(path, nil, data); err == nil {
		t.Error("overwrote an existing snapshot")
	}
	// A snapshot without data is refused.
	empty := filepath.Join(dir, "empty.snap")
	if err := writeSnapshotTar(empty, []byte(`{}`), t.TempDir()); err != nil {
		t.Fatal(err)
	}
	if err := extractSnapshotData(empty, filepath.Join(dir, "x")); err == nil {
		t.Error("a snapshot without etcd data was extracted")
	}
}
