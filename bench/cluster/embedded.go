package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/procfs"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	kwokv1alpha1 "sigs.k8s.io/kwok/pkg/apis/config/v1alpha1"
	"sigs.k8s.io/yaml"

	"github.com/stormbench/stormbench/bench/poll"
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

// KubeVersion is the Kubernetes version `make components` builds.
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
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	return &Embedded{opts: opts}, nil
}

// Name returns the cluster name.
func (e *Embedded) Name() string { return e.opts.Name }

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

func (e *Embedded) auditPolicyPath() string {
	return filepath.Join(e.opts.WorkDir, e.opts.Name+".audit-policy.yaml")
}

// auditPolicy logs every request at Metadata level: who (with the
// impersonated user), verb, object and response code, no bodies. The policy
// is evaluated before impersonation (the audit filter runs ahead of the
// impersonation filter in the API server's handler chain), so a rule on
// group system:nodes would miss the node identities stormbench impersonates;
// the policy logs everyone and the reader filters. PATCHes of pods/status
// are logged with their request body (level Request), so calibration can
// tell a kubelet's status.resources-only writes apart (calibrate
// Request.ResourcesOnly), and so are created events, for their reason
// (calibrate Request.Reason).
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Request
  verbs: [patch]
  resources:
  - group: ""
    resources: [pods/status]
- level: Request
  verbs: [create]
  resources:
  - group: ""
    resources: [events]
  - group: events.k8s.io
    resources: [events]
- level: Metadata
`

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

// Config renders the KwokctlConfiguration for this cluster.
func (e *Embedded) Config() ([]byte, error) {
	t := e.opts.Timing
	f := t.HeartbeatFactor
	if f == 0 {
		f = 1
	}
	ms := func(d time.Duration) int64 { return int64(float64(d.Milliseconds()) * f) }
	c := e.opts.Components
	cp := e.opts.ControlPlane
	// Override replaces kwokctl's own value of the flag.
	type arg = kwokv1alpha1.ExtraArgs
	apiserverArgs := []arg{
		// kubeadm enables NodeRestriction; the default plugin list does not.
		// It is what limits a node identity to its own objects.
		{Key: "enable-admission-plugins", Value: "NodeRestriction"},
		// The default /24 holds 254 Services; a 1,000-node fleet has
		// hundreds. Pod CIDRs live in 10.128.0.0/9 and do not overlap.
		{Key: "service-cluster-ip-range", Value: "10.96.0.0/12"},
	}
	if e.opts.AuditLog {
		apiserverArgs = append(apiserverArgs,
			arg{Key: "audit-policy-file", Value: e.auditPolicyPath()},
			arg{Key: "audit-log-path", Value: e.AuditLogPath()},
			// Blocking (the default mode) writes each event before the
			// response, so the log is complete when a request returns.
			arg{Key: "audit-log-mode", Value: "blocking"},
			arg{Key: "audit-log-maxbackup", Value: "0"},
			arg{Key: "audit-log-maxsize", Value: "0"},
		)
	}
	if cp.APIServerMetrics != profiles.APIServerMetricsAll {
		apiserverArgs = append(apiserverArgs, arg{Key: "disabled-metrics", Value: strings.Join(LeanDisabledMetrics(), ",")})
	}
	if cp.MaxRequestsInflight > 0 {
		apiserverArgs = append(apiserverArgs, arg{Key: "max-requests-inflight", Value: strconv.Itoa(cp.MaxRequestsInflight)})
	}
	if cp.MaxMutatingRequestsInflight > 0 {
		apiserverArgs = append(apiserverArgs, arg{Key: "max-mutating-requests-inflight", Value: strconv.Itoa(cp.MaxMutatingRequestsInflight)})
	}
	qps := []arg{
		{Key: "kube-api-qps", Value: strconv.Itoa(cp.ControllerQPS)},
		{Key: "kube-api-burst", Value: strconv.Itoa(cp.ControllerBurst)},
	}
	kcmArgs, schedArgs := qps, qps
	if renew, lease := leaderElection(cp); renew != "" {
		kcmArgs = append(append([]arg{}, qps...),
			arg{Key: "leader-elect-renew-deadline", Value: renew}, arg{Key: "leader-elect-lease-duration", Value: lease})
		if !schedulerTuned(cp) {
			// With a configuration file the scheduler takes them from it.
			schedArgs = kcmArgs
		}
	}
	if t.NodeEvictionRate > 0 {
		// KCM only: a fresh slice, since the scheduler may share kcmArgs'.
		kcmArgs = append(slices.Clip(kcmArgs), arg{Key: "node-eviction-rate", Value: e.NodeEvictionRate()})
	}
	kwokArgs := []arg{
		{Key: "manage-all-nodes", Value: "false"},
		{Key: "manage-nodes-with-label-selector", Value: KubeletLabel + "=" + KubeletUp},
	}
	if e.realisticAPF() {
		// Identities of their own (identity.go); kwokctl's --kubeconfig
		// would be the admin's.
		apiserverArgs = append(apiserverArgs, arg{Key: "token-auth-file", Value: e.tokenFilePath()})
		kcmArgs = append(slices.Clip(kcmArgs),
			arg{Key: "kubeconfig", Value: e.componentKubeconfigPath("kube-controller-manager"), Override: true},
			arg{Key: "use-service-account-credentials", Value: "true"})
		if schedulerTuned(cp) {
			// The configuration file carries the kubeconfig.
			schedArgs = append(slices.Clip(schedArgs), arg{Key: "config", Value: e.schedulerConfigPath(), Override: true})
		} else {
			schedArgs = append(slices.Clip(schedArgs), arg{Key: "kubeconfig", Value: e.componentKubeconfigPath("kube-scheduler"), Override: true})
		}
		kwokArgs = append(kwokArgs, arg{Key: "kubeconfig", Value: e.componentKubeconfigPath("kwok-controller"), Override: true})
	}
	cfg := kwokv1alpha1.KwokctlConfiguration{
		TypeMeta: metav1.TypeMeta{APIVersion: kwokv1alpha1.GroupVersion.String(), Kind: kwokv1alpha1.KwokctlConfigurationKind},
		Options: kwokv1alpha1.KwokctlConfigurationOptions{
			Runtime:     "binary",
			BindAddress: "127.0.0.1",
			KubeVersion: KubeVersion,
			// Timing is scaled here, so kwokctl must not scale it again.
			HeartbeatFactor:                                         ptr.To(1.0),
			NodeLeaseDurationSeconds:                                uint(float64(t.NodeLeaseDurationSeconds) * f),
			NodeStatusUpdateFrequencyMilliseconds:                   ms(t.NodeStatusUpdateFrequency.Duration),
			KubeControllerManagerNodeMonitorGracePeriodMilliseconds: ms(t.NodeMonitorGracePeriod.Duration),
			KubeControllerManagerNodeMonitorPeriodMilliseconds:      t.NodeMonitorPeriod.Milliseconds(),
			KubeAuthorization:                                       ptr.To(true),
			KubeAdmission:                                           ptr.To(true),
			SecurePort:                                              ptr.To(true),
			KubeApiserverBinary:                                     c.Path(BinKubeApiserver),
			KubeControllerManagerBinary:                             c.Path(BinKubeControllerManager),
			KubeSchedulerBinary:                                     c.Path(BinKubeScheduler),
			EtcdBinary:                                              c.Path(BinEtcd),
			KwokControllerBinary:                                    c.Path(BinKwok),
			// kwokctl checks that the cluster serves with kubectl; without
			// this it would take whatever kubectl is on PATH, or download one.
			KubectlBinary: c.Path(BinKubectl),
		},
		ComponentsPatches: []kwokv1alpha1.ComponentPatches{
			{Name: "kube-apiserver", ExtraArgs: apiserverArgs},
			{Name: "kube-controller-manager", ExtraArgs: kcmArgs},
			{Name: "kube-scheduler", ExtraArgs: schedArgs},
			{Name: "kwok-controller", ExtraArgs: kwokArgs},
		},
	}
	if p := e.ports; p.APIServer > 0 {
		cfg.Options.EtcdPeerPort, cfg.Options.EtcdPort = uint32(p.EtcdPeer), uint32(p.Etcd)
		cfg.Options.KubeApiserverPort = uint32(p.APIServer)
		cfg.Options.KubeControllerManagerPort, cfg.Options.KubeSchedulerPort = uint32(p.ControllerManager), uint32(p.Scheduler)
		cfg.Options.KwokControllerPort = uint32(p.Kwok)
	}
	if schedulerTuned(cp) {
		// A KubeSchedulerConfiguration file (written by Up); kwokctl fills
		// in its kubeconfig. With a config file the scheduler ignores its
		// --kube-api-qps/burst flags, so the file carries them.
		cfg.Options.KubeSchedulerConfig = e.schedulerConfigPath()
	}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	// kwok 0.8 takes its parallelism from a KwokConfiguration document (it
	// has no flags for it); kwokctl hands the document to the controller.
	// A document given leaves unset parallelism at 0, which kwok refuses,
	// so every one is set: kwok's defaults (4 workers each, 1 pods-on-node
	// syncer) unless the profile tunes it.
	if cp.KwokNodeLeaseParallelism <= 0 && cp.KwokParallelism <= 0 {
		return out, nil
	}
	orDefault := func(v int) int {
		if v > 0 {
			return v
		}
		return 4
	}
	kc, err := yaml.Marshal(kwokv1alpha1.KwokConfiguration{
		TypeMeta: metav1.TypeMeta{APIVersion: kwokv1alpha1.GroupVersion.String(), Kind: kwokv1alpha1.KwokConfigurationKind},
		Options: kwokv1alpha1.KwokConfigurationOptions{
			NodeLeaseParallelism:      uint(orDefault(cp.KwokNodeLeaseParallelism)),
			PodPlayStageParallelism:   uint(orDefault(cp.KwokParallelism)),
			NodePlayStageParallelism:  uint(orDefault(cp.KwokParallelism)),
			PodsOnNodeSyncParallelism: 1,
		},
	})
	if err != nil {
		return nil, err
	}
	return append(append(out, []byte("---\n")...), kc...), nil
}

func (e *Embedded) schedulerConfigPath() string {
	return filepath.Join(e.opts.WorkDir, e.opts.Name+".kube-scheduler.yaml")
}

// SchedulerConfig renders the KubeSchedulerConfiguration the cluster's
// scheduler runs with, or nil when the profile tunes nothing that needs one
// (the scheduler then runs on flags alone).
func (e *Embedded) SchedulerConfig() ([]byte, error) {
	cp := e.opts.ControlPlane
	if !schedulerTuned(cp) {
		return nil, nil
	}
	cfg := map[string]any{
		"apiVersion": "kubescheduler.config.k8s.io/v1",
		"kind":       "KubeSchedulerConfiguration",
		"clientConnection": map[string]any{
			"qps":   cp.ControllerQPS,
			"burst": cp.ControllerBurst,
		},
	}
	if e.realisticAPF() {
		// kwokctl's copy of this file names the admin kubeconfig; the
		// scheduler reads this one (Config overrides --config).
		cfg["clientConnection"].(map[string]any)["kubeconfig"] = e.componentKubeconfigPath("kube-scheduler")
	}
	if cp.SchedulerPercentageOfNodesToScore > 0 {
		cfg["percentageOfNodesToScore"] = cp.SchedulerPercentageOfNodesToScore
	}
	if renew, lease := leaderElection(cp); renew != "" {
		cfg["leaderElection"] = map[string]any{"leaderElect": true, "renewDeadline": renew, "leaseDuration": lease}
	}
	if spreadingOff(cp) {
		// "List" with no defaultConstraints: pods without their own
		// topologySpreadConstraints are not spread (the documented way to
		// turn the cluster-level defaults off).
		cfg["profiles"] = []any{map[string]any{
			"schedulerName": "default-scheduler",
			"pluginConfig": []any{map[string]any{
				"name": "PodTopologySpread",
				"args": map[string]any{"defaultingType": "List"},
			}},
		}}
	}
	return yaml.Marshal(cfg)
}

// schedulerTuned reports whether the profile tunes the scheduler beyond
// flags, so that it needs a configuration file.
func schedulerTuned(cp profiles.ControlPlane) bool {
	return cp.SchedulerPercentageOfNodesToScore > 0 || spreadingOff(cp)
}

// leaderElection returns the KCM's and scheduler's leader-election renew
// deadline and lease duration (1.5 times the deadline, the components'
// ratio of defaults, 10s and 15s), or "" when the profile keeps the
// defaults.
func leaderElection(cp profiles.ControlPlane) (renewDeadline, leaseDuration string) {
	if cp.LeaderElectionRenewDeadline == nil || cp.LeaderElectionRenewDeadline.Duration <= 0 {
		return "", ""
	}
	d := cp.LeaderElectionRenewDeadline.Duration
	return d.String(), (d * 3 / 2).String()
}

// spreadingOff reports whether the profile turns the scheduler's default
// topology spreading off (unset keeps it on).
func spreadingOff(cp profiles.ControlPlane) bool {
	return cp.SchedulerDefaultSpreading != nil && !*cp.SchedulerDefaultSpreading
}

// Up creates and starts the cluster and waits until the API server serves
// (kwokctl's --wait); WaitHealthy waits for every component. When a
// component fails to start, the error names it and where its log is.
func (e *Embedded) Up(ctx context.Context) error {
	if e.Exists() {
		return fmt.Errorf("embedded cluster %q already exists in %s: use it with --kubeconfig %s, or remove it with `stormbench cluster down --name %s`", e.opts.Name, e.opts.WorkDir, e.Kubeconfig(), e.opts.Name)
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
	cfg, err := e.Config()
	if err != nil {
		return false, err
	}
	sched, err := e.SchedulerConfig()
	if err != nil {
		return false, err
	}
	if sched != nil {
		if err := os.WriteFile(e.schedulerConfigPath(), sched, 0o600); err != nil {
			return false, fmt.Errorf("writing kube-scheduler configuration: %w", err)
		}
	}
	if e.opts.AuditLog {
		if err := os.WriteFile(e.auditPolicyPath(), []byte(auditPolicy), 0o600); err != nil {
			return false, fmt.Errorf("writing audit policy: %w", err)
		}
	}
	cfgPath := filepath.Join(e.opts.WorkDir, e.opts.Name+".kwokctl.yaml")
	if err := os.WriteFile(cfgPath, cfg, 0o600); err != nil {
		return false, fmt.Errorf("writing kwokctl configuration: %w", err)
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
		return false, fmt.Errorf("creating embedded cluster %q: %w%s\n  its files are kept in %s; remove them with `stormbench cluster down --name %s --workdir %s`",
			e.opts.Name, err, hint, e.Dir(), e.opts.Name, e.opts.WorkDir)
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
		return true, fmt.Errorf("embedded cluster %q: %w%s\n  its files are kept in %s; remove them with `stormbench cluster down --name %s --workdir %s`",
			e.opts.Name, err, hint, e.Dir(), e.opts.Name, e.opts.WorkDir)
	}
	return false, e.secureFiles()
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
	tail := out
	if len(tail) > 2000 {
		tail = tail[len(tail)-2000:]
	}
	if len(tail) > 0 {
		fmt.Fprintf(&b, "\n  kwokctl said:\n%s", indent(string(tail), "    "))
	}
	return b.String()
}

// Diagnose says which components are not running or could not listen,
// with their logs: for an error about a cluster that stopped working (a
// fleet that never became Ready). Empty when every component runs.
func (e *Embedded) Diagnose() string { return e.failureHint(nil) }

func indent(s, pad string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i := range lines {
		lines[i] = pad + lines[i]
	}
	return strings.Join(lines, "\n")
}

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

func (e *Embedded) waitGone(pids map[string]int, d time.Duration) {
	w := poll.Wait{Interval: 100 * time.Millisecond, Timeout: d}
	err := w.Until(context.Background(), func(context.Context) (bool, string, error) {
		for _, pid := range pids {
			if ProcessAlive(pid) {
				return false, "", nil
			}
		}
		return true, "", nil
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
		data, err := os.ReadFile(filepath.Join(e.Dir(), "pids", en.Name()))
		if err != nil {
			continue
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil {
			out[name] = pid
		}
	}
	return out
}

func (e *Embedded) kwokctl(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, e.opts.Components.Path(BinKwokctl), args...)
	// bin/ first on PATH: kwokctl looks kubectl up there before its
	// configured binary, and must get the v1.36.3 one we built.
	cmd.Env = append(os.Environ(),
		"PATH="+e.opts.Components.Dir+string(os.PathListSeparator)+os.Getenv("PATH"),
		"KWOK_WORKDIR="+e.opts.WorkDir,
		"KWOK_KUBE_VERSION="+KubeVersion,
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

// Stop stops every component and keeps the cluster's files and its ports
// (kwokctl stop cluster): Start brings it back.
func (e *Embedded) Stop(ctx context.Context) error {
	out, err := e.kwokctl(ctx, "stop", "cluster", "--name", e.opts.Name)
	if err != nil {
		return fmt.Errorf("stopping embedded cluster %q: %w\n%s", e.opts.Name, err, tail(out, 2000))
	}
	return nil
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

// KillRealNodes kills every real-node process (hollow-kubelet, fake-cri)
// that a pid file in a node directory under dir names: the cleanup of a run
// that did not stop its nodes. A pid is killed only while its command line
// still names one of those binaries, so a recycled pid is left alone.
// SIGCONT goes first, so that a frozen runtime dies too.
func KillRealNodes(dir string) {
	files, _ := filepath.Glob(filepath.Join(dir, "*", "*.pid"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 1 {
			continue
		}
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

// Components returns where the cluster's binaries are.
func (e *Embedded) Components() Components { return e.opts.Components }
