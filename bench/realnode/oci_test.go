package realnode

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteImage writes an image of a small executable and reads it back
// as containerd would: the layout's index names the image and points at a
// manifest blob whose config and layer blobs exist with the digests the
// manifest gives; the same input gives the same bytes.
func TestWriteImage(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "pause")
	if err := os.WriteFile(bin, []byte("#!/bin/true\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	a, b := filepath.Join(dir, "a.tar"), filepath.Join(dir, "b.tar")
	for _, p := range []string{a, b} {
		if err := WriteImage(p, bin, "stormbench.io/pause:1", "bin/pause", "bin/sh"); err != nil {
			t.Fatal(err)
		}
	}
	ab, _ := os.ReadFile(a)
	bb, _ := os.ReadFile(b)
	if !bytes.Equal(ab, bb) {
		t.Error("two writes of the same image differ")
	}
	files := map[string][]byte{}
	tr := tar.NewReader(bytes.NewReader(ab))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(tr)
		files[h.Name] = data
	}
	var index struct {
		Manifests []struct {
			Digest      string            `json:"digest"`
			Annotations map[string]string `json:"annotations"`
		} `json:"manifests"`
	}
	if err := json.Unmarshal(files["index.json"], &index); err != nil || len(index.Manifests) != 1 {
		t.Fatalf("index.json: %v, %d manifests", err, len(index.Manifests))
	}
	m := index.Manifests[0]
	if got := m.Annotations["io.containerd.image.name"]; got != "stormbench.io/pause:1" {
		t.Errorf("image name %q", got)
	}
	blobOf := func(d string) []byte {
		t.Helper()
		data, ok := files["blobs/sha256/"+d[len("sha256:"):]]
		if !ok {
			t.Fatalf("no blob %s", d)
		}
		if digest(data) != d {
			t.Errorf("blob %s has digest %s", d, digest(data))
		}
		return data
	}
	var manifest struct {
		Config struct{ Digest string }   `json:"config"`
		Layers []struct{ Digest string } `json:"layers"`
	}
	if err := json.Unmarshal(blobOf(m.Digest), &manifest); err != nil || len(manifest.Layers) != 1 {
		t.Fatalf("manifest: %v, %d layers", err, len(manifest.Layers))
	}
	blobOf(manifest.Config.Digest)
	blobOf(manifest.Layers[0].Digest)
	if _, ok := files["oci-layout"]; !ok {
		t.Error("no oci-layout")
	}
}
