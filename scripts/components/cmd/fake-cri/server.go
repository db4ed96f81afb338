package main

import (
	"cmp"
	"context"
	"fmt"
	"net/netip"
	"path/filepath"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	apitest "k8s.io/cri-api/pkg/apis/testing"
	fakeremote "k8s.io/cri-client/pkg/fake"
	"k8s.io/klog/v2"
)

const (
	// fakeImageSize is what every image reports. It must be > 0: the kubelet
	// rejects a zero-size image from ImageStatus with ImageInspectError.
	fakeImageSize = 1 << 20

	// Exit status containerd reports for a container it had to SIGKILL
	// (StopContainer with timeout 0, or StopPodSandbox, which stops the
	// sandbox's containers forcibly): 128+9. containerd's ContainerStatus
	// fills an empty reason of an exited container with "Completed" for
	// exit code 0 and "Error" otherwise (cri/server/container_status.go).
	sigkillExitCode     = 137
	exitReasonError     = "Error"
	exitReasonCompleted = "Completed"
)

// criServer is the CRI RuntimeService and ImageService served on --listen.
//
// It embeds the upstream fake (k8s.io/cri-client/pkg/fake), so every CRI
// method is promoted from it, and overrides
//   - the mutating methods, to persist the fakes' maps to --state before the
//     RPC returns, so that a SIGKILL loses nothing (containerd's metadata is
//     likewise committed to bolt before it replies);
//   - the places where the upstream fake is too far from containerd for a
//     real kubelet to behave as it would on a node: per-sandbox pod IPs,
//     gRPC NotFound codes (the kubelet checks crierror.IsNotFound), state
//     checks in Start/Stop/ExecSync, images that are always present, and a
//     non-empty ImageFsInfo.
//
// Lock order: persistMu, then RuntimeService, then ImageService, then ipMu.
// Embedded fake methods take their own service lock, so none of these may be
// held when calling one.
type criServer struct {
	*fakeremote.RemoteRuntime

	statePath string
	// fsMountpoint is reported as the image filesystem. It is the state
	// directory, which exists, so a real cadvisor can report its capacity.
	fsMountpoint string

	// persistMu serialises whole-state writes so that an older snapshot can
	// never overwrite a newer one.
	persistMu sync.Mutex

	ipMu sync.Mutex
	ipam *ipAllocator
}

// loadInfo summarises what newCRIServer found on disk, for the startup log.
type loadInfo struct {
	Sandboxes, Containers, Images int
	// Set when --reboot was applied.
	RebootExitedContainers, RebootNotReadySandboxes int
}

// newCRIServer builds the fakes, loads statePath into them, applies the
// reboot transform if asked, and writes the state back (so the file exists
// and reflects the reboot before the first RPC).
func newCRIServer(statePath, podCIDR string, reboot bool) (*criServer, loadInfo, error) {
	var info loadInfo
	ipam, err := newIPAllocator(podCIDR)
	if err != nil {
		return nil, info, err
	}
	st, err := loadStateFile(statePath)
	if err != nil {
		return nil, info, err
	}
	if reboot {
		info.RebootExitedContainers, info.RebootNotReadySandboxes = applyReboot(st, time.Now().UnixNano())
	}

	if err := restoreIPs(ipam, st); err != nil {
		return nil, info, err
	}
	rt := newFakeRuntime(st)
	s := &criServer{
		RemoteRuntime: rt,
		statePath:     statePath,
		fsMountpoint:  filepath.Dir(statePath),
		ipam:          ipam,
	}
	info.Sandboxes, info.Containers, info.Images = len(st.Sandboxes), len(st.Containers), len(st.Images)
	if err := s.persist(); err != nil {
		return nil, info, fmt.Errorf("write state file %s: %w", statePath, err)
	}
	return s, info, nil
}

// restoreIPs rebuilds the allocator from the state. The state's table
// wins; a pod-network sandbox without an entry (state written by hand, or
// an older file) keeps the IP in its status if that is free. Entries for
// sandboxes that no longer exist are dropped.
func restoreIPs(ipam *ipAllocator, st *runtimeState) error {
	sandboxIDs := make(map[string]bool, len(st.Sandboxes))
	for _, sb := range st.Sandboxes {
		sandboxIDs[sb.Id] = true
	}
	for id, ipStr := range st.IPAllocations {
		if !sandboxIDs[id] {
			klog.V(2).InfoS("Dropping IP allocation of unknown sandbox", "podSandboxID", id, "ip", ipStr)
			continue
		}
		ip, err := netip.ParseAddr(ipStr)
		if err != nil {
			return fmt.Errorf("state: sandbox %q has invalid IP %q: %w", id, ipStr, err)
		}
		if err := ipam.Restore(id, ip); err != nil {
			return fmt.Errorf("state: %w", err)
		}
	}
	for _, sb := range st.Sandboxes {
		if _, ok := ipam.Lookup(sb.Id); ok || isHostNetwork(&sb.PodSandboxStatus) {
			continue
		}
		if ip, err := netip.ParseAddr(sb.GetNetwork().GetIp()); err == nil {
			if err := ipam.Restore(sb.Id, ip); err != nil {
				klog.InfoS("Sandbox IP from status conflicts, not restoring it", "podSandboxID", sb.Id, "err", err)
			}
		}
	}
	return nil
}

// newFakeRuntime is the upstream fake runtime and image service holding
// the state's sandboxes, containers and images.
func newFakeRuntime(st *runtimeState) *fakeremote.RemoteRuntime {
	rt := fakeremote.NewFakeRemoteRuntime()
	// The upstream Start() is not used (we own the gRPC server), so set the
	// conditions it would: the kubelet waits for RuntimeReady and
	// NetworkReady before it runs pods.
	rt.RuntimeService.Lock()
	rt.RuntimeService.FakeStatus = &runtimeapi.RuntimeStatus{
		Conditions: []*runtimeapi.RuntimeCondition{
			{Type: runtimeapi.RuntimeReady, Status: true},
			{Type: runtimeapi.NetworkReady, Status: true},
		},
	}
	rt.RuntimeService.Unlock()
	rt.RuntimeService.SetFakeSandboxes(st.Sandboxes)
	rt.RuntimeService.SetFakeContainers(st.Containers)
	// Not strictly needed (images are created here, not by the upstream
	// makeFakeImage), but keeps any upstream code path from producing the
	// zero-size images the kubelet rejects.
	rt.ImageService.SetFakeImageSize(fakeImageSize)
	rt.ImageService.Lock()
	for _, img := range st.Images {
		rt.ImageService.Images[cmp.Or(img.GetSpec().GetImage(), imageRepoTag(img), img.Id)] = img
	}
	rt.ImageService.Unlock()
	return rt
}

// persist writes the whole state atomically. It is called after every
// mutation, before the RPC returns.
func (s *criServer) persist() error {
	s.persistMu.Lock()
	defer s.persistMu.Unlock()
	rs, is := s.RuntimeService, s.ImageService
	rs.Lock()
	is.Lock()
	s.ipMu.Lock()
	data, err := encodeState(rs.Sandboxes, rs.Containers, is.Images, s.ipam.Snapshot())
	s.ipMu.Unlock()
	is.Unlock()
	rs.Unlock()
	if err != nil {
		return err
	}
	return writeFileAtomic(s.statePath, data)
}

// persistAfter persists and turns a failure into a gRPC error, so that the
// kubelet sees the call fail rather than believing in state that a crash
// would lose.
func (s *criServer) persistAfter(op string) error {
	if err := s.persist(); err != nil {
		klog.ErrorS(err, "Failed to persist state", "op", op, "state", s.statePath)
		return status.Errorf(codes.Internal, "fake-cri: persisting state after %s: %v", op, err)
	}
	return nil
}

// persisted ends a mutating RPC: it persists after op (persistAfter), logs
// op with kv at V(2) and returns resp, or the persist error.
func persisted[T any](s *criServer, resp T, op string, kv ...any) (T, error) {
	if err := s.persistAfter(op); err != nil {
		var none T
		return none, err
	}
	klog.V(2).InfoS(op, kv...)
	return resp, nil
}

// trimCallLogs drops the upstream fakes' Called slices, which record every
// RPC for test assertions and would otherwise grow for the lifetime of the
// process (the kubelet polls several RPCs per pod every second).
func (s *criServer) trimCallLogs() {
	s.RuntimeService.Lock()
	s.RuntimeService.Called = nil
	s.RuntimeService.Unlock()
	s.ImageService.Lock()
	s.ImageService.Called = nil
	s.ImageService.Unlock()
}

// containerState returns a container's state and sandbox, under the lock.
func (s *criServer) containerState(id string) (state runtimeapi.ContainerState, sandboxID string, ok bool) {
	s.RuntimeService.Lock()
	defer s.RuntimeService.Unlock()
	c, ok := s.RuntimeService.Containers[id]
	if !ok {
		return 0, "", false
	}
	return c.State, c.SandboxID, true
}

// containerNotFound is the containerd error for an unknown container ID; see
// sandboxNotFound.
func containerNotFound(id string) error {
	return status.Errorf(codes.NotFound, "an error occurred when try to find container %q: not found", id)
}

// ---- RuntimeService ----

// Version reports this runtime. The kubelet logs the name and uses it as the
// scheme of container IDs in pod status ("fake-cri://...").
func (s *criServer) Version(context.Context, *runtimeapi.VersionRequest) (*runtimeapi.VersionResponse, error) {
	return &runtimeapi.VersionResponse{
		Version:           "0.1.0",
		RuntimeName:       "fake-cri",
		RuntimeVersion:    "0.1.0",
		RuntimeApiVersion: "v1",
	}, nil
}

// CreateContainer creates the container (upstream) after checking that its
// sandbox exists, then fills in the status fields containerd reports and the
// upstream fake leaves out: the image as a repo tag with ImageRef/ImageId
// set to the image ID, and Resources from the config (read by the kubelet's
// in-place resize logic).
func (s *criServer) CreateContainer(ctx context.Context, req *runtimeapi.CreateContainerRequest) (*runtimeapi.CreateContainerResponse, error) {
	cfg := req.GetConfig()
	md := cfg.GetMetadata()
	if md == nil || cfg.GetImage() == nil {
		return nil, status.Error(codes.InvalidArgument, "container config metadata and image are required")
	}
	sbID := req.PodSandboxId
	if _, ok := s.sandboxState(sbID); !ok {
		return nil, sandboxNotFound(sbID)
	}
	id := apitest.BuildContainerName(md, sbID)
	if _, _, exists := s.containerState(id); exists {
		return nil, status.Errorf(codes.AlreadyExists, "failed to reserve container name %q: name is reserved", id)
	}

	// The kubelet passes the image ID it got from ImageStatus/PullImage.
	img, _ := s.ensureImage(cfg.Image.Image, false)

	resp, err := s.RemoteRuntime.CreateContainer(ctx, req)
	if err != nil {
		klog.ErrorS(err, "CreateContainer failed", "podSandboxID", sbID, "container", md.Name)
		return nil, err
	}

	s.RuntimeService.Lock()
	if c, ok := s.RuntimeService.Containers[resp.ContainerId]; ok {
		if img != nil {
			c.Image = &runtimeapi.ImageSpec{
				Image:              imageRepoTag(img),
				Annotations:        cfg.Image.Annotations,
				UserSpecifiedImage: cfg.Image.UserSpecifiedImage,
				RuntimeHandler:     cfg.Image.RuntimeHandler,
			}
			c.ImageRef = img.Id
			c.ImageId = img.Id
		}
		res := cloneLinuxResources(cfg.GetLinux().GetResources())
		c.LinuxResources = res
		if res != nil {
			c.Resources = &runtimeapi.ContainerResources{Linux: cloneLinuxResources(res)}
		}
	}
	s.RuntimeService.Unlock()

	return persisted(s, resp, "CreateContainer", "podSandboxID", sbID, "container", md.Name, "attempt", md.Attempt, "containerID", resp.ContainerId)
}

// StartContainer starts a CREATED container whose sandbox is ready. The
// upstream fake starts anything; containerd refuses a container that is not
// CREATED, and one whose sandbox is not running ("sandbox container ... is
// not running"), which matters when a reboot lands between the kubelet's
// CreateContainer and StartContainer.
func (s *criServer) StartContainer(ctx context.Context, req *runtimeapi.StartContainerRequest) (*runtimeapi.StartContainerResponse, error) {
	id := req.ContainerId
	state, sbID, ok := s.containerState(id)
	if !ok {
		return nil, containerNotFound(id)
	}
	if state != runtimeapi.ContainerState_CONTAINER_CREATED {
		err := status.Errorf(codes.FailedPrecondition, "container %q is in %s state", id, state)
		klog.ErrorS(err, "StartContainer failed", "containerID", id)
		return nil, err
	}
	if sbState, ok := s.sandboxState(sbID); !ok || sbState != runtimeapi.PodSandboxState_SANDBOX_READY {
		err := status.Errorf(codes.FailedPrecondition, "sandbox container %q is not running", sbID)
		klog.ErrorS(err, "StartContainer failed", "containerID", id)
		return nil, err
	}
	resp, err := s.RemoteRuntime.StartContainer(ctx, req)
	if err != nil {
		klog.ErrorS(err, "StartContainer failed", "containerID", id)
		return nil, err
	}
	return persisted(s, resp, "StartContainer", "containerID", id)
}

// StopContainer stops a running container. Like containerd, stopping a
// container that is not running is a successful no-op (the upstream fake
// would overwrite FinishedAt of an already exited container). The exit
// status models a process that honours SIGTERM within the grace period
// (0, "Completed"); with timeout 0 it is SIGKILLed (137, "Error").
func (s *criServer) StopContainer(ctx context.Context, req *runtimeapi.StopContainerRequest) (*runtimeapi.StopContainerResponse, error) {
	id := req.ContainerId
	state, _, ok := s.containerState(id)
	if !ok {
		// The kubelet tolerates NotFound here (kuberuntime_container.go).
		return nil, containerNotFound(id)
	}
	if state != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return &runtimeapi.StopContainerResponse{}, nil
	}
	resp, err := s.RemoteRuntime.StopContainer(ctx, req)
	if err != nil {
		klog.ErrorS(err, "StopContainer failed", "containerID", id)
		return nil, err
	}
	s.RuntimeService.Lock()
	if c, ok := s.RuntimeService.Containers[id]; ok {
		if req.Timeout > 0 {
			c.ExitCode, c.Reason = 0, exitReasonCompleted
		} else {
			c.ExitCode, c.Reason = sigkillExitCode, exitReasonError
		}
	}
	s.RuntimeService.Unlock()
	return persisted(s, resp, "StopContainer", "containerID", id, "timeout", req.Timeout)
}

// RemoveContainer removes the container (upstream, idempotent).
func (s *criServer) RemoveContainer(ctx context.Context, req *runtimeapi.RemoveContainerRequest) (*runtimeapi.RemoveContainerResponse, error) {
	id := req.ContainerId
	_, _, existed := s.containerState(id)
	resp, err := s.RemoteRuntime.RemoveContainer(ctx, req)
	if err != nil {
		klog.ErrorS(err, "RemoveContainer failed", "containerID", id)
		return nil, err
	}
	if !existed {
		return resp, nil
	}
	return persisted(s, resp, "RemoveContainer", "containerID", id)
}

// ContainerStatus maps the upstream "not found" error to gRPC NotFound; see
// sandboxNotFound for why the kubelet needs the code.
func (s *criServer) ContainerStatus(ctx context.Context, req *runtimeapi.ContainerStatusRequest) (*runtimeapi.ContainerStatusResponse, error) {
	resp, err := s.RemoteRuntime.ContainerStatus(ctx, req)
	if err != nil {
		if _, _, ok := s.containerState(req.ContainerId); !ok {
			return nil, containerNotFound(req.ContainerId)
		}
		return nil, err
	}
	return resp, nil
}

// UpdateContainerResources records new Linux resources on the container
// (the upstream fake discards them), in both the stored config and the
// reported status.Resources, and persists if anything changed.
func (s *criServer) UpdateContainerResources(ctx context.Context, req *runtimeapi.UpdateContainerResourcesRequest) (*runtimeapi.UpdateContainerResourcesResponse, error) {
	id := req.ContainerId
	changed := false
	s.RuntimeService.Lock()
	c, ok := s.RuntimeService.Containers[id]
	if ok && req.Linux != nil && !proto.Equal(c.LinuxResources, req.Linux) {
		c.LinuxResources = cloneLinuxResources(req.Linux)
		if c.Resources == nil {
			c.Resources = &runtimeapi.ContainerResources{}
		}
		c.Resources.Linux = cloneLinuxResources(req.Linux)
		changed = true
	}
	s.RuntimeService.Unlock()
	if !ok {
		return nil, containerNotFound(id)
	}
	resp, err := s.RemoteRuntime.UpdateContainerResources(ctx, req)
	if err != nil {
		klog.ErrorS(err, "UpdateContainerResources failed", "containerID", id)
		return nil, err
	}
	if !changed {
		return resp, nil
	}
	return persisted(s, resp, "UpdateContainerResources", "containerID", id)
}

// ExecSync succeeds with exit code 0 in a running container (exec probes
// pass). In any other state it fails as containerd does instead of the
// upstream's unconditional success, so that exec probes against a dead
// container fail.
func (s *criServer) ExecSync(ctx context.Context, req *runtimeapi.ExecSyncRequest) (*runtimeapi.ExecSyncResponse, error) {
	state, _, ok := s.containerState(req.ContainerId)
	if !ok {
		return nil, containerNotFound(req.ContainerId)
	}
	if state != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return nil, status.Errorf(codes.FailedPrecondition, "container is not running: container %q is in %s state", req.ContainerId, state)
	}
	return s.RemoteRuntime.ExecSync(ctx, req)
}

// GetContainerEvents is Unimplemented: the upstream fake ends the stream
// immediately with OK, which an Evented PLEG would treat as a broken
// connection to retry; Unimplemented makes it fall back to the generic
// (polling) PLEG, the default in 1.36 anyway.
func (s *criServer) GetContainerEvents(*runtimeapi.GetEventsRequest, runtimeapi.RuntimeService_GetContainerEventsServer) error {
	return status.Error(codes.Unimplemented, "fake-cri does not stream container events")
}

// ---- ImageService ----
