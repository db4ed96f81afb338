package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// testNode is a fake-cri served over a real unix socket, driven through the
// generated CRI clients as the kubelet does.
type testNode struct {
	t     *testing.T
	state string
	srv   *criServer
	gs    *grpc.Server
	conn  *grpc.ClientConn
	rt    runtimeapi.RuntimeServiceClient
	img   runtimeapi.ImageServiceClient
}

func startNode(t *testing.T, state string, reboot bool) *testNode {
	t.Helper()
	srv, _, err := newCRIServer(state, "10.200.3.0/24", reboot)
	if err != nil {
		t.Fatalf("newCRIServer: %v", err)
	}
	// Short path: unix socket paths are limited to ~108 bytes.
	dir, err := os.MkdirTemp("", "fcri")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "s")
	lis, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	runtimeapi.RegisterRuntimeServiceServer(gs, srv)
	runtimeapi.RegisterImageServiceServer(gs, srv)
	go func() { _ = gs.Serve(lis) }()
	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	n := &testNode{t: t, state: state, srv: srv, gs: gs, conn: conn,
		rt: runtimeapi.NewRuntimeServiceClient(conn), img: runtimeapi.NewImageServiceClient(conn)}
	t.Cleanup(n.stop)
	return n
}

// stop is a crash: no final persist, so only what RPCs wrote survives.
func (n *testNode) stop() {
	_ = n.conn.Close()
	n.gs.Stop()
}

func podConfig(name string, attempt uint32, hostNetwork bool) *runtimeapi.PodSandboxConfig {
	mode := runtimeapi.NamespaceMode_POD
	if hostNetwork {
		mode = runtimeapi.NamespaceMode_NODE
	}
	return &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: name, Namespace: "default", Uid: "uid-" + name, Attempt: attempt},
		Labels:   map[string]string{"io.kubernetes.pod.name": name},
		Linux: &runtimeapi.LinuxPodSandboxConfig{SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
			NamespaceOptions: &runtimeapi.NamespaceOption{Network: mode},
		}},
	}
}

func (n *testNode) runPod(name string, attempt uint32, hostNetwork bool) (string, string) {
	n.t.Helper()
	ctx := context.Background()
	resp, err := n.rt.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: podConfig(name, attempt, hostNetwork)})
	if err != nil {
		n.t.Fatalf("RunPodSandbox(%s): %v", name, err)
	}
	st, err := n.rt.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: resp.PodSandboxId})
	if err != nil {
		n.t.Fatal(err)
	}
	return resp.PodSandboxId, st.GetStatus().GetNetwork().GetIp()
}

// runContainer does what the kubelet does: ImageStatus, then create with
// the returned image ID, then start.
func (n *testNode) runContainer(sandboxID, name, image string) string {
	n.t.Helper()
	ctx := context.Background()
	is, err := n.img.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: image}})
	if err != nil || is.Image == nil {
		n.t.Fatalf("ImageStatus(%s) = %v, %v; want present", image, is, err)
	}
	if is.Image.Size == 0 {
		n.t.Fatalf("image %s has size 0; the kubelet rejects that", image)
	}
	cr, err := n.rt.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{
		PodSandboxId: sandboxID,
		Config: &runtimeapi.ContainerConfig{
			Metadata: &runtimeapi.ContainerMetadata{Name: name},
			Image:    &runtimeapi.ImageSpec{Image: is.Image.Id, UserSpecifiedImage: image},
			Linux:    &runtimeapi.LinuxContainerConfig{Resources: &runtimeapi.LinuxContainerResources{CpuShares: 2}},
		},
		SandboxConfig: &runtimeapi.PodSandboxConfig{},
	})
	if err != nil {
		n.t.Fatalf("CreateContainer: %v", err)
	}
	if _, err := n.rt.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: cr.ContainerId}); err != nil {
		n.t.Fatalf("StartContainer: %v", err)
	}
	return cr.ContainerId
}

func (n *testNode) containerStatus(id string) *runtimeapi.ContainerStatus {
	n.t.Helper()
	resp, err := n.rt.ContainerStatus(context.Background(), &runtimeapi.ContainerStatusRequest{ContainerId: id})
	if err != nil {
		n.t.Fatalf("ContainerStatus(%s): %v", id, err)
	}
	return resp.Status
}

func (n *testNode) sandboxStatus(id string) *runtimeapi.PodSandboxStatus {
	n.t.Helper()
	resp, err := n.rt.PodSandboxStatus(context.Background(), &runtimeapi.PodSandboxStatusRequest{PodSandboxId: id})
	if err != nil {
		n.t.Fatalf("PodSandboxStatus(%s): %v", id, err)
	}
	return resp.Status
}

func wantCode(t *testing.T, what string, err error, code codes.Code) {
	t.Helper()
	if status.Code(err) != code {
		t.Fatalf("%s: error %v (code %v), want code %v", what, err, status.Code(err), code)
	}
}

func TestRestartKeepsContainersAndRebootExitsThem(t *testing.T) {
	ctx := context.Background()
	state := filepath.Join(t.TempDir(), "state.json")

	n := startNode(t, state, false)
	sbA, ipA := n.runPod("a", 0, false)
	sbB, ipB := n.runPod("b", 0, false)
	sbH, ipH := n.runPod("h", 0, true)
	if ipA != "10.200.3.2" || ipB != "10.200.3.3" {
		t.Fatalf("pod IPs = %s, %s; want 10.200.3.2, 10.200.3.3", ipA, ipB)
	}
	if ipH != "" {
		t.Fatalf("host-network sandbox IP = %q, want empty (the kubelet uses the node IP)", ipH)
	}
	cA := n.runContainer(sbA, "app", "nginx:1.25")
	cs := n.containerStatus(cA)
	if cs.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Fatalf("container state %v, want RUNNING", cs.State)
	}
	if cs.Image.GetImage() != "nginx:1.25" || cs.ImageRef != imageIDFor("nginx:1.25") || cs.ImageId != cs.ImageRef {
		t.Errorf("container image = %q ref %q id %q; want repo tag and image ID", cs.Image.GetImage(), cs.ImageRef, cs.ImageId)
	}
	if cs.GetResources().GetLinux().GetCpuShares() != 2 {
		t.Errorf("status.Resources = %v, want the config's", cs.Resources)
	}
	ex, err := n.rt.ExecSync(ctx, &runtimeapi.ExecSyncRequest{ContainerId: cA, Cmd: []string{"true"}})
	if err != nil || ex.ExitCode != 0 {
		t.Fatalf("ExecSync in running container = %v, %v; want exit 0", ex, err)
	}
	_, err = n.rt.ExecSync(ctx, &runtimeapi.ExecSyncRequest{ContainerId: "nope", Cmd: []string{"true"}})
	wantCode(t, "ExecSync unknown container", err, codes.NotFound)

	// Remove b: its IP is free again and goes to the next sandbox.
	if _, err := n.rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sbB}); err != nil {
		t.Fatal(err)
	}
	if _, err := n.rt.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sbB}); err != nil {
		t.Fatal(err)
	}
	if _, err := n.rt.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sbB}); err != nil {
		t.Fatalf("second RemovePodSandbox (must be idempotent): %v", err)
	}
	_, err = n.rt.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: sbB})
	wantCode(t, "PodSandboxStatus of removed sandbox", err, codes.NotFound)
	if _, ipC := n.runPod("c", 0, false); ipC != ipB {
		t.Fatalf("IP after removing b = %s, want b's freed %s", ipC, ipB)
	}

	// Runtime crash + restart: everything is still there and running.
	n.stop()
	n = startNode(t, state, false)
	if got := n.containerStatus(cA).State; got != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Fatalf("after restart container state = %v, want RUNNING", got)
	}
	if got := n.sandboxStatus(sbA); got.State != runtimeapi.PodSandboxState_SANDBOX_READY || got.Network.Ip != ipA {
		t.Fatalf("after restart sandbox = %v ip %s, want READY %s", got.State, got.Network.Ip, ipA)
	}
	list, err := n.rt.ListContainers(ctx, &runtimeapi.ListContainersRequest{})
	if err != nil || len(list.Containers) != 1 {
		t.Fatalf("ListContainers after restart = %v, %v; want 1 container", list, err)
	}
	if _, ipD := n.runPod("d", 0, false); ipD != "10.200.3.4" {
		t.Fatalf("new pod after restart got %s, want 10.200.3.4 (a and c still hold .2 and .3)", ipD)
	}

	// Reboot: the records survive, nothing runs.
	n.stop()
	n = startNode(t, state, true)
	cs = n.containerStatus(cA)
	if cs.State != runtimeapi.ContainerState_CONTAINER_EXITED || cs.ExitCode != unknownExitCode || cs.Reason != unknownExitReason || cs.FinishedAt == 0 {
		t.Fatalf("after reboot container = %v exit %d reason %q finished %d; want EXITED 255 Unknown", cs.State, cs.ExitCode, cs.Reason, cs.FinishedAt)
	}
	for _, id := range []string{sbA, sbH} {
		if got := n.sandboxStatus(id).State; got != runtimeapi.PodSandboxState_SANDBOX_NOTREADY {
			t.Fatalf("after reboot sandbox %s = %v, want NOTREADY", id, got)
		}
	}
	_, err = n.rt.ExecSync(ctx, &runtimeapi.ExecSyncRequest{ContainerId: cA, Cmd: []string{"true"}})
	wantCode(t, "ExecSync in exited container", err, codes.FailedPrecondition)
	// The kubelet's recovery: a new sandbox attempt gets a fresh IP while
	// the dead one still holds its own, and its containers start.
	sbA1, ipA1 := n.runPod("a", 1, false)
	if ipA1 == ipA || ipA1 != "10.200.3.5" {
		t.Fatalf("recreated sandbox IP = %s, want the lowest free 10.200.3.5", ipA1)
	}
	c2 := n.runContainer(sbA1, "app", "nginx:1.25")
	if got := n.containerStatus(c2).State; got != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Fatalf("container in recreated sandbox = %v, want RUNNING", got)
	}
	// A --reboot is applied once: a plain restart after it keeps the new pod.
	n.stop()
	n = startNode(t, state, false)
	if got := n.containerStatus(c2).State; got != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Fatalf("after post-reboot restart container = %v, want RUNNING", got)
	}
}

func TestContainerLifecycleMatchesContainerd(t *testing.T) {
	ctx := context.Background()
	n := startNode(t, filepath.Join(t.TempDir(), "state.json"), false)
	sb, _ := n.runPod("p", 0, false)
	c := n.runContainer(sb, "app", "busybox")

	_, err := n.rt.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: c})
	wantCode(t, "StartContainer of a running container", err, codes.FailedPrecondition)
	_, err = n.rt.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: "nope",
		Config: &runtimeapi.ContainerConfig{Metadata: &runtimeapi.ContainerMetadata{Name: "x"}, Image: &runtimeapi.ImageSpec{Image: "busybox"}}})
	wantCode(t, "CreateContainer in unknown sandbox", err, codes.NotFound)
	_, err = n.rt.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sb, Config: &runtimeapi.ContainerConfig{}})
	wantCode(t, "CreateContainer without metadata (upstream would panic)", err, codes.InvalidArgument)
	_, err = n.rt.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: "nope"})
	wantCode(t, "StopContainer of unknown container", err, codes.NotFound)
	_, err = n.rt.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: "nope"})
	wantCode(t, "ContainerStatus of unknown container", err, codes.NotFound)

	// Graceful stop: exit 0; a second stop must not touch FinishedAt.
	if _, err := n.rt.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: c, Timeout: 30}); err != nil {
		t.Fatal(err)
	}
	first := n.containerStatus(c)
	if first.State != runtimeapi.ContainerState_CONTAINER_EXITED || first.ExitCode != 0 || first.Reason != exitReasonCompleted {
		t.Fatalf("after StopContainer = %v exit %d %q, want EXITED 0 Completed", first.State, first.ExitCode, first.Reason)
	}
	if _, err := n.rt.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: c, Timeout: 0}); err != nil {
		t.Fatalf("StopContainer of exited container must succeed: %v", err)
	}
	if again := n.containerStatus(c); again.FinishedAt != first.FinishedAt || again.ExitCode != 0 {
		t.Fatalf("second StopContainer changed status: %v -> %v", first, again)
	}

	// StopPodSandbox kills what still runs in it.
	c2 := n.runContainer(sb, "sidecar", "busybox")
	if _, err := n.rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sb}); err != nil {
		t.Fatal(err)
	}
	if s := n.containerStatus(c2); s.State != runtimeapi.ContainerState_CONTAINER_EXITED || s.ExitCode != sigkillExitCode {
		t.Fatalf("container after StopPodSandbox = %v exit %d, want EXITED 137", s.State, s.ExitCode)
	}
	_, err = n.rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: "nope"})
	wantCode(t, "StopPodSandbox of unknown sandbox", err, codes.NotFound)

	// UpdateContainerResources is recorded and reported.
	upd := &runtimeapi.LinuxContainerResources{CpuShares: 512, MemoryLimitInBytes: 1 << 30}
	if _, err := n.rt.UpdateContainerResources(ctx, &runtimeapi.UpdateContainerResourcesRequest{ContainerId: c, Linux: upd}); err != nil {
		t.Fatal(err)
	}
	if got := n.containerStatus(c).GetResources().GetLinux(); got.GetCpuShares() != 512 || got.GetMemoryLimitInBytes() != 1<<30 {
		t.Fatalf("resources after update = %v", got)
	}

	// RemovePodSandbox takes its containers with it.
	if _, err := n.rt.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sb}); err != nil {
		t.Fatal(err)
	}
	list, err := n.rt.ListContainers(ctx, &runtimeapi.ListContainersRequest{})
	if err != nil || len(list.Containers) != 0 {
		t.Fatalf("containers after RemovePodSandbox = %v, %v; want none", list, err)
	}
}

func TestImagesAndStatus(t *testing.T) {
	ctx := context.Background()
	n := startNode(t, filepath.Join(t.TempDir(), "state.json"), false)

	v, err := n.rt.Version(ctx, &runtimeapi.VersionRequest{})
	if err != nil || v.RuntimeName != "fake-cri" || v.RuntimeVersion != "0.1.0" || v.RuntimeApiVersion != "v1" {
		t.Fatalf("Version = %v, %v", v, err)
	}
	st, err := n.rt.Status(ctx, &runtimeapi.StatusRequest{})
	if err != nil {
		t.Fatal(err)
	}
	ready := map[string]bool{}
	for _, c := range st.GetStatus().GetConditions() {
		ready[c.Type] = c.Status
	}
	if !ready[runtimeapi.RuntimeReady] || !ready[runtimeapi.NetworkReady] {
		t.Fatalf("Status conditions = %v, want RuntimeReady and NetworkReady", st.GetStatus().GetConditions())
	}
	if _, err := n.rt.RuntimeConfig(ctx, &runtimeapi.RuntimeConfigRequest{}); err != nil {
		t.Fatalf("RuntimeConfig: %v", err)
	}
	if _, err := n.rt.ListMetricDescriptors(ctx, &runtimeapi.ListMetricDescriptorsRequest{}); err != nil {
		t.Fatalf("ListMetricDescriptors: %v", err)
	}
	if _, err := n.rt.ListPodSandboxMetrics(ctx, &runtimeapi.ListPodSandboxMetricsRequest{}); err != nil {
		t.Fatalf("ListPodSandboxMetrics: %v", err)
	}
	ev, err := n.rt.GetContainerEvents(ctx, &runtimeapi.GetEventsRequest{})
	if err == nil {
		_, err = ev.Recv()
	}
	wantCode(t, "GetContainerEvents", err, codes.Unimplemented)

	pull, err := n.img.PullImage(ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: "registry.local:5000/team/app:v2"}})
	if err != nil || pull.ImageRef != imageIDFor("registry.local:5000/team/app:v2") {
		t.Fatalf("PullImage = %v, %v", pull, err)
	}
	is, err := n.img.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: pull.ImageRef}})
	if err != nil || is.Image == nil || is.Image.RepoTags[0] != "registry.local:5000/team/app:v2" {
		t.Fatalf("ImageStatus by ID = %v, %v", is, err)
	}
	if got := is.Image.RepoDigests[0]; got != "registry.local:5000/team/app@"+pull.ImageRef {
		t.Errorf("RepoDigests[0] = %q", got)
	}
	if is, err := n.img.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: imageIDFor("never-seen")}}); err != nil || is.Image != nil {
		t.Fatalf("ImageStatus of unknown ID = %v, %v; want not present", is, err)
	}
	if is, err := n.img.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: "never/pulled:1"}}); err != nil || is.Image == nil || is.Image.Size != fakeImageSize {
		t.Fatalf("ImageStatus of any ref = %v, %v; want present with size", is, err)
	}
	imgs, err := n.img.ListImages(ctx, &runtimeapi.ListImagesRequest{})
	if err != nil || len(imgs.Images) != 2 {
		t.Fatalf("ListImages = %v, %v; want 2", imgs, err)
	}
	fsInfo, err := n.img.ImageFsInfo(ctx, &runtimeapi.ImageFsInfoRequest{})
	if err != nil || len(fsInfo.ImageFilesystems) != 1 || fsInfo.ImageFilesystems[0].UsedBytes.GetValue() != 2*fakeImageSize {
		t.Fatalf("ImageFsInfo = %v, %v", fsInfo, err)
	}
	// Image GC removes by ID.
	if _, err := n.img.RemoveImage(ctx, &runtimeapi.RemoveImageRequest{Image: &runtimeapi.ImageSpec{Image: pull.ImageRef}}); err != nil {
		t.Fatal(err)
	}
	if imgs, _ := n.img.ListImages(ctx, &runtimeapi.ListImagesRequest{}); len(imgs.Images) != 1 {
		t.Fatalf("ListImages after RemoveImage by ID = %d images, want 1", len(imgs.Images))
	}
	// Images persist.
	n.stop()
	n = startNode(t, n.state, false)
	if imgs, _ := n.img.ListImages(ctx, &runtimeapi.ListImagesRequest{}); len(imgs.Images) != 1 || imgs.Images[0].RepoTags[0] != "never/pulled:1" {
		t.Fatalf("ListImages after restart = %v", imgs)
	}
}

func TestPodCIDRExhaustion(t *testing.T) {
	srv, _, err := newCRIServer(filepath.Join(t.TempDir(), "state.json"), "10.1.1.0/30", false)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := srv.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: podConfig("a", 0, false)}); err != nil {
		t.Fatal(err)
	}
	_, err = srv.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: podConfig("b", 0, false)})
	if err == nil || !strings.Contains(err.Error(), "no IP addresses available") {
		t.Fatalf("second sandbox in a /30: %v, want exhaustion", err)
	}
	// The failed sandbox must not exist, and host-network pods need no IP.
	if _, ok := srv.sandboxState("b_default_uid-b_0"); ok {
		t.Fatal("sandbox b exists after failed RunPodSandbox")
	}
	if _, err := srv.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: podConfig("h", 0, true)}); err != nil {
		t.Fatalf("host-network sandbox with exhausted CIDR: %v", err)
	}
}

func TestParseFlags(t *testing.T) {
	ok := []string{"--listen", "unix:///run/x/cri.sock", "--state", "/var/x/state.json", "--pod-cidr", "10.0.0.0/24"}
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr string
		check   func(*options) bool
	}{
		{name: "full", args: append(ok, "--reboot", "-v", "4"), check: func(o *options) bool {
			return o.socketPath == "/run/x/cri.sock" && o.statePath == "/var/x/state.json" && o.reboot
		}},
		{name: "bare socket path", args: []string{"--listen", "/tmp/a.sock", "--state", "/s", "--pod-cidr", "10.0.0.0/24"},
			check: func(o *options) bool { return o.socketPath == "/tmp/a.sock" && !o.reboot }},
		{name: "missing listen", args: ok[2:], wantErr: "--listen is required"},
		{name: "missing state", args: []string{ok[0], ok[1], ok[4], ok[5]}, wantErr: "--state is required"},
		{name: "missing cidr", args: ok[:4], wantErr: "--pod-cidr is required"},
		{name: "bad cidr", args: append(ok[:5:5], "10.0.0.0/40"), wantErr: "invalid --pod-cidr"},
		{name: "tcp endpoint", args: append([]string{"--listen", "tcp://127.0.0.1:1"}, ok[2:]...), wantErr: "only unix://"},
		{name: "unknown flag", args: append(ok, "--nope"), wantErr: "unknown flag"},
		{name: "stray argument", args: append(ok, "extra"), wantErr: "unexpected arguments"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := parseFlags(tc.args, &bytes.Buffer{})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(o) {
				t.Fatalf("options = %+v", o)
			}
		})
	}
	if _, err := parseFlags([]string{"--help"}, &bytes.Buffer{}); !errors.Is(err, pflag.ErrHelp) {
		t.Fatalf("--help: %v, want pflag.ErrHelp", err)
	}
}

func TestCheckSocket(t *testing.T) {
	dir, err := os.MkdirTemp("", "fcri")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)

	regular := filepath.Join(dir, "file")
	if err := os.WriteFile(regular, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := checkSocket(regular); err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Fatalf("regular file: %v", err)
	}
	if err := checkSocket(filepath.Join(dir, "absent")); err != nil {
		t.Fatalf("absent path: %v", err)
	}
	live := filepath.Join(dir, "live")
	l, err := net.Listen("unix", live)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkSocket(live); err == nil || !strings.Contains(err.Error(), "another process") {
		t.Fatalf("live socket: %v", err)
	}
	// A socket nobody serves is stale and may be replaced.
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close()
	if err := checkSocket(live); err != nil {
		t.Fatalf("stale socket: %v", err)
	}
	// listenUnix replaces it, with mode 0600, and leaves nothing else behind.
	l2, err := listenUnix(live)
	if err != nil {
		t.Fatalf("listenUnix over stale socket: %v", err)
	}
	defer l2.Close()
	fi, err := os.Stat(live)
	if err != nil || fi.Mode().Type() != os.ModeSocket || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket after listenUnix: %v, %v; want a 0600 socket", fi, err)
	}
	if err := checkSocket(live); err == nil {
		t.Fatal("checkSocket accepted the socket listenUnix serves")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Fatalf("socket dir has %d entries, want file and live", len(entries))
	}
}
