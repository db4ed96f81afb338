package realnode

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/procfs"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/clock"

	"github.com/stormbench/stormbench/bench/cluster"
	"github.com/stormbench/stormbench/bench/poll"
	"github.com/stormbench/stormbench/profiles"
)

// BytesPerNode is the resident memory of one hollow kubelet and its fake
// CRI, measured on this kind of machine (about 85 MB for the kubelet, a few
// MB for the runtime); the capacity check before a run uses it.
const BytesPerNode = 100 << 20

// Options configure one real node.
type Options struct {
	// Components locates hollow-kubelet and fake-cri.
	Components cluster.Components
	// AdminKubeconfig is the harness's kubeconfig; the node's kubeconfig is
	// a copy that impersonates the node.
	AdminKubeconfig string
	// Context is the kubeconfig context to use; empty for the current one.
	Context string
	// Dir is the node's own directory; it is created.
	Dir string
	// Name is the node name.
	Name string
	// PodCIDR is where the fake runtime takes sandbox IPs from.
	PodCIDR string
	// Labels are registered with the node (--node-labels).
	Labels map[string]string
	// CPU and Memory are the node's capacity, as quantities ("32", "256Gi").
	CPU, Memory string
	// MaxPods is the node's pod capacity.
	MaxPods int
	// LeaseDurationSeconds and StatusUpdateFrequency are the kubelet's
	// nodeLeaseDurationSeconds and nodeStatusUpdateFrequency.
	LeaseDurationSeconds  int
	StatusUpdateFrequency time.Duration
	// KubeAPIQPS and KubeAPIBurst are the kubelet's kubeAPIQPS and
	// kubeAPIBurst; 0 keeps the kubelet's defaults (50, 100).
	KubeAPIQPS, KubeAPIBurst int
	// Verbosity is the components' klog -v.
	Verbosity int
}

// Node is one running real node.
type Node struct {
	bootID string

	procs
}

// New prepares a node: its directory and impersonating kubeconfig. Nothing
// runs until Start.
func New(o Options) (*Node, error) {
	if err := o.Components.CheckRealNodes(); err != nil {
		return nil, err
	}
	if o.Name == "" || o.Dir == "" || o.AdminKubeconfig == "" {
		return nil, errors.New("real node: name, directory and admin kubeconfig are required")
	}
	n := &Node{bootID: newBootID()}
	if err := n.init(n, "real node", o, "cri.sock", ""); err != nil {
		return nil, err
	}
	return n, nil
}

// Cost is the hollow kubelet's and fake-cri's usage (see Runner).
func (n *Node) Cost() (map[string]Usage, error) { return n.procs.cost("", nil) }

// RuntimeLog is the fake CRI's log file.
func (n *Node) RuntimeLog() string { return filepath.Join(n.opts.Dir, "fake-cri.log") }

// BootID is the boot ID the kubelet reports; a reboot changes it.
func (n *Node) BootID() string { return n.bootID }

func (n *Node) socket() string { return filepath.Join(n.opts.Dir, "cri.sock") }

// writeKubeconfig writes the admin kubeconfig with the current context's
// user impersonating the node (user system:node:<name>, group
// system:nodes): the Node authorizer and NodeRestriction then treat it as
// that node.
func (n *procs) writeKubeconfig() error {
	cfg, err := clientcmd.LoadFromFile(n.opts.AdminKubeconfig)
	if err != nil {
		return fmt.Errorf("real node %s: reading kubeconfig: %w", n.opts.Name, err)
	}
	ctxName := cmp.Or(n.opts.Context, cfg.CurrentContext)
	kctx, ok := cfg.Contexts[ctxName]
	if !ok {
		return fmt.Errorf("real node %s: kubeconfig has no context %q", n.opts.Name, ctxName)
	}
	user, ok := cfg.AuthInfos[kctx.AuthInfo]
	if !ok {
		return fmt.Errorf("real node %s: kubeconfig context %q has no user", n.opts.Name, ctxName)
	}
	u := user.DeepCopy()
	u.Impersonate = "system:node:" + n.opts.Name
	u.ImpersonateGroups = []string{"system:nodes"}
	cfg.AuthInfos[kctx.AuthInfo] = u
	cfg.CurrentContext = ctxName
	if err := clientcmd.WriteToFile(*cfg, n.kubeconfigPath()); err != nil {
		return fmt.Errorf("real node %s: writing kubeconfig: %w", n.opts.Name, err)
	}
	return os.Chmod(n.kubeconfigPath(), 0o600)
}

// Start starts the runtime and the kubelet with the given feature gates.
func (n *Node) Start(gates map[string]bool) error {
	if err := n.StartRuntime(false); err != nil {
		return err
	}
	return n.StartKubelet(gates)
}

// StartRuntime starts the fake CRI; afterReboot makes it mark every
// container exited and every sandbox not ready first, as containerd's
// on-disk metadata looks after a reboot.
func (n *Node) StartRuntime(afterReboot bool) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.runtime.alive() {
		return fmt.Errorf("real node %s: runtime already running (pid %d)", n.opts.Name, n.runtime.pid())
	}
	args := []string{
		"--listen", "unix://" + n.socket(),
		"--state", filepath.Join(n.opts.Dir, "cri-state.json"),
		"--pod-cidr", n.opts.PodCIDR,
		"-v", strconv.Itoa(n.opts.Verbosity),
	}
	if afterReboot {
		args = append(args, "--reboot")
	}
	p, err := startProc(n.opts.Components.Path(cluster.BinFakeCRI), args, n.RuntimeLog(), filepath.Join(n.opts.Dir, "fake-cri.pid"))
	if err != nil {
		return fmt.Errorf("real node %s: starting fake-cri: %w (log: %s)", n.opts.Name, err, n.RuntimeLog())
	}
	n.runtime = p
	return n.waitSocket(p, "fake-cri", n.socket(), n.RuntimeLog(), 10*time.Second)
}

// StartKubelet starts the hollow kubelet with the given feature gates.
func (n *Node) StartKubelet(gates map[string]bool) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.kubelet.alive() {
		return fmt.Errorf("real node %s: kubelet already running (pid %d)", n.opts.Name, n.kubelet.pid())
	}
	args := []string{
		"--kubeconfig", n.kubeconfigPath(),
		"--name", n.opts.Name,
		"--root-dir", filepath.Join(n.opts.Dir, "kubelet"),
		"--runtime-endpoint", "unix://" + n.socket(),
		"--boot-id", n.bootID,
		// Without a cluster DNS every pod sync posts MissingClusterDNS
		// warning events, which a real cluster's kubelet does not.
		"--cluster-dns", "10.96.0.10", "--cluster-domain", "cluster.local",
		"--node-labels", joinMap(n.opts.Labels),
		"-v", strconv.Itoa(n.opts.Verbosity),
	}
	// Flags without a value (zero options) are left out.
	positive := func(i int) string {
		if i <= 0 {
			return ""
		}
		return strconv.Itoa(i)
	}
	status := ""
	if n.opts.StatusUpdateFrequency > 0 {
		status = n.opts.StatusUpdateFrequency.String()
	}
	for _, f := range [][2]string{
		{"--feature-gates", JoinGates(gates)}, {"--cpu", n.opts.CPU}, {"--memory", n.opts.Memory},
		{"--max-pods", positive(n.opts.MaxPods)}, {"--node-lease-duration-seconds", positive(n.opts.LeaseDurationSeconds)},
		{"--node-status-update-frequency", status}, {"--kube-api-qps", positive(n.opts.KubeAPIQPS)}, {"--kube-api-burst", positive(n.opts.KubeAPIBurst)},
	} {
		if f[1] != "" {
			args = append(args, f[0], f[1])
		}
	}
	p, err := startProc(n.opts.Components.Path(cluster.BinHollowKubelet), args, n.KubeletLog(), filepath.Join(n.opts.Dir, "kubelet.pid"))
	if err != nil {
		return fmt.Errorf("real node %s: starting hollow-kubelet: %w (log: %s)", n.opts.Name, err, n.KubeletLog())
	}
	n.kubelet = p
	return nil
}

// KillRuntime kills the fake CRI (its socket then refuses connections, as a
// stopped containerd's does); its state stays on disk.
func (n *Node) KillRuntime() error {
	// A killed process leaves its socket file; a refused connection is
	// what the kubelet sees either way.
	_, p := n.get()
	return p.stop(0)
}

// PowerOff kills kubelet and runtime at once, as losing power does; the
// next StartRuntime(true) and StartKubelet see a rebooted machine with a
// new boot ID.
func (n *Node) PowerOff() error {
	return n.stopBoth(func() { n.bootID = newBootID() }, 0, 0)
}

// Stop stops both processes; the node object stays in the cluster.
func (n *Node) Stop() error { return n.stopBoth(nil, 10*time.Second, 5*time.Second) }

func joinMap(m map[string]string) string {
	parts := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, ",")
}

// JoinGates writes feature gates as the kubelet's --feature-gates takes
// them, sorted by name: "A=true,B=false"; messages show them so too.
func JoinGates(g map[string]bool) string {
	m := make(map[string]string, len(g))
	for k, v := range g {
		m[k] = strconv.FormatBool(v)
	}
	return joinMap(m)
}

func newBootID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// proc is one supervised child process.
type proc struct {
	cmd     *exec.Cmd
	pidFile string
	done    chan struct{}
	err     error
}

// startProc starts bin with args, its stdout and stderr appended to log,
// its pid in pidFile. The child is killed if stormbench dies (Pdeathsig),
// and the embedded cluster's Down kills it by its pid file.
func startProc(bin string, args []string, log, pidFile string) (*proc, error) {
	f, err := os.OpenFile(log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	fmt.Fprintf(f, "=== %s %s\n", time.Now().UTC().Format(time.RFC3339Nano), strings.Join(append([]string{filepath.Base(bin)}, args...), " "))
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, err
	}
	p := &proc{cmd: cmd, pidFile: pidFile, done: make(chan struct{})}
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(cmd.Process.Pid)), 0o600); err != nil {
		_ = cmd.Process.Kill()
	}
	go func() {
		p.err = cmd.Wait()
		f.Close()
		_ = os.Remove(pidFile)
		close(p.done)
	}()
	return p, nil
}

func (p *proc) alive() bool {
	if p == nil {
		return false
	}
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

func (p *proc) pid() int {
	if p == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

func (p *proc) exitErr() string {
	if p == nil {
		return "never started"
	}
	if p.alive() {
		return "running"
	}
	if p.err == nil {
		return "exited with status 0"
	}
	return p.err.Error()
}

// stop sends SIGTERM and waits up to grace, then SIGKILL; grace 0 kills at
// once. Stopping a process that is not running is not an error.
func (p *proc) stop(grace time.Duration) error {
	if !p.alive() {
		return nil
	}
	sig := syscall.SIGTERM
	if grace == 0 {
		sig = syscall.SIGKILL
	}
	_ = p.cmd.Process.Signal(sig)
	if grace > 0 {
		select {
		case <-p.done:
			return nil
		case <-time.After(grace):
			_ = p.cmd.Process.Kill()
		}
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("process %d did not exit after SIGKILL", p.pid())
	}
}

// Usage is a process's resource use.
type Usage struct {
	// CPUSeconds is user plus system CPU time.
	CPUSeconds float64
	// PeakRSSBytes is the resident set's high-water mark (VmHWM).
	PeakRSSBytes int64
	// RSSBytes is the current resident set.
	RSSBytes int64
}

// ProcUsage reads a process's CPU time (user plus system, from
// /proc/<pid>/stat) and its memory (VmHWM and VmRSS of /proc/<pid>/status).
func ProcUsage(pid int) (Usage, error) {
	var u Usage
	p, err := procfs.NewProc(pid)
	if err != nil {
		return u, err
	}
	stat, err := p.Stat()
	if err != nil {
		return u, err
	}
	u.CPUSeconds = stat.CPUTime()
	status, err := p.NewStatus()
	if err != nil {
		return u, err
	}
	u.PeakRSSBytes, u.RSSBytes = int64(status.VmHWM), int64(status.VmRSS)
	return u, nil
}

// primitives are what a restart does to a real node, hollow or
// containerd-backed.
type primitives interface {
	Name() string
	StopKubelet() error
	StartKubelet(gates map[string]bool) error
	KillRuntime() error
	StartRuntime(afterReboot bool) error
	HangRuntime() error
	ResumeRuntime() error
	PowerOff() error
}

// Runner is a real node as runs and calibration drive it.
type Runner interface {
	Name() string
	Start(gates map[string]bool) error
	Stop() error
	Restart(ctx context.Context, kind, runtimeMode string, downtime time.Duration, gates map[string]bool) (time.Time, error)
	KubeletAlive() bool
	KubeletExit() string
	KubeletLog() string
	KubeletUsage() (Usage, error)
	// Cost is the current usage of the node's machinery by part
	// (PartKubelet, PartRuntime, PartShims): CPU since each process
	// started, resident memory now. The containers' own processes are
	// not in it.
	Cost() (map[string]Usage, error)
}

var (
	_ Runner = (*Node)(nil)
	_ Runner = (*ContainerdNode)(nil)
)

// Start creates the node of o, on a containerd of its own (NewContainerd)
// or beside the fake CRI (New), hands it to add, so that the caller stops
// it whatever happens next, and starts it.
func Start(o Options, containerd bool, add func(Runner)) error {
	var n Runner
	var err error
	if containerd {
		n, err = NewContainerd(o)
	} else {
		n, err = New(o)
	}
	if err != nil {
		return err
	}
	add(n)
	return n.Start(nil)
}

// Restart carries out one restart of kind (profiles.StormKubelet, Runtime
// or Reboot) with the given downtime; the kubelet starts again with gates.
// It returns when the processes are started again, with the time the
// kubelet (for a runtime restart, the runtime) came back.
func (p *procs) Restart(ctx context.Context, kind, runtimeMode string, downtime time.Duration, gates map[string]bool) (back time.Time, err error) {
	n := p.node
	// A real node's processes run on the real clock: its downtime is
	// slept, and the time it came back read, on it.
	clk := clock.RealClock{}
	sleep := func() error { return poll.Sleep(ctx, clk, downtime) }
	switch kind {
	case profiles.StormKubelet:
		if err := n.StopKubelet(); err != nil {
			return back, err
		}
		if err := sleep(); err != nil {
			return back, errors.Join(err, n.StartKubelet(gates))
		}
		return clk.Now(), n.StartKubelet(gates)
	case profiles.StormRuntime:
		// Hung: frozen with SIGSTOP, so calls hang until they time out;
		// refused (the default): stopped, so its socket refuses them.
		if runtimeMode == profiles.RuntimeHung {
			if err := n.HangRuntime(); err != nil {
				return back, err
			}
			err := sleep()
			return clk.Now(), errors.Join(err, n.ResumeRuntime())
		}
		if err := n.KillRuntime(); err != nil {
			return back, err
		}
		err := sleep()
		return clk.Now(), errors.Join(err, n.StartRuntime(false))
	case profiles.StormReboot:
		if err := n.PowerOff(); err != nil {
			return back, err
		}
		if err := sleep(); err != nil {
			// Interrupted: bring the node back all the same.
			return back, errors.Join(err, n.StartRuntime(true), n.StartKubelet(gates))
		}
		if err := n.StartRuntime(true); err != nil {
			return back, err
		}
		return clk.Now(), n.StartKubelet(gates)
	}
	return back, fmt.Errorf("real node %s: unknown storm kind %q", n.Name(), kind)
}

// MemAvailable reads MemAvailable from /proc/meminfo, in bytes; 0 when it
// cannot.
func MemAvailable() int64 {
	return meminfo(func(m procfs.Meminfo) *uint64 { return m.MemAvailableBytes })
}

// MemTotal reads MemTotal from /proc/meminfo, in bytes; 0 when it cannot.
func MemTotal() int64 { return meminfo(func(m procfs.Meminfo) *uint64 { return m.MemTotalBytes }) }

// meminfo reads one field of /proc/meminfo, in bytes; 0 when it cannot.
func meminfo(field func(procfs.Meminfo) *uint64) int64 {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return 0
	}
	m, err := fs.Meminfo()
	if err != nil || field(m) == nil {
		return 0
	}
	return int64(*field(m))
}
