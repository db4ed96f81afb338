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

// TestSnapshotFile: metadata first, the database after it, read back
// without reading the database; a file of anything else is refused.
func TestSnapshotFile(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "db")
	if err := os.WriteFile(db, []byte("etcd bytes"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "s.snap")
	if err := writeSnapshotTar(path, []byte(`{"kind":"StormbenchFleetSnapshot","schemaVersion":1,"runID":"r1","nodes":3}`), db); err != nil {
		t.Fatal(err)
	}
	m, err := ReadSnapshotMeta(path)
	if err != nil || m.RunID != "r1" || m.Nodes != 3 {
		t.Fatalf("ReadSnapshotMeta = %+v, %v", m, err)
	}
	out := filepath.Join(dir, "out.db")
	if err := extractSnapshotDB(path, out); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(out); string(b) != "etcd bytes" {
		t.Errorf("database %q", b)
	}
	if _, err := ReadSnapshotMeta(db); err == nil || !strings.Contains(err.Error(), "not a stormbench fleet snapshot") {
		t.Errorf("a non-snapshot read as %v", err)
	}
	// writeSnapshotTar never overwrites.
	if err := writeSnapshotTar(path, nil, db); err == nil {
		t.Error("overwrote an existing snapshot")
	}
}
