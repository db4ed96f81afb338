package cluster

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/prometheus/procfs"
)

// Ports are an embedded cluster's loopback ports, chosen by stormbench
// rather than by kwokctl. kwokctl takes the first free port counting down
// from 32767 and knows only the clusters in its own KWOK_WORKDIR, and each
// stormbench cluster has a private one. So a cluster created while another
// was stopped (`kwokctl stop cluster`: a snapshot save or restore) took the
// stopped cluster's ports, all of them, and when that one started again its
// etcd, kube-controller-manager, kube-scheduler and kwok-controller could
// not bind and exited; its API server, on a port of its own, went on with
// the other cluster's etcd, and the health checks passed against the other
// cluster's components. Seen in CI with two test lanes: a shared cluster
// created during the other lane's restore never made its nodes Ready.
//
// Every port a stormbench cluster uses is therefore reserved machine-wide
// in portRegistryDir for as long as the cluster's directory exists, stopped
// or not, and chosen at random below the kernel's ephemeral range (where
// outgoing connections take their local ports) rather than in kwokctl's
// sequence.
type Ports struct {
	EtcdPeer, Etcd, APIServer, ControllerManager, Scheduler, Kwok int
}

// portRegistryDir holds a file per reserved port, named by the port and
// holding the directory of the cluster that owns it.
func portRegistryDir() string { return filepath.Join(os.TempDir(), "stormbench-ports") }

// portRange is where reservePorts chooses: from 10000 (kwokctl's floor) to
// below the kernel's ephemeral range (net.ipv4.ip_local_port_range; 32768
// by default).
func portRange() (lo, hi int) {
	lo, hi = 10000, 32767
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return lo, hi
	}
	if r, err := fs.SysctlInts("net.ipv4.ip_local_port_range"); err == nil && len(r) == 2 && r[0]-1 > lo+1000 {
		hi = r[0] - 1
	}
	return lo, hi
}

// reservePorts chooses the cluster's ports and records them as owner's
// (the cluster's directory). The caller holds the port lock (lockPorts), so
// no other stormbench process chooses at the same time. A port is taken
// when it is reserved by a cluster whose directory still exists, or when it
// cannot be bound on 127.0.0.1 and on every address (kwokctl's own test).
// Reservations of clusters whose directory is gone are removed on the way.
func reservePorts(owner string) (Ports, error) {
	dir, ok := registry()
	reserved := map[int]bool{}
	if ok {
		reserved = reservedPorts(dir, owner)
	}
	lo, hi := portRange()
	var chosen []int
	for tries := 0; len(chosen) < 6; tries++ {
		if tries > 5000 {
			releasePorts(owner)
			return Ports{}, fmt.Errorf("reserving ports: no 6 free loopback ports found in %d–%d", lo, hi)
		}
		p := lo + rand.IntN(hi-lo+1)
		if reserved[p] || !portFree(p) {
			continue
		}
		reserved[p] = true
		if ok {
			switch err := record(dir, p, owner); {
			case errors.Is(err, fs.ErrExist):
				continue // someone else's entry, or a link planted there
			case err != nil:
				// Not ours to write (a registry root made, run as
				// another user): the ports are not recorded, as
				// without a registry.
				releasePorts(owner)
				ok = false
			}
		}
		chosen = append(chosen, p)
	}
	return Ports{EtcdPeer: chosen[0], Etcd: chosen[1], APIServer: chosen[2], ControllerManager: chosen[3], Scheduler: chosen[4], Kwok: chosen[5]}, nil
}

// registry returns the registry directory, creating it, and whether it can
// be used: a directory (not a link) owned by this user or by root. Without
// it ports are still chosen at random and tested, only not recorded.
func registry() (string, bool) {
	dir := portRegistryDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return dir, false
	}
	st, err := os.Lstat(dir)
	if err != nil || !st.IsDir() {
		return dir, false
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); !ok || (sys.Uid != 0 && int(sys.Uid) != os.Geteuid()) {
		return dir, false
	}
	return dir, true
}

// record writes port's reservation for owner. A file that exists already
// (another cluster's, or a link someone put there) is not overwritten:
// the error is then fs.ErrExist.
func record(dir string, port int, owner string) error {
	f, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(port)), os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(owner)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
	return err
}

// reservedPorts reads the registry: the ports of clusters whose directory
// exists. Entries of owner (a cluster created again under the same name)
// and of clusters that are gone are removed.
func reservedPorts(dir, owner string) map[int]bool {
	out := map[int]bool{}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		path := filepath.Join(dir, e.Name())
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		held := string(b)
		if _, err := os.Stat(held); held == owner || errors.Is(err, os.ErrNotExist) {
			_ = os.Remove(path)
			continue
		}
		out[p] = true
	}
	return out
}

// releasePorts removes owner's reservations.
func releasePorts(owner string) {
	dir, ok := registry()
	if !ok {
		return
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		if b, err := os.ReadFile(path); err == nil && string(b) == owner {
			_ = os.Remove(path)
		}
	}
}

// portFree reports whether port can be listened on, on 127.0.0.1 and on
// every address.
func portFree(port int) bool {
	for _, host := range []string{"127.0.0.1", ""} {
		l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
		if err != nil {
			return false
		}
		_ = l.Close()
	}
	return true
}
