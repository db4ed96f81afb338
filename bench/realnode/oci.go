package realnode

import (
	"archive/tar"
	"bytes"
	"cmp"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// ImageName is the name stormbench's node image is imported under: the
// pause image every fleet pod template names, so that pods run on a
// containerd-backed node unchanged (IfNotPresent finds it imported), and
// the CRI's sandbox image.
const ImageName = "registry.k8s.io/pause:3.10"

// WriteImage writes an OCI image layout tarball (what `ctr images import`
// reads) holding one layer: the static binary bin as /entry, the image's
// entrypoint, with links to it, empty /etc and /tmp, and PATH=/bin. There
// is no registry on these machines; images are built from Go binaries:
// stormbench's node image (ImageName) is the multi-call pause binary,
// linked as /bin/cat, /bin/true and /bin/serve; the distroless image
// scripts/kubernetes/README.md describes is one binary without links.
func WriteImage(path, bin, name, entry string, links ...string) error {
	exe, err := os.ReadFile(bin)
	if err != nil {
		return fmt.Errorf("image %s: %w", name, err)
	}
	// The image's one layer, uncompressed: bin, etc and tmp, the
	// executable at entry and links to it.
	files := []tarEntry{{name: "bin/"}, {name: "etc/"}, {name: "tmp/"}, {name: entry, mode: 0o755, data: exe}}
	for _, l := range links {
		files = append(files, tarEntry{name: l, link: "/" + entry})
	}
	var lb bytes.Buffer
	if err := writeTar(&lb, files); err != nil {
		return err
	}
	layer := lb.Bytes()
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
	return writeLayout(path, []tarEntry{
		{name: "oci-layout", data: []byte(`{"imageLayoutVersion":"1.0.0"}`)},
		{name: "index.json", data: index},
		{name: blob(config), data: config},
		{name: blob(manifest), data: manifest},
		{name: blob(gz.Bytes()), data: gz.Bytes()},
	})
}

// imageMtime is every file's modification time in an image: the epoch,
// so that an image's digests do not depend on when it was built.
var imageMtime = time.Unix(0, 0)

// tarEntry is one entry of an image's tars: a directory (its name ends in
// a slash, mode 0755), a symbolic link to link (0777) or a file of data
// (mode, default 0644).
type tarEntry struct {
	name, link string
	mode       int64
	data       []byte
}

// writeTar writes entries to w as a tar, every one dated imageMtime.
func writeTar(w io.Writer, entries []tarEntry) error {
	tw := tar.NewWriter(w)
	for _, e := range entries {
		h := &tar.Header{Typeflag: tar.TypeReg, Name: e.name, Mode: cmp.Or(e.mode, 0o644), Size: int64(len(e.data)), ModTime: imageMtime}
		if strings.HasSuffix(e.name, "/") {
			h.Typeflag, h.Mode = tar.TypeDir, 0o755
		} else if e.link != "" {
			h.Typeflag, h.Linkname, h.Mode = tar.TypeSymlink, e.link, 0o777
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := tw.Write(e.data); err != nil {
			return err
		}
	}
	return tw.Close()
}

// writeLayout writes files as an OCI image layout tar at path, replaced
// atomically.
func writeLayout(path string, files []tarEntry) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if err := writeTar(f, append([]tarEntry{{name: "blobs/"}, {name: "blobs/sha256/"}}, files...)); err != nil {
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
