package calibrate

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/stormbench/stormbench/bench/kubeversion"
)

// ModelGoldens is where the simulated kubelet's behaviour is written down,
// relative to the module's root: bench/kubelet's request goldens (what a
// restart sends to the API server, and when) and plan goldens (what it
// decides to do and when). A change of the model that changes what it does
// changes one of them (they are updated with -update), so their hash names
// the behaviour a calibration measured. A kubelet start's plans
// (plan/start-*, plan/restart-*) are left out: a start is played in full
// by request goldens (a kubelet restart with either gate, a reboot, exited
// containers, a deleted pod, a flash), so how its plan is written is not
// what a calibration measured. A runtime outage's plans count: some of
// their variants have no request golden.
const ModelGoldens = "bench/kubelet/testdata"

// VersionGoldens is where, under ModelGoldens, the goldens of the simulated
// kubelet of each Kubernetes version other than kubeversion.Default are:
// versions/<version>/ (v1.37.2), in the layout of ModelGoldens
// (bench/kubelet TestRestartGolden's version cases). The default version's
// are ModelGoldens without this folder.
const VersionGoldens = "versions"

// ModelGoldensAt is where the goldens of version v's simulated kubelet
// are, relative to the module's root: ModelGoldens for the default
// version (without VersionGoldens), ModelGoldens/versions/<v> for another.
func ModelGoldensAt(v kubeversion.Version) string {
	if v.IsDefault() {
		return ModelGoldens
	}
	return path.Join(ModelGoldens, VersionGoldens, v.String())
}

// RemakeCommand is the command that makes the committed calibration again.
const RemakeCommand = "make calibrate"

// ModelFingerprint is the fingerprint of the default version's simulated
// kubelet: the SHA-256, in hex, of every regular file of fsys
// (ModelGoldens) but a start's plans and those under VersionGoldens, in the order of their
// paths: each file's path, its length and its bytes. A file added, removed,
// renamed or changed changes it; nothing else does (not the files' times or
// modes, nor another version's goldens).
func ModelFingerprint(fsys fs.FS) (string, error) {
	return fingerprint(fsys, ModelGoldens, VersionGoldens)
}

// ModelFingerprintAt is the fingerprint of version v's simulated kubelet,
// which a calibration of v records: ModelFingerprint for the default
// version; for another, the same hash of the files under
// VersionGoldens/<v> of fsys (ModelGoldens), with paths relative to that
// folder. A version's goldens are its kubelet restarts' requests; a
// change of the model that only the default version's goldens show (its
// plans, its other restart kinds) leaves the other versions' fingerprints
// as they were.
func ModelFingerprintAt(fsys fs.FS, v kubeversion.Version) (string, error) {
	if v.IsDefault() {
		return ModelFingerprint(fsys)
	}
	dir := path.Join(VersionGoldens, v.String())
	sub, err := fs.Sub(fsys, dir)
	if err != nil {
		return "", fmt.Errorf("the model's goldens of Kubernetes %s: %w", v, err)
	}
	return fingerprint(sub, ModelGoldensAt(v), "")
}

// fingerprint hashes the regular files of fsys (named where for errors),
// skipping the folder skip at its root when set.
func fingerprint(fsys fs.FS, where, skip string) (string, error) {
	var paths []string
	err := fs.WalkDir(fsys, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if skip != "" && d.IsDir() && path == skip {
			return fs.SkipDir
		}
		if d.Type().IsRegular() && !startPlan(path) {
			paths = append(paths, path)
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("listing the model's goldens in %s: %w", where, err)
	}
	if len(paths) == 0 {
		return "", fmt.Errorf("no model goldens: %s is empty", where)
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

// startPlan says whether the golden at p (relative to ModelGoldens) is a
// kubelet start's plan, which the fingerprint leaves out (ModelGoldens):
// every plan golden but a runtime outage's.
func startPlan(p string) bool {
	return path.Dir(p) == "plan" && !strings.HasPrefix(path.Base(p), "runtime-")
}

// modelGoldens is where the goldens of r's model fingerprint are: those of
// its kubelet version (ModelGoldensAt; the default's when it names none or
// one stormbench does not know).
func (r *Result) modelGoldens() string {
	v, _ := kubeversion.Parse(r.KubeVersion)
	return ModelGoldensAt(v)
}
