package calibrate

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/stormbench/stormbench/profiles"
)

// The calibration cases: which restarts are played on both sides, and how.

// Case is one storm run on both sides.
type Case struct {
	// Name identifies the case in the table, such as "kubelet/legacy".
	Name string `json:"name"`
	// Kind is kubelet, runtime or reboot.
	Kind string `json:"kind"`
	// Gates are the kubelets' feature gates at their restart.
	Gates map[string]bool `json:"featureGates,omitempty"`
	// RuntimeMode is refused or hung, for runtime cases.
	RuntimeMode string `json:"runtimeMode,omitempty"`
	// Downtime is how long the kubelet, the runtime or the node is down.
	Downtime time.Duration `json:"downtime"`
	// Observe is how long after the downtime the case is watched.
	Observe time.Duration `json:"observe"`
	// DeletePods, when above 0, is how many pods of each node are deleted
	// halfway through the downtime (its Deployment scaled down, so the
	// ReplicaSet controller deletes them gracefully and none replaces
	// them): the restarted kubelet finds them terminating, as after a
	// taint-based eviction. The replicas are restored after the case.
	DeletePods int `json:"deletePods,omitempty"`
	// ExitContainers, when above 0, is how many pods of each node have
	// their container killed (SIGKILL, exit 137) halfway through the
	// downtime, their sandbox left running: the restarted kubelet finds
	// the container exited and starts it again. The real side's is killed
	// through its containerd (containerd backend only), the simulated
	// side's recorded in the model (kubelet.Simulator.ExitContainer).
	ExitContainers int `json:"exitContainers,omitempty"`
	// Probe is the handler of the pods' readiness and liveness probes
	// during the case: ProbeExec (also when empty), ProbeHTTP or
	// ProbeTCP. The pods are rolled to it before the case when the case
	// before had another.
	Probe string `json:"probe,omitempty"`
}

// needsContainerd says the case needs real containers: network probes,
// or a container killed on the node.
func (cs Case) needsContainerd() bool {
	return cs.probeOf() != ProbeExec || cs.ExitContainers > 0
}

// probeOf returns a case's probe handler, ProbeExec when unset.
func (cs Case) probeOf() string {
	if cs.Probe == "" {
		return ProbeExec
	}
	return cs.Probe
}

// networkProbeCases are the cases run again with HTTP and with TCP probes.
var networkProbeCases = []string{"kubelet/legacy", "kubelet/preserve", "runtime/refused", "reboot"}

// Cases returns the built-in cases by name: kubelet/legacy,
// kubelet/preserve, runtime/refused, runtime/hung, reboot and
// kubelet/deleted with exec probes, then kubelet/legacy, kubelet/preserve,
// runtime/refused and reboot again with HTTP probes ("…+http") and with
// TCP probes ("…+tcp").
func Cases() []Case {
	legacy := map[string]bool{profiles.GateChangeContainerStatusOnKubeletRestart: true}
	preserve := map[string]bool{profiles.GateChangeContainerStatusOnKubeletRestart: false}
	cases := []Case{
		// The legacy flips spread over U(0, probe period) after start.
		{Name: "kubelet/legacy", Kind: profiles.StormKubelet, Gates: legacy, Downtime: 5 * time.Second, Observe: 25 * time.Second},
		{Name: "kubelet/preserve", Kind: profiles.StormKubelet, Gates: preserve, Downtime: 5 * time.Second, Observe: 25 * time.Second},
		// 50 s: past the kubelet's 30 s runtime-status threshold
		// (kubelet.go runtimeState), so the node goes NotReady.
		{Name: "runtime/refused", Kind: profiles.StormRuntime, RuntimeMode: profiles.RuntimeRefused, Downtime: 50 * time.Second, Observe: 30 * time.Second},
		{Name: "runtime/hung", Kind: profiles.StormRuntime, RuntimeMode: profiles.RuntimeHung, Downtime: 50 * time.Second, Observe: 30 * time.Second},
		// 20 s: below the node-monitor grace period, so nothing is evicted.
		{Name: "reboot", Kind: profiles.StormReboot, Gates: preserve, Downtime: 20 * time.Second, Observe: 40 * time.Second},
		// Pods deleted while the kubelet is away: the status manager's
		// terminal status write, then the DELETE (status_manager.go syncPod,
		// canBeDeleted).
		{Name: "kubelet/deleted", Kind: profiles.StormKubelet, Gates: preserve, Downtime: 6 * time.Second, Observe: 24 * time.Second, DeletePods: 2},
		// A container that exited while the kubelet was away: the kubelet
		// starts it again at once, and it is not ready until its probe
		// passes, with readiness preserved for the others.
		{Name: "kubelet/exited", Kind: profiles.StormKubelet, Gates: preserve, Downtime: 6 * time.Second, Observe: 24 * time.Second, ExitContainers: 1},
	}
	// The same restarts of pods with network probes, as web-http and
	// web-tcp carry ("kubelet/legacy+http"): the kubelet dials the pod,
	// so only the containerd backend can run them.
	exec := cases
	for _, probe := range []string{ProbeHTTP, ProbeTCP} {
		for _, c := range exec {
			if slices.Contains(networkProbeCases, c.Name) {
				c.Name, c.Probe = c.Name+"+"+probe, probe
				cases = append(cases, c)
			}
		}
	}
	return cases
}

// DefaultCases are the cases a backend runs unless told otherwise: every
// case on containerd, the exec-probe cases on hollow kubelets.
func DefaultCases(backend string) []Case {
	var out []Case
	for _, c := range Cases() {
		if backend == BackendContainerd || !c.needsContainerd() {
			out = append(out, c)
		}
	}
	return out
}

// SelectCases returns the built-in cases named, in the order given.
func SelectCases(names []string) ([]Case, error) {
	all := Cases()
	var out []Case
	var unknown []string
	known := mapped(all, func(c Case) string { return c.Name })
	for _, n := range names {
		if i := slices.Index(known, n); i >= 0 {
			out = append(out, all[i])
		} else {
			unknown = append(unknown, n)
		}
	}
	if len(unknown) > 0 {
		return nil, fmt.Errorf("unknown calibration case %s (known: %s)", strings.Join(unknown, ", "), strings.Join(known, ", "))
	}
	return out, nil
}
