package realnode

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// ImageName is the name stormbench's node image is imported under: the
// pause image every fleet pod template names, so that pods run on a
// containerd-backed node unchanged (IfNotPresent finds it imported), and
// the CRI's sandbox image.
const ImageName = "registry.k8s.io/pause:3.10"

// WriteImage writes an OCI image layout tarball (what `ctr images import`
// reads) holding one layer: the multi-call binary bin as /pause, with
// /bin/cat and /bin/true linked to it, entrypoint /pause and PATH=/bin.
// There is no registry on these machines; images are built from Go
// binaries.
func WriteImage(path, bin, name string) error {
	return writeImage(path, bin, name, "pause", []string{"bin/cat", "bin/true", "bin/serve"})
}

// WriteBinaryImage writes an OCI image layout tarball of one static binary
// bin as /entry, the image's entrypoint, with empty /etc and /tmp: the
// distroless image scripts/kubernetes/README.md describes, built without a
// registry or a container engine.
func WriteBinaryImage(path, bin, name, entry string) error {
	return writeImage(path, bin, name, entry, nil)
}

func writeImage(path, bin, name, entry string, links []string) error {
	exe, err := os.ReadFile(bin)
	if err != nil {
		return fmt.Errorf("image %s: %w", name, err)
	}
	layer, err := imageLayer(exe, entry, links)
	if err != nil {
		return err
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	if _, err := zw.Write(layer); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	config, err := json.Marshal(map[string]any{
		"architecture": "amd64",
		"os":           "linux",
		"config":       map[string]any{"Entrypoint": []string{"/" + entry}, "Env": []string{"PATH=/bin"}},
		// The uncompressed layer's digest is the config's diff ID.
		"rootfs": map[string]any{"type": "layers", "diff_ids": []string{digest(layer)}},
	})
	if err != nil {
		return err
	}
	desc := func(mediaType string, b []byte) map[string]any {
		return map[string]any{"mediaType": mediaType, "digest": digest(b), "size": len(b)}
	}
	manifest, err := json.Marshal(map[string]any{
		"schemaVersion": 2,
		"mediaType":     "application/vnd.oci.image.manifest.v1+json",
		"config":        desc("application/vnd.oci.image.config.v1+json", config),
		"layers":        []any{desc("application/vnd.oci.image.layer.v1.tar+gzip", gz.Bytes())},
	})
	if err != nil {
		return err
	}
	md := desc("application/vnd.oci.image.manifest.v1+json", manifest)
	md["platform"] = map[string]string{"architecture": "amd64", "os": "linux"}
	md["annotations"] = map[string]string{"io.containerd.image.name": name, "org.opencontainers.image.ref.name": name}
	index, err := json.Marshal(map[string]any{"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json", "manifests": []any{md}})
	if err != nil {
		return err
	}
	return writeLayout(path, []layoutFile{
		{"oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)},
		{"index.json", index},
		{blob(config), config},
		{blob(manifest), manifest},
		{blob(gz.Bytes()), gz.Bytes()},
	})
}

// imageMtime is every file's modification time in an image: the epoch,
// so that an image's digests do not depend on when it was built.
var imageMtime = time.Unix(0, 0)

// imageLayer is the image's one layer, uncompressed: bin, etc and tmp,
// the executable at entry and links to it.
func imageLayer(exe []byte, entry string, links []string) ([]byte, error) {
	var layer bytes.Buffer
	tw := tar.NewWriter(&layer)
	for _, d := range []string{"bin/", "etc/", "tmp/"} {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d, Mode: 0o755, ModTime: imageMtime}); err != nil {
			return nil, err
		}
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: entry, Mode: 0o755, Size: int64(len(exe)), ModTime: imageMtime}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(exe); err != nil {
		return nil, err
	}
	for _, l := range links {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: l, Linkname: "/" + entry, Mode: 0o777, ModTime: imageMtime}); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return layer.Bytes(), nil
}

// layoutFile is one file of an OCI image layout.
type layoutFile struct {
	name string
	data []byte
}

// writeLayout writes files as an OCI image layout tar at path, replaced
// atomically.
func writeLayout(path string, files []layoutFile) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	ow := tar.NewWriter(f)
	write := func() error {
		for _, d := range []string{"blobs/", "blobs/sha256/"} {
			if err := ow.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d, Mode: 0o755, ModTime: imageMtime}); err != nil {
				return err
			}
		}
		for _, fl := range files {
			if err := ow.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: fl.name, Mode: 0o644, Size: int64(len(fl.data)), ModTime: imageMtime}); err != nil {
				return err
			}
			if _, err := ow.Write(fl.data); err != nil {
				return err
			}
		}
		return ow.Close()
	}
	if err := write(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func blob(b []byte) string {
	sum := sha256.Sum256(b)
	return "blobs/sha256/" + hex.EncodeToString(sum[:])
}
