package cluster

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/procfs"

	"github.com/stormbench/stormbench/bench/poll"
)

// The embedded cluster's processes: which run, which died, and stopping them.

func (e *Embedded) waitGone(pids map[string]int, d time.Duration) {
	w := poll.Wait{Interval: 100 * time.Millisecond, Timeout: d}
	err := w.Until(context.Background(), func(context.Context) (bool, string, error) {
		return !slices.ContainsFunc(slices.Collect(maps.Values(pids)), ProcessAlive), "", nil
	})
	if err != nil {
		e.killPIDs(pids)
	}
}

func (e *Embedded) killPIDs(pids map[string]int) {
	for _, pid := range pids {
		if ProcessAlive(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// ProcessAlive reports whether a process with that id exists and is not a
// zombie.
func ProcessAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	p, err := procfs.NewProc(pid)
	if err != nil {
		return false
	}
	st, err := p.Stat()
	if err != nil {
		return false
	}
	return st.State != "Z" && st.State != "X"
}

// PIDs returns the process id of every component, by component name, read
// from kwokctl's pid files.
func (e *Embedded) PIDs() map[string]int {
	out := map[string]int{}
	entries, err := os.ReadDir(filepath.Join(e.Dir(), "pids"))
	if err != nil {
		return out
	}
	for _, en := range entries {
		name, ok := strings.CutSuffix(en.Name(), ".pid")
		if !ok {
			continue
		}
		if pids, _ := ReadPIDs(filepath.Join(e.Dir(), "pids", en.Name())); len(pids) == 1 {
			out[name] = pids[0]
		}
	}
	return out
}

// Dead returns the components whose process is not running, by name.
func (e *Embedded) Dead() []string {
	var dead []string
	for name, pid := range e.PIDs() {
		if !ProcessAlive(pid) {
			dead = append(dead, name)
		}
	}
	sort.Strings(dead)
	return dead
}

// KillRealNodes kills every real-node process (hollow-kubelet, fake-cri)
// that a pid file in a node directory under dir names: the cleanup of a run
// that did not stop its nodes. A pid is killed only while its command line
// still names one of those binaries, so a recycled pid is left alone.
// SIGCONT goes first, so that a frozen runtime dies too.
func KillRealNodes(dir string) {
	files, _ := filepath.Glob(filepath.Join(dir, "*", "*.pid"))
	for _, f := range files {
		pids, _ := ReadPIDs(f)
		if len(pids) != 1 || pids[0] <= 1 {
			continue
		}
		pid := pids[0]
		var args []string
		if proc, err := procfs.NewProc(pid); err == nil {
			args, _ = proc.CmdLine()
		}
		exe := ""
		if len(args) > 0 {
			exe = filepath.Base(args[0])
		}
		cmdline := strings.Join(args, " ")
		// The containerd nodes' kubelet and containerd only when their
		// command line names this node's directory (a pid file of another
		// machine's kubelet must not kill this one's).
		ours := exe == BinHollowKubelet || exe == BinFakeCRI ||
			(exe == BinKubelet || exe == "containerd") && strings.Contains(cmdline, filepath.Dir(f)+"/")
		if ours {
			_ = syscall.Kill(pid, syscall.SIGCONT)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		_ = os.Remove(f)
	}
	nodes, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, d := range nodes {
		for _, clean := range realNodeCleaners {
			clean(d)
		}
	}
}

// realNodeCleaners remove what a real node of another kind left on the
// machine besides its processes (bench/realnode registers the containerd
// nodes': shims, containers, mounts, bridge, cgroups).
var realNodeCleaners []func(dir string)

// RegisterRealNodeCleaner adds a cleaner KillRealNodes calls with each node
// directory.
func RegisterRealNodeCleaner(f func(dir string)) { realNodeCleaners = append(realNodeCleaners, f) }
