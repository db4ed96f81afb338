package main

import (
	"context"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	apitest "k8s.io/cri-api/pkg/apis/testing"
	"k8s.io/klog/v2"
)

// The sandbox RPCs: each allocates or frees its pod IP and persists the
// state before it returns.

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

// sandboxNotFound is the error containerd returns for an unknown sandbox ID.
// The kubelet relies on the NotFound code (crierror.IsNotFound) to ignore
// sandboxes that vanished between List and Status; the upstream fake returns
// a plain error, which gRPC sends as Unknown and the kubelet treats as a
// failed pod status.
func sandboxNotFound(id string) error {
	return status.Errorf(codes.NotFound, "an error occurred when try to find sandbox %q: not found", id)
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

	return persisted(s, resp, "RunPodSandbox", "pod", klog.KRef(md.Namespace, md.Name), "attempt", md.Attempt, "podSandboxID", resp.PodSandboxId, "ip", ip)
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
	return persisted(s, resp, "StopPodSandbox", "podSandboxID", id, "killedContainers", stopped)
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
	return persisted(s, resp, "RemovePodSandbox", "podSandboxID", id, "removedContainers", removed)
}
