package calibrate

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
)

// ModelGoldens is where the simulated kubelet's behaviour is written down,
// relative to the module's root: bench/kubelet's request goldens (what a
// restart sends to the API server) and plan goldens (what it decides to
// do and when). A change of the model that changes what it does changes
// one of them (they are updated with -update), so their hash names the
// behaviour a calibration measured.
const ModelGoldens = "bench/kubelet/testdata"

// RemakeCommand is the command that makes the committed calibration again.
const RemakeCommand = "make calibrate"

// ModelFingerprint is the SHA-256, in hex, of every regular file of fsys
// (ModelGoldens), in the order of their paths: each file's path, its
// length and its bytes. A file added, removed, renamed or changed changes
// it; nothing else does (not the files' times or modes).
func ModelFingerprint(fsys fs.FS) (string, error) {
	var paths []string
	err := fs.WalkDir(fsys, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			paths = append(paths, path)
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("listing the model's goldens: %w", err)
	}
	if len(paths) == 0 {
		return "", fmt.Errorf("no model goldens: %s is empty", ModelGoldens)
	}
	sort.Strings(paths)
	h := sha256.New()
	for _, p := range paths {
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return "", fmt.Errorf("reading the model's golden %s: %w", p, err)
		}
		// Path and length delimit each file, so that no two trees hash
		// alike by moving bytes from one file to the next.
		h.Write([]byte(p + "\x00" + strconv.Itoa(len(b)) + "\x00"))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
