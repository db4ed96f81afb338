package cluster

import (
	"archive/tar"
	"cmp"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/stormbench/stormbench/bench/kubeversion"
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
	// snapshotDataDir prefixes the etcd data directory's files in the tar.
	snapshotDataDir = "etcd/"
)

// etcdDataDir is kwokctl's etcd data directory of the cluster.
func (e *Embedded) etcdDataDir() string { return filepath.Join(e.Dir(), "etcd") }

// SaveSnapshot writes meta and a copy of the cluster's etcd data directory
// into one tar file at path, atomically: a failed save leaves no file. The
// cluster is stopped while its data directory is copied (kwokctl stop and
// start cluster), so the copy is consistent. (kwokctl's own `snapshot
// save` needs etcdctl and etcdutl, which it downloads from GitHub; there is
// no GitHub here.)
func (e *Embedded) SaveSnapshot(ctx context.Context, path string, meta SnapshotMeta) (err error) {
	if !e.Exists() {
		return fmt.Errorf("embedded cluster %q does not exist in %s", e.opts.Name, e.opts.WorkDir)
	}
	meta.Kind, meta.SchemaVersion, meta.KubeVersion = SnapshotKind, SnapshotSchemaVersion, e.KubeVersion().String()
	if meta.Created.IsZero() {
		meta.Created = time.Now().UTC()
	}
	mb, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	return e.whileStopped(ctx, "for the snapshot", func() error {
		err := writeSnapshotTar(tmp, mb, e.etcdDataDir())
		if err == nil {
			err = os.Rename(tmp, path)
		}
		if err != nil {
			_ = os.Remove(tmp)
			return fmt.Errorf("writing snapshot %s: %w", path, err)
		}
		return nil
	})
}

// whileStopped stops the cluster (kwokctl stop cluster), runs f and starts
// the cluster again, whatever f returned; why says what for in an error.
func (e *Embedded) whileStopped(ctx context.Context, why string, f func() error) (err error) {
	if out, err := e.kwokctl(ctx, "stop", "cluster", "--name", e.opts.Name); err != nil {
		return fmt.Errorf("stopping the cluster %s: %w\n%s", why, err, tail(out, 2000))
	}
	defer func() {
		if out, serr := e.kwokctl(context.WithoutCancel(ctx), "start", "cluster", "--name", e.opts.Name); serr != nil {
			err = errors.Join(err, fmt.Errorf("starting the cluster again: %w%s", serr, e.failureHint(out)))
		}
	}()
	return f()
}

// writeSnapshotTar writes meta, then every file under dataDir, to a new
// file at path.
func writeSnapshotTar(path string, meta []byte, dataDir string) (err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	// gzip: etcd preallocates its WAL segments (64 MiB of zeros each).
	zw := gzip.NewWriter(f)
	tw := tar.NewWriter(zw)
	if err := tw.WriteHeader(&tar.Header{Name: snapshotMetaName, Mode: 0o600, Size: int64(len(meta))}); err != nil {
		return err
	}
	if _, err := tw.Write(meta); err != nil {
		return err
	}
	err = filepath.WalkDir(dataDir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dataDir, p)
		if err != nil || rel == "." {
			return err
		}
		name := snapshotDataDir + filepath.ToSlash(rel)
		if d.IsDir() {
			return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: 0o700})
		}
		if !d.Type().IsRegular() {
			return nil
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		st, err := in.Stat()
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: st.Size()}); err != nil {
			return err
		}
		_, err = io.Copy(tw, in)
		return err
	})
	if err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
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
	zr, err := gzip.NewReader(f)
	if err != nil {
		return m, fmt.Errorf("%s is not a stormbench fleet snapshot (not gzip)", path)
	}
	tr := tar.NewReader(zr)
	h, err := tr.Next()
	if err != nil || h.Name != snapshotMetaName {
		return m, fmt.Errorf("%s is not a stormbench fleet snapshot (no %s first)", path, snapshotMetaName)
	}
	if err := json.NewDecoder(io.LimitReader(tr, 1<<20)).Decode(&m); err != nil {
		return m, fmt.Errorf("%s: reading snapshot metadata: %w", path, err)
	}
	return m, nil
}

// RestoreSnapshot replaces the cluster's etcd data with the snapshot at
// path, after checking its metadata against want: the cluster is stopped,
// its data directory swapped (the old one comes back if extracting fails)
// and the cluster started again. into, when set, is the Kubernetes version
// whose control plane (API server, controller manager, scheduler) starts on
// the restored data: the snapshot's own or a newer one, as an upgrade
// replaces the binaries and keeps etcd (an upgrade's comparison restores one
// fleet into each version's control plane); zero keeps the cluster's.
func (e *Embedded) RestoreSnapshot(ctx context.Context, path string, want SnapshotMeta, into kubeversion.Version) (meta SnapshotMeta, err error) {
	meta, err = ReadSnapshotMeta(path)
	if err != nil {
		return meta, err
	}
	into = into.Or(e.KubeVersion())
	want.KubeVersion = cmp.Or(want.KubeVersion, e.KubeVersion().String())
	if err := meta.Check(want); err != nil {
		return meta, fmt.Errorf("refusing snapshot %s: %w", path, err)
	}
	made, err := kubeversion.Parse(meta.KubeVersion)
	if err != nil {
		return meta, fmt.Errorf("refusing snapshot %s: %w", path, err)
	}
	if into.Before(made) {
		return meta, fmt.Errorf("refusing snapshot %s: it is of Kubernetes %s and restores into %s or newer (an upgrade), not into %s", path, made, made, into)
	}
	comps := Components{Dir: e.opts.Components.Dir, Version: into}
	if missing := comps.missing(AllBinaries()...); len(missing) > 0 {
		return meta, &VersionNotBuiltError{Version: into, Dir: comps.KubeDir(), Missing: missing}
	}
	if !e.Exists() {
		return meta, fmt.Errorf("embedded cluster %q does not exist in %s", e.opts.Name, e.opts.WorkDir)
	}
	return meta, e.whileStopped(ctx, "to restore", func() error {
		if err := e.useComponents(comps); err != nil {
			return fmt.Errorf("switching the control plane to Kubernetes %s: %w", into, err)
		}
		data := e.etcdDataDir()
		old := data + ".before-restore"
		_ = os.RemoveAll(old)
		if err := os.Rename(data, old); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("restoring snapshot: %w", err)
		}
		if err := extractSnapshotData(path, data); err != nil {
			_ = os.RemoveAll(data)
			_ = os.Rename(old, data)
			return fmt.Errorf("reading snapshot %s: %w", path, err)
		}
		_ = os.RemoveAll(old)
		return nil
	})
}

// extractSnapshotData writes the snapshot's etcd files under dir.
func extractSnapshotData(path, dir string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	zr, err := gzip.NewReader(f)
	if err != nil {
		return err
	}
	tr := tar.NewReader(zr)
	files := 0
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		rel, ok := strings.CutPrefix(h.Name, snapshotDataDir)
		if !ok || rel == "" {
			continue
		}
		target := filepath.Join(dir, filepath.FromSlash(rel))
		if !strings.HasPrefix(target, filepath.Clean(dir)+string(os.PathSeparator)) {
			return fmt.Errorf("snapshot entry %q leaves the data directory", h.Name)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o700); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
				return err
			}
			out, err := os.OpenFile(target, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
			if err != nil {
				return err
			}
			if _, err := io.Copy(out, tr); err != nil {
				out.Close()
				return err
			}
			if err := out.Close(); err != nil {
				return err
			}
			files++
		}
	}
	if files == 0 {
		return errors.New("no etcd data in the snapshot")
	}
	return nil
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
