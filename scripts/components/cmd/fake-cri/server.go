package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/netip"
	"path/filepath"
	"strings"
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
		ref := img.GetSpec().GetImage()
		if ref == "" && len(img.RepoTags) > 0 {
			ref = img.RepoTags[0]
		}
		if ref == "" {
			ref = img.Id
		}
		rt.ImageService.Images[ref] = img
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

func isHostNetwork(st *runtimeapi.PodSandboxStatus) bool {
	return st.GetLinux().GetNamespaces().GetOptions().GetNetwork() == runtimeapi.NamespaceMode_NODE
}

// sandboxState returns a sandbox's state, read under the lock.
func (s *criServer) sandboxState(id string) (state runtimeapi.PodSandboxState, ok bool) {
	s.RuntimeService.Lock()
	defer s.RuntimeService.Unlock()
	sb, ok := s.RuntimeService.Sandboxes[id]
	if !ok {
		return 0, false
	}
	return sb.State, true
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

// sandboxNotFound is the error containerd returns for an unknown sandbox ID.
// The kubelet relies on the NotFound code (crierror.IsNotFound) to ignore
// sandboxes that vanished between List and Status; the upstream fake returns
// a plain error, which gRPC sends as Unknown and the kubelet treats as a
// failed pod status.
func sandboxNotFound(id string) error {
	return status.Errorf(codes.NotFound, "an error occurred when try to find sandbox %q: not found", id)
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

// RunPodSandbox allocates a pod IP from --pod-cidr (none for host-network
// pods, for which containerd reports an empty IP and the kubelet uses the
// node's), creates the sandbox in the upstream fake, and persists.
func (s *criServer) RunPodSandbox(ctx context.Context, req *runtimeapi.RunPodSandboxRequest) (*runtimeapi.RunPodSandboxResponse, error) {
	md := req.GetConfig().GetMetadata()
	if md == nil {
		return nil, status.Error(codes.InvalidArgument, "sandbox config metadata is required")
	}
	// The upstream fake derives the ID from the metadata; compute it first
	// so the IP can be reserved before the sandbox becomes visible.
	id := apitest.BuildSandboxName(md)
	if _, exists := s.sandboxState(id); exists {
		// containerd reserves sandbox names; the kubelet bumps Attempt for a
		// new sandbox, so this only happens on a genuine duplicate.
		return nil, status.Errorf(codes.AlreadyExists, "failed to reserve sandbox name %q: name is reserved", id)
	}

	hostNetwork := req.GetConfig().GetLinux().GetSecurityContext().GetNamespaceOptions().GetNetwork() == runtimeapi.NamespaceMode_NODE
	ip := ""
	if !hostNetwork {
		s.ipMu.Lock()
		addr, err := s.ipam.Allocate(id)
		s.ipMu.Unlock()
		if err != nil {
			klog.ErrorS(err, "RunPodSandbox failed", "pod", klog.KRef(md.Namespace, md.Name), "podSandboxID", id)
			return nil, status.Errorf(codes.Unknown, "failed to setup network for sandbox %q: %v", id, err)
		}
		ip = addr.String()
	}

	resp, err := s.RemoteRuntime.RunPodSandbox(ctx, req)
	if err != nil {
		s.ipMu.Lock()
		s.ipam.Release(id)
		s.ipMu.Unlock()
		klog.ErrorS(err, "RunPodSandbox failed", "pod", klog.KRef(md.Namespace, md.Name), "podSandboxID", id)
		return nil, err
	}

	s.RuntimeService.Lock()
	if sb, ok := s.RuntimeService.Sandboxes[resp.PodSandboxId]; ok {
		if sb.Network == nil {
			sb.Network = &runtimeapi.PodSandboxNetworkStatus{}
		}
		sb.Network.Ip = ip
		sb.Network.AdditionalIps = nil
	}
	s.RuntimeService.Unlock()

	if err := s.persistAfter("RunPodSandbox"); err != nil {
		return nil, err
	}
	klog.V(2).InfoS("RunPodSandbox", "pod", klog.KRef(md.Namespace, md.Name), "attempt", md.Attempt, "podSandboxID", resp.PodSandboxId, "ip", ip)
	return resp, nil
}

// PodSandboxStatus returns the upstream status with the allocated IP. The
// IP is patched from the allocator (the source of truth) so that a status
// read racing RunPodSandbox never shows the upstream placeholder address.
func (s *criServer) PodSandboxStatus(ctx context.Context, req *runtimeapi.PodSandboxStatusRequest) (*runtimeapi.PodSandboxStatusResponse, error) {
	resp, err := s.RemoteRuntime.PodSandboxStatus(ctx, req)
	if err != nil {
		if _, ok := s.sandboxState(req.PodSandboxId); !ok {
			return nil, sandboxNotFound(req.PodSandboxId)
		}
		return nil, err
	}
	if st := resp.GetStatus(); st != nil {
		if st.Network == nil {
			st.Network = &runtimeapi.PodSandboxNetworkStatus{}
		}
		if isHostNetwork(st) {
			st.Network.Ip = ""
		} else {
			s.ipMu.Lock()
			ip, ok := s.ipam.Lookup(st.Id)
			s.ipMu.Unlock()
			if ok {
				st.Network.Ip = ip.String()
			}
		}
		st.Network.AdditionalIps = nil
	}
	return resp, nil
}

// StopPodSandbox marks the sandbox NOTREADY (upstream) and, as containerd
// does, first force-stops every running container in it: the CRI contract
// says "If there are any running containers in the sandbox, they must be
// forcibly terminated". The IP stays allocated until RemovePodSandbox.
func (s *criServer) StopPodSandbox(ctx context.Context, req *runtimeapi.StopPodSandboxRequest) (*runtimeapi.StopPodSandboxResponse, error) {
	id := req.PodSandboxId
	if _, ok := s.sandboxState(id); !ok {
		// The kubelet tolerates NotFound here (kuberuntime_manager.go).
		return nil, sandboxNotFound(id)
	}
	now := time.Now().UnixNano()
	stopped := 0
	s.RuntimeService.Lock()
	for _, c := range s.RuntimeService.Containers {
		if c.SandboxID == id && c.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
			c.State = runtimeapi.ContainerState_CONTAINER_EXITED
			c.ExitCode = sigkillExitCode
			c.Reason = exitReasonError
			c.FinishedAt = now
			stopped++
		}
	}
	s.RuntimeService.Unlock()

	resp, err := s.RemoteRuntime.StopPodSandbox(ctx, req)
	if err != nil {
		if _, ok := s.sandboxState(id); !ok {
			err = sandboxNotFound(id)
		}
		klog.ErrorS(err, "StopPodSandbox failed", "podSandboxID", id)
		return nil, err
	}
	if err := s.persistAfter("StopPodSandbox"); err != nil {
		return nil, err
	}
	klog.V(2).InfoS("StopPodSandbox", "podSandboxID", id, "killedContainers", stopped)
	return resp, nil
}

// RemovePodSandbox removes the sandbox (upstream, idempotent) together with
// its containers, as containerd does, and frees its IP.
func (s *criServer) RemovePodSandbox(ctx context.Context, req *runtimeapi.RemovePodSandboxRequest) (*runtimeapi.RemovePodSandboxResponse, error) {
	id := req.PodSandboxId
	_, existed := s.sandboxState(id)
	resp, err := s.RemoteRuntime.RemovePodSandbox(ctx, req)
	if err != nil {
		klog.ErrorS(err, "RemovePodSandbox failed", "podSandboxID", id)
		return nil, err
	}
	removed := 0
	s.RuntimeService.Lock()
	for cid, c := range s.RuntimeService.Containers {
		if c.SandboxID == id {
			delete(s.RuntimeService.Containers, cid)
			removed++
		}
	}
	s.RuntimeService.Unlock()
	s.ipMu.Lock()
	_, hadIP := s.ipam.Lookup(id)
	s.ipam.Release(id)
	s.ipMu.Unlock()
	if !existed && removed == 0 && !hadIP {
		return resp, nil // idempotent no-op, nothing to write
	}
	if err := s.persistAfter("RemovePodSandbox"); err != nil {
		return nil, err
	}
	klog.V(2).InfoS("RemovePodSandbox", "podSandboxID", id, "removedContainers", removed)
	return resp, nil
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

	if err := s.persistAfter("CreateContainer"); err != nil {
		return nil, err
	}
	klog.V(2).InfoS("CreateContainer", "podSandboxID", sbID, "container", md.Name, "attempt", md.Attempt, "containerID", resp.ContainerId)
	return resp, nil
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
	if err := s.persistAfter("StartContainer"); err != nil {
		return nil, err
	}
	klog.V(2).InfoS("StartContainer", "containerID", id)
	return resp, nil
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
	if err := s.persistAfter("StopContainer"); err != nil {
		return nil, err
	}
	klog.V(2).InfoS("StopContainer", "containerID", id, "timeout", req.Timeout)
	return resp, nil
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
	if err := s.persistAfter("RemoveContainer"); err != nil {
		return nil, err
	}
	klog.V(2).InfoS("RemoveContainer", "containerID", id)
	return resp, nil
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
	if changed {
		if err := s.persistAfter("UpdateContainerResources"); err != nil {
			return nil, err
		}
		klog.V(2).InfoS("UpdateContainerResources", "containerID", id)
	}
	return resp, nil
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

// imageIDFor derives a stable, containerd-looking image ID from a reference.
func imageIDFor(ref string) string {
	sum := sha256.Sum256([]byte(ref))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// isImageID reports whether s has the form of an image ID rather than a
// reference.
func isImageID(s string) bool {
	return strings.HasPrefix(s, "sha256:") && len(s) == len("sha256:")+64
}

// repoDigestFor builds the "repo@digest" form containerd lists in
// RepoDigests, e.g. "nginx:1.25" -> "nginx@sha256:...".
func repoDigestFor(ref, id string) string {
	if strings.Contains(ref, "@") {
		return ref
	}
	repo := ref
	// A ':' after the last '/' is a tag; one before it is a registry port.
	if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
		repo = repo[:i]
	}
	return repo + "@" + id
}

// imageRepoTag is the name containerd reports in ContainerStatus.Image.
func imageRepoTag(img *runtimeapi.Image) string {
	if len(img.RepoTags) > 0 {
		return img.RepoTags[0]
	}
	return img.GetSpec().GetImage()
}

// findImageLocked looks up an image by reference or ID, as containerd
// resolves either. The caller holds the ImageService lock.
func (s *criServer) findImageLocked(refOrID string) *runtimeapi.Image {
	if img, ok := s.ImageService.Images[refOrID]; ok {
		return img
	}
	for _, img := range s.ImageService.Images {
		if img.Id == refOrID {
			return img
		}
	}
	return nil
}

// ensureImage returns the image for refOrID, creating its record if it is a
// reference not seen before: on this fake node every image is "already
// pulled", so pods with imagePullPolicy Never or IfNotPresent start without
// a pull. An unknown image ID is not invented unless force is set.
// It persists nothing; callers do, when created is true.
func (s *criServer) ensureImage(refOrID string, force bool) (img *runtimeapi.Image, created bool) {
	s.ImageService.Lock()
	defer s.ImageService.Unlock()
	if img := s.findImageLocked(refOrID); img != nil {
		return img, false
	}
	if isImageID(refOrID) && !force {
		return nil, false
	}
	id := imageIDFor(refOrID)
	img = &runtimeapi.Image{
		Id:          id,
		RepoTags:    []string{refOrID},
		RepoDigests: []string{repoDigestFor(refOrID, id)},
		Size:        fakeImageSize,
		Spec:        &runtimeapi.ImageSpec{Image: refOrID},
	}
	s.ImageService.Images[refOrID] = img
	return img, true
}

// ImageStatus reports any image reference as present (see ensureImage). The
// first lookup of a reference creates and persists its record, so that it
// also shows up in ListImages and node status.
func (s *criServer) ImageStatus(_ context.Context, req *runtimeapi.ImageStatusRequest) (*runtimeapi.ImageStatusResponse, error) {
	ref := req.GetImage().GetImage()
	if ref == "" {
		return nil, status.Error(codes.InvalidArgument, "image reference is required")
	}
	img, created := s.ensureImage(ref, false)
	if img == nil {
		return &runtimeapi.ImageStatusResponse{}, nil // unknown image ID: not present
	}
	if created {
		if err := s.persistAfter("ImageStatus"); err != nil {
			return nil, err
		}
		klog.V(2).InfoS("Image registered", "image", ref, "imageID", img.Id)
	}
	s.ImageService.Lock()
	out := proto.Clone(img).(*runtimeapi.Image)
	s.ImageService.Unlock()
	return &runtimeapi.ImageStatusResponse{Image: out}, nil
}

// PullImage always succeeds instantly and returns the image ID. It does not
// call the upstream PullImage, which would store an image whose ID is the
// reference and keep every request in an unbounded, unexported slice.
func (s *criServer) PullImage(_ context.Context, req *runtimeapi.PullImageRequest) (*runtimeapi.PullImageResponse, error) {
	ref := req.GetImage().GetImage()
	if ref == "" {
		return nil, status.Error(codes.InvalidArgument, "image reference is required")
	}
	img, created := s.ensureImage(ref, true)
	if created {
		if err := s.persistAfter("PullImage"); err != nil {
			return nil, err
		}
	}
	klog.V(2).InfoS("PullImage", "image", ref, "imageID", img.Id)
	return &runtimeapi.PullImageResponse{ImageRef: img.Id}, nil
}

// RemoveImage deletes an image by reference or ID (the kubelet's image GC
// passes the ID, which the upstream fake, keyed by reference, would miss).
// It is idempotent, as CRI requires.
func (s *criServer) RemoveImage(_ context.Context, req *runtimeapi.RemoveImageRequest) (*runtimeapi.RemoveImageResponse, error) {
	refOrID := req.GetImage().GetImage()
	removed := false
	s.ImageService.Lock()
	for key, img := range s.ImageService.Images {
		if key == refOrID || img.Id == refOrID {
			delete(s.ImageService.Images, key)
			removed = true
		}
	}
	s.ImageService.Unlock()
	if removed {
		if err := s.persistAfter("RemoveImage"); err != nil {
			return nil, err
		}
		klog.V(2).InfoS("RemoveImage", "image", refOrID)
	}
	return &runtimeapi.RemoveImageResponse{}, nil
}

// ImageFsInfo reports one image filesystem. The upstream fake returns none,
// which makes the kubelet's CRI stats provider fail every summary with
// "imageFs information is unavailable"; UsedBytes must be set because the
// kubelet dereferences it. The mountpoint is the state directory so that a
// real cadvisor can resolve it to a real filesystem.
func (s *criServer) ImageFsInfo(context.Context, *runtimeapi.ImageFsInfoRequest) (*runtimeapi.ImageFsInfoResponse, error) {
	s.ImageService.Lock()
	var used uint64
	for _, img := range s.ImageService.Images {
		used += img.Size
	}
	n := uint64(len(s.ImageService.Images))
	s.ImageService.Unlock()
	return &runtimeapi.ImageFsInfoResponse{
		ImageFilesystems: []*runtimeapi.FilesystemUsage{{
			Timestamp:  time.Now().UnixNano(),
			FsId:       &runtimeapi.FilesystemIdentifier{Mountpoint: s.fsMountpoint},
			UsedBytes:  &runtimeapi.UInt64Value{Value: used},
			InodesUsed: &runtimeapi.UInt64Value{Value: n},
		}},
	}, nil
}
