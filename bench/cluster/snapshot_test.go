package cluster

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stormbench/stormbench/bench/kubeversion"
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

// TestRestoreSnapshotVersions: a snapshot restores into the control plane
// of its own Kubernetes version or a newer one (an upgrade), never an older
// one, and only into a version that is built; nothing of the cluster is
// touched before the refusal.
func TestRestoreSnapshotVersions(t *testing.T) {
	bin := t.TempDir()
	for _, b := range AllBinaries() {
		if err := os.WriteFile(filepath.Join(bin, b), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	e, err := NewEmbedded(EmbeddedOptions{Name: "up", WorkDir: t.TempDir(), Components: Components{Dir: bin}})
	if err != nil {
		t.Fatal(err)
	}
	snap := func(version string) string {
		dir := t.TempDir()
		data := filepath.Join(dir, "etcd")
		if err := os.MkdirAll(data, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(data, "db"), []byte("etcd bytes"), 0o600); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "s.snap")
		meta := `{"kind":"StormbenchFleetSnapshot","schemaVersion":1,"kubeVersion":"` + version + `","profile":"upgrade"}`
		if err := writeSnapshotTar(path, []byte(meta), data); err != nil {
			t.Fatal(err)
		}
		return path
	}
	for _, tc := range []struct {
		name, made string
		want       SnapshotMeta
		into       kubeversion.Version
		errHas     string
	}{
		{name: "newer than the cluster", made: "v1.37.2", want: SnapshotMeta{KubeVersion: "v1.37.2"},
			errHas: "it is of Kubernetes v1.37.2 and restores into v1.37.2 or newer (an upgrade), not into v1.36.3"},
		{name: "into an older version", made: "v1.36.3", into: kubeversion.V1_35,
			errHas: "restores into v1.36.3 or newer (an upgrade), not into v1.35.4"},
		{name: "into a version not built", made: "v1.36.3", into: kubeversion.V1_37,
			errHas: "Kubernetes v1.37.2 is not built: " + filepath.Join(bin, "v1.37.2") + " lacks kube-apiserver, kube-controller-manager, kube-scheduler, kubectl; build it with `make components KUBE_VERSION=v1.37.2`"},
		{name: "another fleet's version", made: "v1.35.4",
			errHas: `snapshot made by another Kubernetes version: "v1.35.4", this run has "v1.36.3"`},
		{name: "a cluster that does not exist", made: "v1.36.3",
			errHas: `embedded cluster "up" does not exist`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.RestoreSnapshot(t.Context(), snap(tc.made), tc.want, tc.into)
			if err == nil || !strings.Contains(err.Error(), tc.errHas) {
				t.Fatalf("RestoreSnapshot = %v; want an error with %q", err, tc.errHas)
			}
			if e.KubeVersion() != kubeversion.V1_36 {
				t.Errorf("the refused restore left the cluster at %s", e.KubeVersion())
			}
		})
	}
}

// TestUseComponents: the stopped cluster's control-plane links point at
// the version's binaries; etcd and KWOK stay every version's.
func TestUseComponents(t *testing.T) {
	bin := t.TempDir()
	e, err := NewEmbedded(EmbeddedOptions{Name: "up", WorkDir: t.TempDir(), Components: Components{Dir: bin}})
	if err != nil {
		t.Fatal(err)
	}
	links := filepath.Join(e.Dir(), "bin")
	if err := os.MkdirAll(links, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{BinKubeApiserver, BinKubeControllerManager, BinKubeScheduler, BinEtcd} {
		if err := os.Symlink(filepath.Join(bin, b), filepath.Join(links, b)); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.useComponents(Components{Dir: bin, Version: kubeversion.V1_37}); err != nil {
		t.Fatal(err)
	}
	for b, want := range map[string]string{
		BinKubeApiserver:         filepath.Join(bin, "v1.37.2", BinKubeApiserver),
		BinKubeControllerManager: filepath.Join(bin, "v1.37.2", BinKubeControllerManager),
		BinKubeScheduler:         filepath.Join(bin, "v1.37.2", BinKubeScheduler),
		BinEtcd:                  filepath.Join(bin, BinEtcd),
	} {
		if got, err := os.Readlink(filepath.Join(links, b)); err != nil || got != want {
			t.Errorf("%s -> %q (%v), want %q", b, got, err, want)
		}
	}
	if e.KubeVersion() != kubeversion.V1_37 {
		t.Errorf("KubeVersion %s after the switch, want v1.37.2", e.KubeVersion())
	}
	if entries, _ := os.ReadDir(links); len(entries) != 4 {
		t.Errorf("%d entries in the cluster's bin/, want the 4 links", len(entries))
	}
}
