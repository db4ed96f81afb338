package cluster

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/stormbench/stormbench/bench/kubeversion"
	"github.com/stormbench/stormbench/profiles"
)

// KWOK management label. The embedded kwok controller manages only nodes
// labelled KubeletLabel=KubeletUp; relabelling a node to KubeletDown makes
// KWOK stop renewing its lease and status at once, which is how a storm pauses
// a node's "kubelet". (The annotation selector does not stop renewals when the
// annotation goes away: KWOK keeps a node it manages until the label selector
// no longer matches.)
const (
	KubeletLabel = "stormbench.io/kubelet"
	KubeletUp    = "up"
	KubeletDown  = "down"
)

// KubeVersion is the default Kubernetes version, the one `make components`
// builds into bin/ itself (kubeversion.Default); an embedded cluster runs
// its Components' version (Embedded.KubeVersion).
const KubeVersion = "v1.36.3"

// EmbeddedOptions configures an embedded cluster.
type EmbeddedOptions struct {
	// Name is the kwokctl cluster name.
	Name string
	// WorkDir is kwokctl's private KWOK_WORKDIR.
	WorkDir string
	// Components locates the binaries.
	Components Components
	// Timing is the heartbeat and node-lifecycle timing.
	Timing profiles.Timing
	// ControlPlane tunes the components.
	ControlPlane profiles.ControlPlane
	// Log receives kwokctl's output; nil discards it.
	Log io.Writer
	// AuditLog makes kube-apiserver write a Metadata-level audit log of
	// every request to AuditLogPath; calibration attributes requests to
	// nodes with it.
	AuditLog bool
}

// Embedded is a kwokctl binary-runtime cluster listening on 127.0.0.1 only.
type Embedded struct {
	opts EmbeddedOptions
	// ports are the component ports Up reserved (ports.go); zero before
	// Up, when kwokctl's configuration leaves them to kwokctl.
	ports Ports
}

// NewEmbedded returns a handle on the embedded cluster opts.Name in
// opts.WorkDir; nothing is started until Up.
func NewEmbedded(opts EmbeddedOptions) (*Embedded, error) {
	if opts.Name == "" {
		return nil, errors.New("embedded cluster: empty name")
	}
	if opts.WorkDir == "" {
		return nil, errors.New("embedded cluster: empty work directory")
	}
	abs, err := filepath.Abs(opts.WorkDir)
	if err != nil {
		return nil, fmt.Errorf("embedded cluster: %w", err)
	}
	opts.WorkDir = abs
	opts.Log = cmp.Or[io.Writer](opts.Log, io.Discard)
	return &Embedded{opts: opts}, nil
}

// Name returns the cluster name.
func (e *Embedded) Name() string { return e.opts.Name }

// KubeVersion is the Kubernetes version of the cluster's control plane:
// its Components' version.
func (e *Embedded) KubeVersion() kubeversion.Version { return e.opts.Components.KubeVersion() }

// Dir is kwokctl's directory for this cluster (logs, pids, pki).
func (e *Embedded) Dir() string { return filepath.Join(e.opts.WorkDir, "clusters", e.opts.Name) }

// Kubeconfig is the path of the cluster's admin kubeconfig (mode 0600).
func (e *Embedded) Kubeconfig() string {
	return filepath.Join(e.opts.WorkDir, e.opts.Name+".kubeconfig")
}

// LogPath returns where a component's log is.
func (e *Embedded) LogPath(component string) string {
	return filepath.Join(e.Dir(), "logs", component+".log")
}

// AuditLogPath is where kube-apiserver writes its audit log when
// EmbeddedOptions.AuditLog is set: one JSON event per line.
func (e *Embedded) AuditLogPath() string { return filepath.Join(e.Dir(), "logs", "audit.log") }

// Exists reports whether the cluster's directory exists (it was created and
// not deleted).
func (e *Embedded) Exists() bool {
	_, err := os.Stat(filepath.Join(e.Dir(), "kwok.yaml"))
	return err == nil
}

// NodeEvictionRate is the controller manager's --node-eviction-rate in this
// cluster, as the flag spells it: the profile's timing.nodeEvictionRate, or
// the KCM's default 0.1 when that is 0.
func (e *Embedded) NodeEvictionRate() string {
	if r := e.opts.Timing.NodeEvictionRate; r > 0 {
		return strconv.FormatFloat(r, 'g', -1, 64)
	}
	return "0.1" // kube-controller-manager 1.36 default
}

// Command is a stormbench command on this cluster (its name and work
// directory), for a message's hint: "down", "status".
func (e *Embedded) Command(verb string) string {
	return fmt.Sprintf("stormbench cluster %s --name %s --workdir %s", verb, e.opts.Name, e.opts.WorkDir)
}

// UpFor brings the cluster up for one command's life (run, calibrate) and
// returns what ends it: stop brings the cluster down, or with keep leaves it
// running and says on w how to reach and remove it. logf says what it does.
func (e *Embedded) UpFor(ctx context.Context, keep bool, w io.Writer, logf func(string, ...any)) (stop func(), err error) {
	if err := e.Up(ctx); err != nil {
		return func() {}, err
	}
	return func() {
		if keep {
			fmt.Fprintf(w, "Embedded cluster %s kept: kubeconfig %s; stop it with `%s`\n", e.opts.Name, e.Kubeconfig(), e.Command("down"))
			return
		}
		logf("Stopping embedded cluster %s", e.opts.Name)
		if err := e.Down(context.WithoutCancel(ctx)); err != nil {
			fmt.Fprintf(w, "stormbench: %v\n", err)
		}
	}, nil
}

// Up creates and starts the cluster and waits until the API server serves
// (kwokctl's --wait); WaitHealthy waits for every component. When a
// component fails to start, the error names it and where its log is.
func (e *Embedded) Up(ctx context.Context) error {
	if e.Exists() {
		return fmt.Errorf("embedded cluster %q already exists in %s: use it with --kubeconfig %s, or remove it with `%s`", e.opts.Name, e.opts.WorkDir, e.Kubeconfig(), e.Command("down"))
	}
	if err := os.MkdirAll(e.opts.WorkDir, 0o700); err != nil {
		return fmt.Errorf("creating work directory: %w", err)
	}
	bootFailed, err := e.up(ctx)
	if err == nil || !bootFailed || ctx.Err() != nil {
		return err
	}
	// kwokctl reported the cluster serving, but the API server stopped
	// answering on its port before the component identities were in
	// (seen once in a CI rehearsal, with another embedded cluster running
	// beside it; its log was not kept). Create it once more, on a new
	// port, rather than fail a run that has not started yet; the first
	// error, with failureHint's diagnosis, goes with the second's.
	first := err
	if derr := e.Down(context.WithoutCancel(ctx)); derr != nil {
		return errors.Join(first, derr)
	}
	if _, err = e.up(ctx); err != nil {
		return fmt.Errorf("%w\n  (a first attempt had failed too: %v)", err, first)
	}
	return nil
}

// up is one attempt of Up. bootFailed says kwokctl created the cluster and
// only setting up the component identities failed.
func (e *Embedded) up(ctx context.Context) (bootFailed bool, err error) {
	// From choosing ports to the components listening on them, no other
	// cluster on this machine may choose (lockPorts).
	release, err := lockPorts(ctx)
	if err != nil {
		return false, err
	}
	defer func() {
		if release != nil {
			release()
		}
	}()
	if e.ports, err = reservePorts(e.portOwner()); err != nil {
		return false, err
	}
	var ids []identity
	if e.realisticAPF() {
		if ids, err = newIdentities(); err != nil {
			return false, err
		}
		if err := e.writeIdentities(ids, e.ports.APIServer); err != nil {
			return false, err
		}
	}
	cfgPath, err := e.writeConfigs()
	if err != nil {
		return false, err
	}
	// The KWOK controller's and the harness's RBAC go in as soon as the
	// API server answers, while kwokctl is still starting the rest.
	bootCtx, bootCancel := context.WithCancel(ctx)
	defer bootCancel()
	bootDone := make(chan error, 1)
	if ids != nil {
		go func() { bootDone <- e.bootstrapIdentities(bootCtx, e.ports.APIServer) }()
	} else {
		bootDone <- nil
	}
	out, err := e.kwokctl(ctx, "create", "cluster",
		"--name", e.opts.Name,
		"--runtime", "binary",
		"--config", cfgPath,
		"--kubeconfig", e.Kubeconfig(),
		"--wait", "2m",
		"--timeout", "3m",
	)
	// Every component listens now (kwokctl waited for them): another
	// cluster may choose its ports.
	release()
	release = nil
	if err != nil {
		hint := e.failureHint(out)
		// Stop whatever did start; keep the files so the logs named above
		// can be read.
		e.killPIDs(e.PIDs())
		return false, fmt.Errorf("creating embedded cluster %q: %w%s\n  its files are kept in %s; remove them with `%s`",
			e.opts.Name, err, hint, e.Dir(), e.Command("down"))
	}
	// The API server serves now; give the bootstrap a minute to land.
	select {
	case err = <-bootDone:
	case <-time.After(time.Minute):
		bootCancel()
		err = <-bootDone
	}
	if err != nil {
		// Which component stopped, and why, before they are killed.
		hint := e.failureHint(nil)
		e.killPIDs(e.PIDs())
		return true, fmt.Errorf("embedded cluster %q: %w%s\n  its files are kept in %s; remove them with `%s`",
			e.opts.Name, err, hint, e.Dir(), e.Command("down"))
	}
	return false, e.secureFiles()
}

// writeConfigs writes the kwokctl configuration, the scheduler's and the
// audit policy where the options ask for them, and returns the kwokctl
// configuration's path.
func (e *Embedded) writeConfigs() (string, error) {
	cfg, err := e.Config()
	if err != nil {
		return "", err
	}
	sched, err := e.SchedulerConfig()
	if err != nil {
		return "", err
	}
	if sched != nil {
		if err := os.WriteFile(e.schedulerConfigPath(), sched, 0o600); err != nil {
			return "", fmt.Errorf("writing kube-scheduler configuration: %w", err)
		}
	}
	if e.opts.AuditLog {
		if err := os.WriteFile(e.auditPolicyPath(), []byte(auditPolicy), 0o600); err != nil {
			return "", fmt.Errorf("writing audit policy: %w", err)
		}
	}
	cfgPath := filepath.Join(e.opts.WorkDir, e.opts.Name+".kwokctl.yaml")
	if err := os.WriteFile(cfgPath, cfg, 0o600); err != nil {
		return "", fmt.Errorf("writing kwokctl configuration: %w", err)
	}
	return cfgPath, nil
}

// secureFiles makes the kubeconfigs and private keys kwokctl wrote readable
// by their owner only (kwokctl writes them 0644).
func (e *Embedded) secureFiles() error {
	files := []string{e.Kubeconfig(), filepath.Join(e.Dir(), "kubeconfig.yaml"), filepath.Join(e.Dir(), "kubeconfig")}
	keys, _ := filepath.Glob(filepath.Join(e.Dir(), "pki", "*.key"))
	files = append(files, keys...)
	for _, f := range files {
		if err := os.Chmod(f, 0o600); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("securing %s: %w", f, err)
		}
	}
	return nil
}

// failureHint names the component that failed and its log: a component
// whose log reports a bind failure or whose process is gone, then the tail
// of kwokctl's output.
func (e *Embedded) failureHint(out []byte) string {
	var b strings.Builder
	pids := e.PIDs()
	for _, comp := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok-controller"} {
		log, _ := os.ReadFile(e.LogPath(comp))
		var why string
		for _, line := range strings.Split(string(log), "\n") {
			if strings.Contains(line, "address already in use") || strings.Contains(line, "bind:") {
				why = strings.TrimSpace(line)
				if len(why) > 300 {
					why = why[:300] + "..."
				}
				break
			}
		}
		switch {
		case why != "":
			fmt.Fprintf(&b, "\n  %s could not listen (%s); log: %s", comp, why, e.LogPath(comp))
		case len(pids) > 0 && !ProcessAlive(pids[comp]):
			fmt.Fprintf(&b, "\n  %s is not running; log: %s", comp, e.LogPath(comp))
		}
	}
	if len(out) > 0 {
		fmt.Fprintf(&b, "\n  kwokctl said:\n    %s", strings.ReplaceAll(strings.TrimRight(tail(out, 2000), "\n"), "\n", "\n    "))
	}
	return b.String()
}

// Diagnose says which components are not running or could not listen,
// with their logs: for an error about a cluster that stopped working (a
// fleet that never became Ready). Empty when every component runs.
func (e *Embedded) Diagnose() string { return e.failureHint(nil) }

// Down stops every component and deletes the cluster's files. It is safe to
// call on a cluster that does not exist.
func (e *Embedded) Down(ctx context.Context) error {
	if !e.Exists() {
		return nil
	}
	// Real kubelets first: they would re-register against a dying API
	// server, and nothing else stops them.
	KillRealNodes(filepath.Join(e.Dir(), RealNodesDir))
	pids := e.PIDs()
	out, err := e.kwokctl(ctx, "delete", "cluster", "--name", e.opts.Name, "--kubeconfig", e.Kubeconfig())
	if err != nil {
		e.killPIDs(pids)
		_ = e.removeCPUBudget()
		return fmt.Errorf("deleting embedded cluster %q: %w%s", e.opts.Name, err, e.failureHint(out))
	}
	// kwokctl stops components with SIGINT and does not wait for them all;
	// make sure none survives.
	e.waitGone(pids, 15*time.Second)
	if err := e.removeCPUBudget(); err != nil {
		return fmt.Errorf("deleting embedded cluster %q: %w", e.opts.Name, err)
	}
	_ = os.Remove(e.Kubeconfig())
	_ = os.Remove(filepath.Join(e.opts.WorkDir, e.opts.Name+".kwokctl.yaml"))
	_ = os.Remove(e.auditPolicyPath())
	_ = os.Remove(e.schedulerConfigPath())
	e.removeIdentities()
	releasePorts(e.portOwner())
	return nil
}

func (e *Embedded) kwokctl(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, e.opts.Components.Path(BinKwokctl), args...)
	// The version's directory and bin/ first on PATH: kwokctl looks
	// kubectl up there before its configured binary, and must get the one
	// of the version we built.
	path := e.opts.Components.Dir + string(os.PathListSeparator) + os.Getenv("PATH")
	if kd := e.opts.Components.KubeDir(); kd != e.opts.Components.Dir {
		path = kd + string(os.PathListSeparator) + path
	}
	cmd.Env = append(os.Environ(),
		"PATH="+path,
		"KWOK_WORKDIR="+e.opts.WorkDir,
		"KWOK_KUBE_VERSION="+e.KubeVersion().String(),
		"KWOK_RUNTIME=binary",
	)
	if args[0] == "start" {
		// The components bind their ports again (lockPorts); create
		// holds the lock in up, from choosing the ports on.
		release, err := lockPorts(ctx)
		if err != nil {
			return nil, err
		}
		defer release()
	}
	var buf bytes.Buffer
	w := io.MultiWriter(&buf, e.opts.Log)
	cmd.Stdout = w
	cmd.Stderr = w
	// Run kwokctl in its own process group so a Ctrl-C meant for stormbench
	// does not kill it half-way; stormbench decides when to tear down.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if err == nil && (args[0] == "create" || args[0] == "start") {
		err = e.applyCPUBudget()
	}
	return buf.Bytes(), err
}

// Start starts any component of an existing cluster that is not running
// (kwokctl start cluster), for example after it crashed.
func (e *Embedded) Start(ctx context.Context) error {
	out, err := e.kwokctl(ctx, "start", "cluster", "--name", e.opts.Name)
	if err != nil {
		return fmt.Errorf("starting embedded cluster %q: %w%s", e.opts.Name, err, e.failureHint(out))
	}
	return nil
}

// portOwner names the cluster in the port registry (ports.go): its
// directory, absolute, so that another process, in another working
// directory, finds it.
func (e *Embedded) portOwner() string {
	if abs, err := filepath.Abs(e.Dir()); err == nil {
		return abs
	}
	return e.Dir()
}

// EnsureRunning starts again the components that exited (kwokctl start
// cluster starts only what is not running) and returns their names. After
// a snapshot restore, kube-controller-manager can exit on its own: it
// waits only 10 s for the API server's /healthz at start, and an API
// server filling its watch cache from a large restored etcd takes longer.
func (e *Embedded) EnsureRunning(ctx context.Context) ([]string, error) {
	dead := e.Dead()
	if len(dead) == 0 {
		return nil, nil
	}
	if err := e.Start(ctx); err != nil {
		return dead, err
	}
	if still := e.Dead(); len(still) > 0 {
		return dead, fmt.Errorf("components still not running after a restart: %s (logs under %s)", strings.Join(still, ", "), filepath.Join(e.Dir(), "logs"))
	}
	return dead, nil
}

// Components returns where the cluster's binaries are.
func (e *Embedded) Components() Components { return e.opts.Components }

// useComponents makes the stopped cluster's control plane c's: kwokctl
// starts the links in the cluster's bin/, which point at the version's
// kube-apiserver, kube-controller-manager and kube-scheduler; etcd and KWOK
// are every version's.
func (e *Embedded) useComponents(c Components) error {
	for _, b := range []string{BinKubeApiserver, BinKubeControllerManager, BinKubeScheduler} {
		link := filepath.Join(e.Dir(), "bin", b)
		next := link + ".next"
		_ = os.Remove(next)
		if err := os.Symlink(c.Path(b), next); err != nil {
			return err
		}
		if err := os.Rename(next, link); err != nil {
			_ = os.Remove(next)
			return err
		}
	}
	e.opts.Components = c
	return nil
}
