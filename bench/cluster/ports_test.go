package cluster

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestReservePorts: the ports of clusters whose directory exists are never
// chosen again, stopped or not; a cluster that is gone frees its ports; a
// link planted in the registry is neither followed nor overwritten.
func TestReservePorts(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	lo, hi := portRange()
	dirA, dirB := t.TempDir(), t.TempDir()
	a, err := reservePorts(dirA)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range a.list() {
		if p < lo || p > hi || seen[p] {
			t.Fatalf("ports %v: %d repeated or outside %d–%d", a, p, lo, hi)
		}
		seen[p] = true
	}
	// b while a holds its ports (as a stopped cluster does: nothing
	// listens on them): none of a's.
	b, err := reservePorts(dirB)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range b.list() {
		if seen[p] {
			t.Fatalf("b got port %d of a (a %v, b %v)", p, a, b)
		}
	}
	if got := reservedPorts(portRegistryDir(), ""); len(got) != 12 {
		t.Fatalf("registry holds %d ports, want 12: %v", len(got), got)
	}
	// a is gone (its directory removed): its reservations go with it.
	if err := os.RemoveAll(dirA); err != nil {
		t.Fatal(err)
	}
	if got := reservedPorts(portRegistryDir(), ""); len(got) != 6 || got[a.Etcd] {
		t.Fatalf("after a is gone the registry holds %v, want b's 6", got)
	}
	releasePorts(dirB)
	if got := reservedPorts(portRegistryDir(), ""); len(got) != 0 {
		t.Fatalf("after releasing b the registry holds %v", got)
	}

	// A link in the registry: record refuses it and leaves its target.
	target := filepath.Join(t.TempDir(), "target")
	if err := os.WriteFile(target, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(portRegistryDir(), strconv.Itoa(lo))); err != nil {
		t.Fatal(err)
	}
	if err := record(portRegistryDir(), lo, dirB); !errors.Is(err, fs.ErrExist) {
		t.Errorf("record through a link: %v, want it refused as existing", err)
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Errorf("link target now %q", b)
	}
}

// TestEmbeddedConfigPorts: the reserved ports go into kwokctl's
// configuration, every one, so kwokctl chooses none.
func TestEmbeddedConfigPorts(t *testing.T) {
	e, err := NewEmbedded(EmbeddedOptions{Name: "x", WorkDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	e.ports = Ports{EtcdPeer: 11001, Etcd: 11002, APIServer: 11003, ControllerManager: 11004, Scheduler: 11005, Kwok: 11006}
	c, err := e.Config()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"etcdPeerPort: 11001", "etcdPort: 11002", "kubeApiserverPort: 11003", "kubeControllerManagerPort: 11004", "kubeSchedulerPort: 11005", "kwokControllerPort: 11006"} {
		if !strings.Contains(string(c), want) {
			t.Errorf("configuration lacks %q:\n%s", want, c)
		}
	}
}

func (p Ports) list() []int {
	return []int{p.EtcdPeer, p.Etcd, p.APIServer, p.ControllerManager, p.Scheduler, p.Kwok}
}
