package cluster

import (
	"archive/tar"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// SnapshotKind marks a stormbench fleet snapshot's metadata.
const SnapshotKind = "StormbenchFleetSnapshot"

// SnapshotSchemaVersion is the snapshot format this stormbench writes.
const SnapshotSchemaVersion = 1

// SnapshotMeta describes a fleet snapshot: what made it and what it holds.
// A snapshot is restored only by the same stormbench and Kubernetes
// version, for the same fleet: etcd's contents are the API server's
// storage encoding, and a fleet of another profile would not be the one
// the run expects.
type SnapshotMeta struct {
	Kind          string `json:"kind"`
	SchemaVersion int    `json:"schemaVersion"`
	// ToolVersion and KubeVersion are stormbench's and the cluster's.
	ToolVersion string `json:"toolVersion"`
	KubeVersion string `json:"kubeVersion"`
	// Profile names the profile the fleet was made from; FleetDigest is
	// the SHA-256 of its resolved fleet section.
	Profile     string `json:"profile"`
	FleetDigest string `json:"fleetDigest"`
	// RunID is the run label of the fleet's objects.
	RunID string `json:"runID"`
	// Nodes and Pods are the fleet's size.
	Nodes int `json:"nodes"`
	Pods  int `json:"pods"`
	// APF is the cluster's APF mode (identities and FlowSchemas are in the
	// snapshot's RBAC and flow-control objects).
	APF     string    `json:"apf"`
	Created time.Time `json:"created"`
}

// Check refuses a snapshot that this stormbench cannot restore for want.
// Empty fields of want are not compared.
func (m SnapshotMeta) Check(want SnapshotMeta) error {
	if m.Kind != SnapshotKind {
		return fmt.Errorf("not a stormbench fleet snapshot (kind %q)", m.Kind)
	}
	if m.SchemaVersion != SnapshotSchemaVersion {
		return fmt.Errorf("snapshot format %d; this stormbench reads %d", m.SchemaVersion, SnapshotSchemaVersion)
	}
	for _, c := range []struct{ what, got, want string }{
		{"stormbench version", m.ToolVersion, want.ToolVersion},
		{"Kubernetes version", m.KubeVersion, want.KubeVersion},
		{"profile", m.Profile, want.Profile},
		{"fleet (the profile's fleet section changed)", m.FleetDigest, want.FleetDigest},
	} {
		if c.want != "" && c.got != c.want {
			return fmt.Errorf("snapshot made by another %s: %q, this run has %q", c.what, c.got, c.want)
		}
	}
	return nil
}

const (
	snapshotMetaName = "stormbench-snapshot.json"
	snapshotDBName   = "etcd.db"
)

// SaveSnapshot writes the cluster's etcd (kwokctl snapshot save, etcd
// format) and meta into one tar file at path, atomically: a failed save
// leaves no file.
func (e *Embedded) SaveSnapshot(ctx context.Context, path string, meta SnapshotMeta) error {
	if !e.Exists() {
		return fmt.Errorf("embedded cluster %q does not exist in %s", e.opts.Name, e.opts.WorkDir)
	}
	meta.Kind, meta.SchemaVersion, meta.KubeVersion = SnapshotKind, SnapshotSchemaVersion, KubeVersion
	if meta.Created.IsZero() {
		meta.Created = time.Now().UTC()
	}
	tmpDir, err := os.MkdirTemp(filepath.Dir(path), ".snapshot-")
	if err != nil {
		return fmt.Errorf("saving snapshot: %w", err)
	}
	defer os.RemoveAll(tmpDir)
	db := filepath.Join(tmpDir, snapshotDBName)
	if out, err := e.kwokctl(ctx, "snapshot", "save", "--name", e.opts.Name, "--format", "etcd", "--path", db); err != nil {
		return fmt.Errorf("kwokctl snapshot save: %w\n%s", err, tail(out, 2000))
	}
	mb, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(tmpDir, "snapshot.tar")
	if err := writeSnapshotTar(tmp, mb, db); err != nil {
		return fmt.Errorf("writing snapshot %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("writing snapshot %s: %w", path, err)
	}
	return nil
}

func writeSnapshotTar(path string, meta []byte, db string) (err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	tw := tar.NewWriter(f)
	if err := tw.WriteHeader(&tar.Header{Name: snapshotMetaName, Mode: 0o600, Size: int64(len(meta))}); err != nil {
		return err
	}
	if _, err := tw.Write(meta); err != nil {
		return err
	}
	dbf, err := os.Open(db)
	if err != nil {
		return err
	}
	defer dbf.Close()
	st, err := dbf.Stat()
	if err != nil {
		return err
	}
	if err := tw.WriteHeader(&tar.Header{Name: snapshotDBName, Mode: 0o600, Size: st.Size()}); err != nil {
		return err
	}
	if _, err := io.Copy(tw, dbf); err != nil {
		return err
	}
	return tw.Close()
}

// ReadSnapshotMeta reads a snapshot's metadata; the metadata comes first in
// the file, so this reads no further.
func ReadSnapshotMeta(path string) (SnapshotMeta, error) {
	var m SnapshotMeta
	f, err := os.Open(path)
	if err != nil {
		return m, err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	h, err := tr.Next()
	if err != nil || h.Name != snapshotMetaName {
		return m, fmt.Errorf("%s is not a stormbench fleet snapshot (no %s first)", path, snapshotMetaName)
	}
	if err := json.NewDecoder(io.LimitReader(tr, 1<<20)).Decode(&m); err != nil {
		return m, fmt.Errorf("%s: reading snapshot metadata: %w", path, err)
	}
	return m, nil
}

// RestoreSnapshot replaces the cluster's etcd with the snapshot at path
// (kwokctl snapshot restore, which stops and restarts the components),
// after checking its metadata against want.
func (e *Embedded) RestoreSnapshot(ctx context.Context, path string, want SnapshotMeta) (SnapshotMeta, error) {
	meta, err := ReadSnapshotMeta(path)
	if err != nil {
		return meta, err
	}
	want.KubeVersion = KubeVersion
	if err := meta.Check(want); err != nil {
		return meta, fmt.Errorf("refusing snapshot %s: %w", path, err)
	}
	if !e.Exists() {
		return meta, fmt.Errorf("embedded cluster %q does not exist in %s", e.opts.Name, e.opts.WorkDir)
	}
	tmpDir, err := os.MkdirTemp("", "stormbench-restore-")
	if err != nil {
		return meta, err
	}
	defer os.RemoveAll(tmpDir)
	db := filepath.Join(tmpDir, snapshotDBName)
	if err := extractSnapshotDB(path, db); err != nil {
		return meta, fmt.Errorf("reading snapshot %s: %w", path, err)
	}
	if out, err := e.kwokctl(ctx, "snapshot", "restore", "--name", e.opts.Name, "--format", "etcd", "--path", db); err != nil {
		return meta, fmt.Errorf("kwokctl snapshot restore: %w%s", err, e.failureHint(out))
	}
	return meta, nil
}

func extractSnapshotDB(path, db string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("no %s in the snapshot", snapshotDBName)
		}
		if err != nil {
			return err
		}
		if h.Name != snapshotDBName {
			continue
		}
		out, err := os.OpenFile(db, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, tr); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	}
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
