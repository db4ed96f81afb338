package realnode

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/stormbench/stormbench/bench/poll"
)

// procs are a real node's two supervised processes, hollow or
// containerd-backed alike: the kubelet and its runtime (fake-cri or
// containerd), and what a restart does to them the same way for both.
type procs struct {
	// what names the node in errors: "real node n1", "containerd node n1".
	what string
	opts Options
	// node is the node these are the processes of, for Restart.
	node primitives

	mu      sync.Mutex
	kubelet *proc
	runtime *proc
}

// init readies the processes of node, of kind ("real node", "containerd
// node"), in o.Dir, made absolute and created, with its kubeconfig
// (writeKubeconfig). sock, the runtime's socket in it, must leave room for
// suffix in a unix socket path: at most 107 bytes, 100 here.
func (p *procs) init(node primitives, kind string, o Options, sock, suffix string) error {
	abs, err := filepath.Abs(o.Dir)
	if err != nil {
		return err
	}
	o.Dir = abs
	p.what, p.opts, p.node = kind+" "+o.Name, o, node
	if sock = filepath.Join(abs, sock); len(sock+suffix) > 100 {
		return fmt.Errorf("%s: socket path %s is too long for a unix socket (%d bytes, at most 100): use a shorter --workdir", p.what, sock, len(sock+suffix))
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return fmt.Errorf("%s: %w", p.what, err)
	}
	return p.writeKubeconfig()
}

// Name returns the node name.
func (p *procs) Name() string { return p.opts.Name }

// KubeletLog is the kubelet's log file.
func (p *procs) KubeletLog() string { return filepath.Join(p.opts.Dir, "kubelet.log") }

func (p *procs) kubeconfigPath() string { return filepath.Join(p.opts.Dir, "kubeconfig") }

// get returns the current processes.
func (p *procs) get() (kubelet, runtime *proc) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.kubelet, p.runtime
}

// stopBoth stops the kubelet and the runtime, each with its grace period
// (proc.stop), after running locked, when set, under the lock. A runtime
// frozen by HangRuntime is thawed first, so that it can exit.
func (p *procs) stopBoth(locked func(), kubeletGrace, runtimeGrace time.Duration) error {
	p.mu.Lock()
	if locked != nil {
		locked()
	}
	k, r := p.kubelet, p.runtime
	p.mu.Unlock()
	if r.alive() {
		_ = syscall.Kill(r.pid(), syscall.SIGCONT)
	}
	return errors.Join(k.stop(kubeletGrace), r.stop(runtimeGrace))
}

// StopKubelet stops the kubelet as systemd does: SIGTERM, then SIGKILL
// after the grace period.
func (p *procs) StopKubelet() error {
	k, _ := p.get()
	return k.stop(10 * time.Second)
}

// HangRuntime freezes the runtime with SIGSTOP: connections are accepted
// by the kernel but never answered, a hung runtime (the containers of a
// containerd node run on in their shims).
func (p *procs) HangRuntime() error { return p.signalRuntime(syscall.SIGSTOP) }

// ResumeRuntime thaws a hung runtime with SIGCONT.
func (p *procs) ResumeRuntime() error { return p.signalRuntime(syscall.SIGCONT) }

func (p *procs) signalRuntime(sig syscall.Signal) error {
	_, r := p.get()
	if !r.alive() {
		return fmt.Errorf("%s: runtime is not running", p.what)
	}
	return syscall.Kill(r.pid(), sig)
}

// KubeletAlive reports whether the kubelet process runs; when it does not,
// KubeletExit says how it ended.
func (p *procs) KubeletAlive() bool {
	k, _ := p.get()
	return k.alive()
}

// KubeletExit describes how the last kubelet process ended.
func (p *procs) KubeletExit() string {
	k, _ := p.get()
	return k.exitErr()
}

// KubeletUsage is the current kubelet process's CPU time since it started
// and its peak resident memory.
func (p *procs) KubeletUsage() (Usage, error) {
	k, _ := p.get()
	if !k.alive() {
		return Usage{}, fmt.Errorf("%s: kubelet is not running", p.what)
	}
	return ProcUsage(k.pid())
}

// Part names of a node's Cost.
const (
	PartKubelet = "kubelet"
	PartRuntime = "runtime"
	PartShims   = "shims"
)

// cost reads the usage of the kubelet and the runtime process, and of
// extra processes under the part name extraPart.
func (p *procs) cost(extraPart string, extra []int) (map[string]Usage, error) {
	k, r := p.get()
	out := map[string]Usage{}
	add := func(part string, pid int) error {
		u, err := ProcUsage(pid)
		if err != nil {
			return fmt.Errorf("%s: %s (pid %d): %w", p.what, part, pid, err)
		}
		t := out[part]
		t.CPUSeconds += u.CPUSeconds
		t.RSSBytes += u.RSSBytes
		t.PeakRSSBytes += u.PeakRSSBytes
		out[part] = t
		return nil
	}
	for part, pr := range map[string]*proc{PartKubelet: k, PartRuntime: r} {
		if !pr.alive() {
			return nil, fmt.Errorf("%s: %s is not running", p.what, part)
		}
		if err := add(part, pr.pid()); err != nil {
			return nil, err
		}
	}
	for _, pid := range extra {
		// A shim may exit between the listing and the read.
		_ = add(extraPart, pid)
	}
	return out, nil
}

// waitSocket waits up to timeout until the runtime p listens on socket
// (the kubelet dials it at start), failing as soon as p exits. bin names
// the runtime in errors; log is where its output is.
func (p *procs) waitSocket(r *proc, bin, socket, log string, timeout time.Duration) error {
	w := poll.Wait{Interval: 20 * time.Millisecond, Timeout: timeout, What: fmt.Sprintf("%s: waiting for %s to listen on %s", p.what, bin, socket)}
	return w.Until(context.Background(), func(context.Context) (bool, string, error) {
		if _, err := os.Stat(socket); err == nil {
			return true, "", nil
		}
		if !r.alive() {
			return false, "", fmt.Errorf("%s: %s exited at start: %s (log: %s)", p.what, bin, r.exitErr(), log)
		}
		return false, "log: " + log, nil
	})
}
