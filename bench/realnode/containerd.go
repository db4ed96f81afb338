package realnode

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/stormbench/stormbench/bench/cluster"
)

// A containerd-backed real node: the v1.36.3 kubelet (cmd/kubelet, built
// by `make components`) on Debian's containerd, runc and CNI plugins
// (`make real-node-deps`), running real containers from an image built
// from stormbench-pause. Unlike the hollow node it shows what a real
// runtime does in a restart: containerd's shims keep containers running
// while containerd restarts, and a reboot kills every container.
//
// Each node has its own containerd (a kubelet garbage-collects containers
// it does not know, so two kubelets must not share one), root, state, runc
// root, CNI configuration, bridge, cgroup root and kubelet root under its
// directory, so that teardown can remove exactly what it made.

// Host paths of Debian's packages.
const (
	cniBinDir = "/usr/lib/cni"
)

// ContainerdNode is one containerd-backed real node.
type ContainerdNode struct {
	procs
	gates map[string]bool
	// wantKubelet says the kubelet should be running: as systemd's
	// kubelet.service (Restart=always, RestartSec=10s, kubeadm's unit), a
	// kubelet that exits with an error is started again 10 s later. A
	// kubelet started right after containerd can find the CRI not
	// initialised yet and exit, as on a real machine after a reboot.
	wantKubelet bool
	ports       [2]int // kubelet port, healthz port
}

// CheckContainerdHost reports what the machine lacks for containerd-backed
// nodes, naming the make target that installs it: root, the packages, the
// cgroup hierarchy, and the kubelet and image binaries in comps.
func CheckContainerdHost(comps cluster.Components) error {
	var missing []string
	if os.Geteuid() != 0 {
		missing = append(missing, "root (the kubelet and containerd manage mounts, cgroups and network namespaces)")
	}
	for _, b := range []string{"containerd", "containerd-shim-runc-v2", "runc", "ctr", "ip"} {
		if _, err := exec.LookPath(b); err != nil {
			missing = append(missing, b+" (make real-node-deps)")
		}
	}
	for _, p := range []string{"bridge", "host-local", "loopback"} {
		if _, err := os.Stat(filepath.Join(cniBinDir, p)); err != nil {
			missing = append(missing, filepath.Join(cniBinDir, p)+" (make real-node-deps: containernetworking-plugins)")
		}
	}
	if _, err := os.Stat("/sys/fs/cgroup/memory"); err != nil {
		if _, err2 := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err2 != nil {
			missing = append(missing, "a cgroup hierarchy at /sys/fs/cgroup")
		}
	}
	for _, b := range []string{cluster.BinKubelet, cluster.BinPause} {
		if _, err := os.Stat(comps.Path(b)); err != nil {
			missing = append(missing, comps.Path(b)+" (make components)")
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("containerd-backed real nodes need: %s", strings.Join(missing, "; "))
	}
	return nil
}

// NewContainerd prepares a containerd-backed node: its directory, kubeconfig
// (impersonating the node, as the hollow one), containerd and kubelet
// configuration, CNI network and image (its bridge is named by a hash of
// its directory, so nodes of several clusters do not collide). Nothing runs
// until Start.
func NewContainerd(o Options) (*ContainerdNode, error) {
	if err := CheckContainerdHost(o.Components); err != nil {
		return nil, err
	}
	if o.Name == "" || o.Dir == "" || o.AdminKubeconfig == "" || o.PodCIDR == "" {
		return nil, errors.New("containerd node: name, directory, admin kubeconfig and pod CIDR are required")
	}
	n := &ContainerdNode{}
	if err := n.init(n, "containerd node", o, "ctd.sock", ".ttrpc"); err != nil {
		return nil, err
	}
	o = n.opts
	var err error
	for _, d := range []string{"ctd/root", "ctd/state", "runc", "cni/net.d", "cni/data", "kubelet", "pod-logs"} {
		if err := os.MkdirAll(filepath.Join(o.Dir, d), 0o700); err != nil {
			return nil, fmt.Errorf("containerd node %s: %w", o.Name, err)
		}
	}
	for i := range n.ports {
		if n.ports[i], err = cluster.FreeLoopbackPort(); err != nil {
			return nil, err
		}
	}
	if err := os.WriteFile(filepath.Join(o.Dir, "containerd.toml"), []byte(n.containerdConfig()), 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(o.Dir, "cni/net.d/10-stormbench.conflist"), []byte(n.cniConfig()), 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(n.kubeletConfigPath(), []byte(n.kubeletConfig()), 0o600); err != nil {
		return nil, err
	}
	st, _ := json.Marshal(nodeState{Name: o.Name})
	if err := os.WriteFile(filepath.Join(o.Dir, "node.json"), st, 0o600); err != nil {
		return nil, err
	}
	if err := WriteImage(n.imagePath(), o.Components.Path(cluster.BinPause), ImageName, "pause", "bin/cat", "bin/true", "bin/serve"); err != nil {
		return nil, fmt.Errorf("containerd node %s: building the node image: %w", o.Name, err)
	}
	return n, nil
}

// Cost is the kubelet's, containerd's and its shims' usage (see Runner).
func (n *ContainerdNode) Cost() (map[string]Usage, error) {
	return n.procs.cost(PartShims, shimPIDs(n.socket()))
}

// RuntimeLog is containerd's log file.
func (n *ContainerdNode) RuntimeLog() string { return filepath.Join(n.opts.Dir, "containerd.log") }

func (n *ContainerdNode) socket() string            { return filepath.Join(n.opts.Dir, "ctd.sock") }
func (n *ContainerdNode) imagePath() string         { return filepath.Join(n.opts.Dir, "image.tar") }
func (n *ContainerdNode) kubeletConfigPath() string { return filepath.Join(n.opts.Dir, "kubelet.yaml") }

// Bridge is the name of the node's CNI bridge: "sb" and a hash of its
// directory, so that nodes side by side (another test's, another
// cluster's) have bridges of their own, within the 15 bytes of an
// interface name.
func (n *ContainerdNode) Bridge() string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(n.opts.Dir))
	return fmt.Sprintf("sb%08x", h.Sum32())
}
func (n *ContainerdNode) cgroupRoot() string { return "/stormbench-" + n.opts.Name }

// containerdConfig is a v2 configuration of a containerd of the node's
// own: root, state, sockets and runc root under the node's directory; the
// CRI plugin with the imported image as sandbox image, cgroupfs, overlayfs
// and the node's CNI configuration. restrict_oom_score_adj: this VM refuses
// a negative oom_score_adj, and runc then fails every sandbox ("can't get
// final child's PID from pipe: EOF"). Network namespaces live under the
// state directory, so teardown finds the node's own.
func (n *ContainerdNode) containerdConfig() string {
	d := n.opts.Dir
	return fmt.Sprintf(`version = 2
root = %[1]q
state = %[2]q
oom_score = 0

[grpc]
  address = %[3]q

[ttrpc]
  address = %[4]q

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %[5]q
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_cdi = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = %[6]q
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = %[7]q
    conf_dir = %[8]q
    max_conf_num = 1

[plugins."io.containerd.internal.v1.opt"]
  path = %[9]q
`, filepath.Join(d, "ctd/root"), filepath.Join(d, "ctd/state"), n.socket(), n.socket()+".ttrpc",
		ImageName, filepath.Join(d, "runc"), cniBinDir, filepath.Join(d, "cni/net.d"), filepath.Join(d, "ctd/opt"))
}

// cniConfig is a bridge + host-local + loopback network on the node's pod
// CIDR, with the IPAM state under the node's directory.
func (n *ContainerdNode) cniConfig() string {
	return fmt.Sprintf(`{
  "cniVersion": "0.4.0",
  "name": "stormbench-%[1]s",
  "plugins": [
    {
      "type": "bridge",
      "bridge": %[2]q,
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {"type": "host-local", "ranges": [[{"subnet": %[3]q}]], "dataDir": %[4]q}
    },
    {"type": "loopback"}
  ]
}
`, n.Bridge(), n.Bridge(), n.opts.PodCIDR, filepath.Join(n.opts.Dir, "cni/data"))
}

// kubeletConfig is the node's KubeletConfiguration for this machine:
// cgroup v1 allowed (1.35+ refuses it otherwise), cgroupfs, swap
// tolerated, its own runtime endpoint, loopback-only ports, a cgroup root
// of its own and no node-allocatable enforcement (there is one machine for
// every node). It sets
// nodeStatusUpdateFrequency, so it sets nodeStatusReportFrequency too: left
// out, the report frequency defaults to the update frequency when that is
// set explicitly (pkg/kubelet/apis/config/v1beta1/defaults.go), and the
// kubelet then PATCHes a heartbeat into its node status every 10 s
// (kubelet_node_status.go tryUpdateNodeStatus), which a kubelet with the
// default configuration does every 5 minutes (measured here: 3 PATCHes of
// nodes/status in the 30 s after a start, each only new lastHeartbeatTimes,
// against the hollow kubelet's 1).
func (n *ContainerdNode) kubeletConfig() string {
	o := n.opts
	lease, status, maxPods := cmp.Or(o.LeaseDurationSeconds, 40), cmp.Or(o.StatusUpdateFrequency, 10*time.Second), cmp.Or(o.MaxPods, 110)
	return fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: %[1]s
cgroupsPerQOS: true
enforceNodeAllocatable: []
failSwapOn: false
containerRuntimeEndpoint: unix://%[2]s
address: 127.0.0.1
port: %[3]d
healthzBindAddress: 127.0.0.1
healthzPort: %[4]d
readOnlyPort: 0
podLogsDirectory: %[5]s
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
authorization:
  mode: AlwaysAllow
clusterDNS: [10.96.0.10]
clusterDomain: cluster.local
podCIDR: %[6]s
maxPods: %[7]d
nodeLeaseDurationSeconds: %[8]d
nodeStatusUpdateFrequency: %[9]s
nodeStatusReportFrequency: 5m0s
evictionHard: {memory.available: "1Mi", nodefs.available: "1%%", imagefs.available: "1%%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
`, n.cgroupRoot(), n.socket(), n.ports[0], n.ports[1], filepath.Join(o.Dir, "pod-logs"), o.PodCIDR, maxPods, lease, status) + apiLimitsConfig(o.KubeAPIQPS, o.KubeAPIBurst)
}

// Start starts containerd (importing the image) and the kubelet.
func (n *ContainerdNode) Start(gates map[string]bool) error {
	if err := n.makeCgroupRoot(); err != nil {
		return err
	}
	if err := n.StartRuntime(false); err != nil {
		return err
	}
	if err := n.ImportImage(n.imagePath()); err != nil {
		return err
	}
	return n.StartKubelet(gates)
}

// makeCgroupRoot creates the kubelet's cgroup root in every hierarchy (the
// kubelet refuses a root that does not exist).
func (n *ContainerdNode) makeCgroupRoot() error {
	for _, h := range cgroupHierarchies() {
		if err := os.MkdirAll(filepath.Join(h, n.cgroupRoot()), 0o755); err != nil {
			return fmt.Errorf("containerd node %s: creating cgroup %s: %w", n.opts.Name, filepath.Join(h, n.cgroupRoot()), err)
		}
	}
	return nil
}

// StartRuntime starts the node's containerd and waits for its socket.
// afterReboot first removes its state directory and runc root, which live
// on tmpfs (/run) on a real machine and are gone after a reboot; its root
// (the metadata of containers and images) stays, and containerd marks the
// containers it finds without a task exited, as after a real reboot.
func (n *ContainerdNode) StartRuntime(afterReboot bool) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.runtime.alive() {
		return fmt.Errorf("containerd node %s: containerd already running (pid %d)", n.opts.Name, n.runtime.pid())
	}
	if afterReboot {
		for _, d := range []string{"ctd/state", "runc"} {
			p := filepath.Join(n.opts.Dir, d)
			unmountUnder(p)
			if err := os.RemoveAll(p); err != nil {
				return fmt.Errorf("containerd node %s: clearing %s: %w", n.opts.Name, p, err)
			}
			if err := os.MkdirAll(p, 0o700); err != nil {
				return err
			}
		}
	}
	_ = os.Remove(n.socket())
	p, err := startProc(mustLook("containerd"), []string{"--config", filepath.Join(n.opts.Dir, "containerd.toml")}, n.RuntimeLog(), filepath.Join(n.opts.Dir, "containerd.pid"))
	if err != nil {
		return fmt.Errorf("containerd node %s: starting containerd: %w (log: %s)", n.opts.Name, err, n.RuntimeLog())
	}
	n.runtime = p
	return n.waitSocket(p, "containerd", n.socket(), n.RuntimeLog(), 30*time.Second)
}

func mustLook(bin string) string {
	if p, err := exec.LookPath(bin); err == nil {
		return p
	}
	return bin
}

// ImportImage imports an OCI image layout tarball into the node's
// containerd (namespace k8s.io, where the CRI finds it), so that pods with
// imagePullPolicy Never or IfNotPresent run it without a registry. The
// image stays in the node's containerd root through runtime restarts and
// reboots.
func (n *ContainerdNode) ImportImage(tarball string) error {
	cmd := exec.Command(mustLook("ctr"), "--address", n.socket(), "-n", "k8s.io", "images", "import", "--snapshotter", "overlayfs", tarball)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("containerd node %s: importing image %s: %w: %s", n.opts.Name, tarball, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// KillContainer kills one container's processes with SIGKILL through the
// node's containerd (ctr tasks kill --all), as an OOM kill or a crash
// would end it: the container exits with 137 and its sandbox stays. id is
// the container's ID, with or without the "containerd://" of a pod's
// container status. The kubelet finds it exited at its next relist.
func (n *ContainerdNode) KillContainer(id string) error {
	id = strings.TrimPrefix(id, "containerd://")
	if id == "" {
		return fmt.Errorf("containerd node %s: killing a container: no container ID", n.opts.Name)
	}
	cmd := exec.Command(mustLook("ctr"), "--address", n.socket(), "-n", "k8s.io", "tasks", "kill", "--all", "--signal", "SIGKILL", id)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("containerd node %s: killing container %s: %w: %s", n.opts.Name, id, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// StartKubelet starts the kubelet with the given feature gates.
func (n *ContainerdNode) StartKubelet(gates map[string]bool) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.startKubeletLocked(gates)
}

func (n *ContainerdNode) startKubeletLocked(gates map[string]bool) error {
	if n.kubelet.alive() {
		return fmt.Errorf("containerd node %s: kubelet already running (pid %d)", n.opts.Name, n.kubelet.pid())
	}
	n.gates = gates
	args := []string{
		"--config", n.kubeletConfigPath(),
		"--kubeconfig", n.kubeconfigPath(),
		"--root-dir", filepath.Join(n.opts.Dir, "kubelet"),
		"--hostname-override", n.opts.Name,
		"--node-labels", joinMap(n.opts.Labels),
		"-v", strconv.Itoa(n.opts.Verbosity),
	}
	// The node's address: the kubelet refuses a loopback node IP
	// (kubelet_node_status.go validateNodeIP) and would then register no
	// address at all, and this machine's hostname resolves to 127.0.0.1.
	// The address of the default route's interface is what it would pick
	// on a machine whose hostname resolves to it (nothing is sent to it
	// from elsewhere: the kubelet listens on 127.0.0.1, pods that need the
	// API server use the host network). Pods read it as status.hostIP.
	if ip, err := utilnet.ChooseHostInterface(); err == nil {
		args = append(args, "--node-ip", ip.String())
	}
	if g := JoinGates(gates); g != "" {
		args = append(args, "--feature-gates", g)
	}
	p, err := startProc(n.opts.Components.Path(cluster.BinKubelet), args, n.KubeletLog(), filepath.Join(n.opts.Dir, "kubelet.pid"))
	if err != nil {
		return fmt.Errorf("containerd node %s: starting kubelet: %w (log: %s)", n.opts.Name, err, n.KubeletLog())
	}
	n.kubelet = p
	n.wantKubelet = true
	go n.restartOnFailure(p)
	return nil
}

// restartOnFailure is systemd's Restart=always for one kubelet process:
// when p exits with an error while the kubelet is wanted and p is still
// the current one, it is started again after RestartSec (10 s).
func (n *ContainerdNode) restartOnFailure(p *proc) {
	<-p.done
	if p.err == nil {
		return
	}
	time.Sleep(10 * time.Second)
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.wantKubelet || n.kubelet != p {
		return
	}
	if f, err := os.OpenFile(n.KubeletLog(), os.O_WRONLY|os.O_APPEND, 0o600); err == nil {
		fmt.Fprintf(f, "=== %s kubelet exited (%s); started again after 10s (systemd Restart=always)\n", time.Now().UTC().Format(time.RFC3339Nano), p.exitErr())
		f.Close()
	}
	_ = n.startKubeletLocked(n.gates)
}

// StopKubelet stops the kubelet as systemd does (SIGTERM, then SIGKILL),
// and it stays stopped.
func (n *ContainerdNode) StopKubelet() error {
	n.mu.Lock()
	n.wantKubelet = false
	n.mu.Unlock()
	return n.procs.StopKubelet()
}

// KillRuntime stops containerd as `systemctl restart containerd` does
// (SIGTERM; the shims and their containers keep running, their sockets
// refuse the kubelet until containerd is back).
func (n *ContainerdNode) KillRuntime() error {
	_, p := n.get()
	return p.stop(10 * time.Second)
}

// PowerOff kills the kubelet, containerd, every shim and every container
// process of the node at once, as losing power does.
func (n *ContainerdNode) PowerOff() error {
	err := n.stopBoth(func() { n.wantKubelet = false }, 0, 0)
	n.killContainers()
	return err
}

// Stop stops the kubelet and containerd and removes everything the node
// made on the machine: containers, shims, mounts, network namespaces, the
// bridge and the cgroups. The node's directory stays (logs).
func (n *ContainerdNode) Stop() error {
	err := n.stopBoth(func() { n.wantKubelet = false }, 10*time.Second, 10*time.Second)
	n.killContainers()
	return errors.Join(err, n.cleanHost())
}

func init() {
	// The embedded cluster's Down cleans up after a run that died: the
	// hollow nodes' processes by their pid files (cluster.KillRealNodes),
	// and for containerd nodes also their shims, containers, mounts,
	// bridge and cgroups.
	cluster.RegisterRealNodeCleaner(cleanDeadContainerdNode)
}

// nodeState is what teardown needs to know of a containerd node, written
// next to its files.
type nodeState struct {
	Name string `json:"name"`
}

// KubeletAlive reports whether the kubelet runs, or is about to be started
// again after a failure (systemd's restart, above).
func (n *ContainerdNode) KubeletAlive() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.kubelet.alive() || n.wantKubelet
}

// apiLimitsConfig is the KubeletConfiguration lines of kubeAPIQPS and
// kubeAPIBurst other than the defaults (0 keeps a default).
func apiLimitsConfig(qps, burst int) string {
	var b strings.Builder
	if qps > 0 {
		fmt.Fprintf(&b, "kubeAPIQPS: %d\n", qps)
	}
	if burst > 0 {
		fmt.Fprintf(&b, "kubeAPIBurst: %d\n", burst)
	}
	return b.String()
}
