package cluster

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/stormbench/stormbench/bench/poll"
)

// portLockPath is the file whose lock serialises, across every stormbench
// process on the machine, the steps that choose loopback ports and bind
// them: choosing the API server's port and `kwokctl create` (which picks a
// free port for each other component and starts it), and `kwokctl start`
// (whose components bind their ports again). Two clusters created at the
// same moment otherwise chose the same free ports, and the slower one's
// components exited: seen when TestFleetSnapshotRoundTrip and
// TestRunInterleavedRepetitions started their clusters side by side (etcd,
// kube-controller-manager, kube-scheduler and kwok-controller of one
// cluster not running after 2 minutes).
func portLockPath() string { return filepath.Join(os.TempDir(), "stormbench-ports.lock") }

// lockPorts takes the machine-wide port lock (portLockPath), waiting for
// it as long as ctx allows, and returns its release. The lock is an
// advisory flock on an open file: it goes with the process, so a crashed
// holder never blocks the next. Without the lock file (a read-only
// temporary directory) it goes on unlocked, as before.
func lockPorts(ctx context.Context) (release func(), err error) {
	f, err := os.OpenFile(portLockPath(), os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return func() {}, nil
	}
	release = func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		_ = f.Close()
	}
	w := poll.Wait{Interval: 100 * time.Millisecond, What: "waiting for another stormbench process to start its cluster"}
	err = w.Until(ctx, func(context.Context) (bool, string, error) {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err != nil && err != syscall.EWOULDBLOCK && err != syscall.EINTR {
			// No flock here: go on unlocked.
			_ = f.Close()
			release = func() {}
			return true, "", nil
		}
		return err == nil, "", nil
	})
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return release, nil
}
