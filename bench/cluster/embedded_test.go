package cluster_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/yaml"

	"github.com/stormbench/stormbench/bench/cluster"
	"github.com/stormbench/stormbench/bench/cluster/clustertest"
	"github.com/stormbench/stormbench/profiles"
)

// listeningAddrs returns the local addresses of the TCP sockets in LISTEN
// state that process pid holds.
func listeningAddrs(t *testing.T, pid int) []string {
	t.Helper()
	inodes := map[string]bool{}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		link, err := os.Readlink(filepath.Join(fmt.Sprintf("/proc/%d/fd", pid), fd.Name()))
		if err == nil && strings.HasPrefix(link, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] = true
		}
	}
	var out []string
	for _, file := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(file)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Scan() // header
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			// local_address st ... inode: LISTEN is state 0A.
			if len(fields) > 9 && fields[3] == "0A" && inodes[fields[9]] {
				out = append(out, decodeAddr(fields[1]))
			}
		}
		f.Close()
	}
	return out
}

// decodeAddr turns /proc/net/tcp's "0100007F:1F90" into "127.0.0.1:8080"
// (IPv6 addresses are returned in their hex form).
func decodeAddr(s string) string {
	host, port, _ := strings.Cut(s, ":")
	p, _ := strconv.ParseUint(port, 16, 16)
	if len(host) == 8 {
		v, _ := strconv.ParseUint(host, 16, 32)
		return fmt.Sprintf("%d.%d.%d.%d:%d", v&0xff, v>>8&0xff, v>>16&0xff, v>>24, p)
	}
	return fmt.Sprintf("[%s]:%d", host, p)
}

// TestEmbeddedConfigKwokParallelism: KWOK's parallelism goes into a
// KwokConfiguration document with every value set, and only when tuned.
func TestEmbeddedConfigKwokParallelism(t *testing.T) {
	tests := []struct {
		name string
		cp   profiles.ControlPlane
		want []string // lines of the KwokConfiguration document; nil: none
	}{
		{"kwok defaults", profiles.ControlPlane{}, nil},
		{"play stages", profiles.ControlPlane{KwokParallelism: 8}, []string{"nodeLeaseParallelism: 4", "nodePlayStageParallelism: 8", "podPlayStageParallelism: 8", "podsOnNodeSyncParallelism: 1"}},
		{"leases", profiles.ControlPlane{KwokNodeLeaseParallelism: 16}, []string{"nodeLeaseParallelism: 16", "nodePlayStageParallelism: 4", "podPlayStageParallelism: 4"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := cluster.NewEmbedded(cluster.EmbeddedOptions{Name: "x", WorkDir: t.TempDir(), ControlPlane: tt.cp})
			if err != nil {
				t.Fatal(err)
			}
			b, err := e.Config()
			if err != nil {
				t.Fatal(err)
			}
			_, kwokDoc, found := strings.Cut(string(b), "\n---\n")
			if found != (tt.want != nil) {
				t.Fatalf("KwokConfiguration document present: %v, want %v:\n%s", found, tt.want != nil, b)
			}
			if !found {
				return
			}
			if !strings.Contains(kwokDoc, "kind: KwokConfiguration") || strings.Contains(kwokDoc, "extraArgs") {
				t.Errorf("second document is not the KwokConfiguration alone:\n%s", kwokDoc)
			}
			for _, w := range tt.want {
				if !strings.Contains(kwokDoc, w) {
					t.Errorf("KwokConfiguration lacks %q:\n%s", w, kwokDoc)
				}
			}
		})
	}
}

func TestEmbeddedSchedulerConfig(t *testing.T) {
	dir := t.TempDir()
	e, err := cluster.NewEmbedded(cluster.EmbeddedOptions{Name: "x", WorkDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if b, err := e.SchedulerConfig(); err != nil || b != nil {
		t.Fatalf("untuned: scheduler config %q, %v; want none", b, err)
	}
	if c, _ := e.Config(); strings.Contains(string(c), "kubeSchedulerConfig") {
		t.Errorf("untuned kwokctl configuration names a scheduler config:\n%s", c)
	}
	e, err = cluster.NewEmbedded(cluster.EmbeddedOptions{Name: "x", WorkDir: dir,
		ControlPlane: profiles.ControlPlane{SchedulerPercentageOfNodesToScore: 10, ControllerQPS: 400, ControllerBurst: 800}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.SchedulerConfig()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"apiVersion: kubescheduler.config.k8s.io/v1", "kind: KubeSchedulerConfiguration", "percentageOfNodesToScore: 10", "qps: 400", "burst: 800"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("scheduler config lacks %q:\n%s", want, b)
		}
	}
	if strings.Contains(string(b), "PodTopologySpread") {
		t.Errorf("default spreading not asked off, but the config changes it:\n%s", b)
	}
	c, _ := e.Config()
	if !strings.Contains(string(c), "kubeSchedulerConfig: "+filepath.Join(dir, "x.kube-scheduler.yaml")) {
		t.Errorf("kwokctl configuration does not name the scheduler config:\n%s", c)
	}

	// Default spreading off alone also needs the file.
	off := false
	e, err = cluster.NewEmbedded(cluster.EmbeddedOptions{Name: "x", WorkDir: dir,
		ControlPlane: profiles.ControlPlane{SchedulerDefaultSpreading: &off}})
	if err != nil {
		t.Fatal(err)
	}
	b, err = e.SchedulerConfig()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"name: PodTopologySpread", "defaultingType: List", "schedulerName: default-scheduler"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("scheduler config lacks %q:\n%s", want, b)
		}
	}
	if strings.Contains(string(b), "percentageOfNodesToScore") || strings.Contains(string(b), "defaultConstraints") ||
		strings.Contains(string(b), "leaderElection") {
		t.Errorf("scheduler config sets more than asked:\n%s", b)
	}
}

// embeddedConfig renders the kwokctl configuration of an embedded cluster
// named x in a temporary directory.
func embeddedConfig(t *testing.T, o cluster.EmbeddedOptions) (*cluster.Embedded, []byte) {
	t.Helper()
	o.Name, o.WorkDir = "x", t.TempDir()
	e, err := cluster.NewEmbedded(o)
	if err != nil {
		t.Fatal(err)
	}
	c, err := e.Config()
	if err != nil {
		t.Fatal(err)
	}
	return e, c
}

// extraArgs reads the components' extra flags from a kwokctl
// configuration, by component.
func extraArgs(t *testing.T, config []byte) map[string][]struct{ Key, Value string } {
	t.Helper()
	var kc struct {
		ComponentsPatches []struct {
			Name      string `json:"name"`
			ExtraArgs []struct{ Key, Value string }
		} `json:"componentsPatches"`
	}
	if err := yaml.Unmarshal(config, &kc); err != nil {
		t.Fatal(err)
	}
	out := map[string][]struct{ Key, Value string }{}
	for _, p := range kc.ComponentsPatches {
		out[p.Name] = append(out[p.Name], p.ExtraArgs...)
	}
	return out
}

// TestEmbeddedLeaderElection: a relaxed renew deadline reaches the
// controller manager as flags, and the scheduler through its configuration
// file when it has one, else as flags; lease duration 1.5 times the deadline.
func TestEmbeddedLeaderElection(t *testing.T) {
	le := &metav1.Duration{Duration: 40 * time.Second}
	flags := map[string]string{"leader-elect-renew-deadline": "40s", "leader-elect-lease-duration": "1m0s"}
	for _, tc := range []struct {
		name          string
		cp            profiles.ControlPlane
		kcm, sched    bool // flags in the KCM's and scheduler's extraArgs
		schedulerFile bool // in the scheduler's configuration file
	}{
		{"default", profiles.ControlPlane{}, false, false, false},
		{"zero keeps the default", profiles.ControlPlane{LeaderElectionRenewDeadline: &metav1.Duration{}, SchedulerPercentageOfNodesToScore: 5}, false, false, false},
		{"flags", profiles.ControlPlane{LeaderElectionRenewDeadline: le}, true, true, false},
		{"scheduler file", profiles.ControlPlane{LeaderElectionRenewDeadline: le, SchedulerPercentageOfNodesToScore: 5}, true, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, c := embeddedConfig(t, cluster.EmbeddedOptions{ControlPlane: tc.cp})
			patches := extraArgs(t, c)
			has := func(component string) bool {
				n := 0
				for _, a := range patches[component] {
					if flags[a.Key] == a.Value {
						n++
					}
				}
				return n == len(flags)
			}
			if got := has("kube-controller-manager"); got != tc.kcm {
				t.Errorf("KCM has the leader-election flags: %v, want %v\n%s", got, tc.kcm, c)
			}
			if got := has("kube-scheduler"); got != tc.sched {
				t.Errorf("scheduler has the leader-election flags: %v, want %v\n%s", got, tc.sched, c)
			}
			b, err := e.SchedulerConfig()
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Contains(string(b), "leaderElection:") && strings.Contains(string(b), "renewDeadline: 40s") &&
				strings.Contains(string(b), "leaseDuration: 1m0s") && strings.Contains(string(b), "leaderElect: true")
			if got != tc.schedulerFile {
				t.Errorf("scheduler configuration has the leader election: %v, want %v\n%s", got, tc.schedulerFile, b)
			}
		})
	}
}

// TestEmbeddedNodeEvictionRate: timing.nodeEvictionRate reaches the
// controller manager as --node-eviction-rate, never the scheduler (which
// would refuse the flag and not start), also when the scheduler shares the
// KCM's leader-election flags; 0 leaves the KCM's default.
func TestEmbeddedNodeEvictionRate(t *testing.T) {
	le := &metav1.Duration{Duration: 40 * time.Second}
	for _, tc := range []struct {
		name string
		rate float64
		cp   profiles.ControlPlane
		want string // the KCM's flag value; "" for none
	}{
		{"default", 0, profiles.ControlPlane{}, ""},
		{"fast", 100, profiles.ControlPlane{}, "100"},
		{"fraction", 0.25, profiles.ControlPlane{}, "0.25"},
		{"with leader election flags", 2, profiles.ControlPlane{LeaderElectionRenewDeadline: le}, "2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, c := embeddedConfig(t, cluster.EmbeddedOptions{Timing: profiles.Timing{NodeEvictionRate: tc.rate}, ControlPlane: tc.cp})
			patches := extraArgs(t, c)
			got := map[string][]string{}
			for component, args := range patches {
				for _, a := range args {
					if a.Key == "node-eviction-rate" {
						got[component] = append(got[component], a.Value)
					}
				}
			}
			want := map[string][]string{}
			if tc.want != "" {
				want["kube-controller-manager"] = []string{tc.want}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("node-eviction-rate flags %v, want %v\n%s", got, want, c)
			}
			// What results record: the flag's value, or the KCM's default.
			recorded := tc.want
			if recorded == "" {
				recorded = "0.1"
			}
			if got := e.NodeEvictionRate(); got != recorded {
				t.Errorf("NodeEvictionRate() = %q, want %q", got, recorded)
			}
			if tc.cp.LeaderElectionRenewDeadline != nil && !strings.Contains(string(c), "leader-elect-renew-deadline") {
				t.Errorf("leader-election flags lost:\n%s", c)
			}
		})
	}
}

// TestEmbeddedAPIServerMetrics: the API server runs with the lean list of
// disabled metrics unless the profile asks for all of them.
func TestEmbeddedAPIServerMetrics(t *testing.T) {
	lean := strings.Join(cluster.LeanDisabledMetrics(), ",")
	for _, tc := range []struct {
		name, mode string
		want       []string // the API server's --disabled-metrics values
	}{
		{"unset is lean", "", []string{lean}},
		{"lean", profiles.APIServerMetricsLean, []string{lean}},
		{"all", profiles.APIServerMetricsAll, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, c := embeddedConfig(t, cluster.EmbeddedOptions{ControlPlane: profiles.ControlPlane{APIServerMetrics: tc.mode}})
			var got []string
			for component, args := range extraArgs(t, c) {
				for _, a := range args {
					if a.Key == "disabled-metrics" {
						if component != "kube-apiserver" {
							t.Errorf("--disabled-metrics on %s", component)
						}
						got = append(got, a.Value)
					}
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("--disabled-metrics %q, want %q", got, tc.want)
			}
		})
	}
}

// TestEmbeddedLoopbackOnly checks every component of the embedded cluster
// listens on 127.0.0.1 only, and that its kubeconfig and keys are private.
func TestEmbeddedLoopbackOnly(t *testing.T) {
	// Tuned KWOK parallelism: the controller must accept the
	// KwokConfiguration document (it exits on one it refuses).
	// A scheduler configuration file: kwokctl must accept it and the
	// scheduler start with it.
	noSpread := false
	// A relaxed leader election: the controller manager (flags) and the
	// scheduler (its file) must take it; their leases say so below.
	c := clustertest.Start(t, &profiles.Profile{ControlPlane: profiles.ControlPlane{KwokParallelism: 8, SchedulerPercentageOfNodesToScore: 20,
		SchedulerDefaultSpreading: &noSpread, LeaderElectionRenewDeadline: &metav1.Duration{Duration: 20 * time.Second}}})
	pids := c.PIDs()
	if len(pids) < 5 {
		t.Fatalf("component pids: %v", pids)
	}
	if cmd, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pids["kube-scheduler"])); err != nil || !strings.Contains(string(cmd), "--config=") {
		t.Errorf("kube-scheduler does not run with the configuration file: %q, %v", cmd, err)
	}
	// Each leader holds its lease for 1.5 times the renew deadline.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, name := range []string{"kube-controller-manager", "kube-scheduler"} {
		var got int32
		err := wait.PollUntilContextCancel(ctx, 500*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			l, err := c.Target.Client.CoordinationV1().Leases(metav1.NamespaceSystem).Get(ctx, name, metav1.GetOptions{})
			if err != nil || l.Spec.LeaseDurationSeconds == nil {
				return false, nil
			}
			got = *l.Spec.LeaseDurationSeconds
			return true, nil
		})
		if err != nil || got != 30 {
			t.Errorf("%s lease duration %ds (%v), want 30s", name, got, err)
		}
	}
	for name, pid := range pids {
		addrs := listeningAddrs(t, pid)
		if len(addrs) == 0 {
			t.Errorf("%s (pid %d) listens on nothing", name, pid)
		}
		for _, a := range addrs {
			if !strings.HasPrefix(a, "127.0.0.1:") {
				t.Errorf("%s listens on %s, not loopback", name, a)
			}
		}
	}
	st, err := os.Stat(c.Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("kubeconfig mode %v, want 0600", st.Mode().Perm())
	}
	keys, _ := filepath.Glob(filepath.Join(c.Dir(), "pki", "*.key"))
	if len(keys) == 0 {
		t.Fatal("no keys found in the cluster's pki directory")
	}
	for _, k := range keys {
		st, err := os.Stat(k)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm()&0o077 != 0 {
			t.Errorf("key %s mode %v is readable by others", k, st.Mode().Perm())
		}
	}
}

// TestKillRealNodesLeavesOthers: a pid file naming a process that is not a
// hollow-kubelet or fake-cri (a recycled pid) is removed, the process left.
func TestKillRealNodesLeavesOthers(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	node := filepath.Join(dir, "n1")
	if err := os.MkdirAll(node, 0o700); err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(node, "kubelet.pid")
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(cmd.Process.Pid)), 0o600); err != nil {
		t.Fatal(err)
	}
	cluster.KillRealNodes(dir)
	if _, err := os.Stat(pidFile); !os.IsNotExist(err) {
		t.Errorf("pid file left: %v", err)
	}
	if err := cmd.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("unrelated process killed: %v", err)
	}
}

// TestEmbeddedAPFIdentities: with realistic APF (the default) every
// component gets a kubeconfig of its own (overriding kwokctl's admin one)
// and the controller manager a service account per controller; with exempt
// APF none of it is there.
func TestEmbeddedAPFIdentities(t *testing.T) {
	off := false
	for _, tc := range []struct {
		name string
		cp   profiles.ControlPlane
		want map[string][]string // component: the identity flags it gets
	}{
		{"default is realistic", profiles.ControlPlane{}, map[string][]string{
			"kube-apiserver":          {"token-auth-file"},
			"kube-controller-manager": {"kubeconfig!", "use-service-account-credentials=true"},
			"kube-scheduler":          {"kubeconfig!"},
			"kwok-controller":         {"kubeconfig!"},
		}},
		{"realistic", profiles.ControlPlane{APF: profiles.APFRealistic}, map[string][]string{
			"kube-apiserver":          {"token-auth-file"},
			"kube-controller-manager": {"kubeconfig!", "use-service-account-credentials=true"},
			"kube-scheduler":          {"kubeconfig!"},
			"kwok-controller":         {"kubeconfig!"},
		}},
		// A scheduler with a configuration file takes its kubeconfig from it.
		{"realistic, tuned scheduler", profiles.ControlPlane{SchedulerDefaultSpreading: &off}, map[string][]string{
			"kube-apiserver":          {"token-auth-file"},
			"kube-controller-manager": {"kubeconfig!", "use-service-account-credentials=true"},
			"kube-scheduler":          {"config!"},
			"kwok-controller":         {"kubeconfig!"},
		}},
		{"exempt", profiles.ControlPlane{APF: profiles.APFExempt}, map[string][]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, c := embeddedConfig(t, cluster.EmbeddedOptions{ControlPlane: tc.cp})
			var kc struct {
				ComponentsPatches []struct {
					Name      string `json:"name"`
					ExtraArgs []struct {
						Key, Value string
						Override   bool
					}
				} `json:"componentsPatches"`
			}
			if err := yaml.Unmarshal(c, &kc); err != nil {
				t.Fatal(err)
			}
			got := map[string][]string{}
			for _, p := range kc.ComponentsPatches {
				for _, a := range p.ExtraArgs {
					switch {
					case a.Override:
						got[p.Name] = append(got[p.Name], a.Key+"!")
						if !strings.HasPrefix(filepath.Base(a.Value), "x.") {
							t.Errorf("%s --%s=%s: not a file of this cluster", p.Name, a.Key, a.Value)
						}
					case a.Key == "token-auth-file":
						got[p.Name] = append(got[p.Name], a.Key)
					case a.Key == "use-service-account-credentials":
						got[p.Name] = append(got[p.Name], a.Key+"="+a.Value)
					}
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("identity flags %v, want %v\n%s", got, tc.want, c)
			}
			sched, err := e.SchedulerConfig()
			if err != nil {
				t.Fatal(err)
			}
			if sched != nil && !strings.Contains(string(sched), "x.kube-scheduler.kubeconfig") {
				t.Errorf("scheduler configuration names no kubeconfig of its own:\n%s", sched)
			}
			// Without a running cluster there is no harness kubeconfig yet:
			// the client falls back to the admin's.
			if e.ClientKubeconfig() != e.Kubeconfig() || e.APFMode() != profiles.APFExempt {
				t.Errorf("ClientKubeconfig %s, APFMode %s before Up", e.ClientKubeconfig(), e.APFMode())
			}
		})
	}
}

// TestUpForRefusesExisting: a command's cluster that already exists is not
// started, the refusal names the command that removes it (with its work
// directory), and the stop it returns does nothing.
func TestUpForRefusesExisting(t *testing.T) {
	dir := t.TempDir()
	e, err := cluster.NewEmbedded(cluster.EmbeddedOptions{Name: "busy", WorkDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(e.Dir(), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.Dir(), "kwok.yaml"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var w strings.Builder
	stop, err := e.UpFor(context.Background(), false, &w, t.Logf)
	want := "stormbench cluster down --name busy --workdir " + dir
	if err == nil || !strings.Contains(err.Error(), "`"+want+"`") {
		t.Fatalf("UpFor on an existing cluster: %v, want a refusal naming `%s`", err, want)
	}
	stop()
	if w.Len() > 0 || !e.Exists() {
		t.Errorf("stop after a refusal wrote %q or removed the cluster (exists: %t)", w.String(), e.Exists())
	}
}
