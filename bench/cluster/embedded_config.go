package cluster

import (
	"cmp"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	kwokv1alpha1 "sigs.k8s.io/kwok/pkg/apis/config/v1alpha1"
	"sigs.k8s.io/yaml"

	"github.com/stormbench/stormbench/profiles"
)

// The embedded cluster's kwokctl configuration: components, flags, audit policy and the scheduler's configuration.

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

// Config renders the KwokctlConfiguration for this cluster.
func (e *Embedded) Config() ([]byte, error) {
	t := e.opts.Timing
	f := cmp.Or(t.HeartbeatFactor, 1)
	ms := func(d time.Duration) int64 { return int64(float64(d.Milliseconds()) * f) }
	c := e.opts.Components
	cp := e.opts.ControlPlane
	apiserverArgs, kcmArgs, schedArgs, kwokArgs := e.componentArgs()
	cfg := kwokv1alpha1.KwokctlConfiguration{
		TypeMeta: metav1.TypeMeta{APIVersion: kwokv1alpha1.GroupVersion.String(), Kind: kwokv1alpha1.KwokctlConfigurationKind},
		Options: kwokv1alpha1.KwokctlConfigurationOptions{
			Runtime:     "binary",
			BindAddress: "127.0.0.1",
			KubeVersion: e.KubeVersion().String(),
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
	kc, err := kwokConfiguration(cp)
	if err != nil || kc == nil {
		return out, err
	}
	return append(append(out, []byte("---\n")...), kc...), nil
}

// arg is a component flag; Override replaces kwokctl's own value of it.
type arg = kwokv1alpha1.ExtraArgs

// componentArgs are the flags of the API server, the controller manager,
// the scheduler and the KWOK controller beside kwokctl's own.
func (e *Embedded) componentArgs() (apiserverArgs, kcmArgs, schedArgs, kwokArgs []arg) {
	t := e.opts.Timing
	cp := e.opts.ControlPlane
	apiserverArgs = []arg{
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
	kcmArgs, schedArgs = qps, qps
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
	kwokArgs = []arg{
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
	return apiserverArgs, kcmArgs, schedArgs, kwokArgs
}

// kwokConfiguration is the KwokConfiguration document of the profile's
// KWOK parallelism, nil when it tunes none. kwok 0.8 takes its parallelism
// from such a document (it has no flags for it); kwokctl hands the
// document to the controller. A document given leaves unset parallelism at
// 0, which kwok refuses, so every one is set: kwok's defaults (4 workers
// each, 1 pods-on-node syncer) unless the profile tunes it.
func kwokConfiguration(cp profiles.ControlPlane) ([]byte, error) {
	if cp.KwokNodeLeaseParallelism <= 0 && cp.KwokParallelism <= 0 {
		return nil, nil
	}
	orDefault := func(v int) int {
		if v > 0 {
			return v
		}
		return 4
	}
	return yaml.Marshal(kwokv1alpha1.KwokConfiguration{
		TypeMeta: metav1.TypeMeta{APIVersion: kwokv1alpha1.GroupVersion.String(), Kind: kwokv1alpha1.KwokConfigurationKind},
		Options: kwokv1alpha1.KwokConfigurationOptions{
			NodeLeaseParallelism:      uint(orDefault(cp.KwokNodeLeaseParallelism)),
			PodPlayStageParallelism:   uint(orDefault(cp.KwokParallelism)),
			NodePlayStageParallelism:  uint(orDefault(cp.KwokParallelism)),
			PodsOnNodeSyncParallelism: 1,
		},
	})
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
