package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	apitest "k8s.io/cri-api/pkg/apis/testing"
)

// sampleSandbox and sampleContainer fill the fields the kubelet reads,
// including nested messages, maps and enums, so a lossy encoding shows.
func sampleSandbox(id string, state runtimeapi.PodSandboxState) *apitest.FakePodSandbox {
	return &apitest.FakePodSandbox{
		PodSandboxStatus: runtimeapi.PodSandboxStatus{
			Id:        id,
			Metadata:  &runtimeapi.PodSandboxMetadata{Name: "web-0", Namespace: "default", Uid: "uid-1", Attempt: 2},
			State:     state,
			CreatedAt: 1_700_000_000_123_456_789,
			Network:   &runtimeapi.PodSandboxNetworkStatus{Ip: "10.200.3.2"},
			Linux: &runtimeapi.LinuxPodSandboxStatus{Namespaces: &runtimeapi.Namespace{
				Options: &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_POD, Pid: runtimeapi.NamespaceMode_CONTAINER},
			}},
			Labels:         map[string]string{"io.kubernetes.pod.name": "web-0"},
			Annotations:    map[string]string{"kubernetes.io/config.seen": "2024-01-01T00:00:00Z"},
			RuntimeHandler: "runc",
		},
		RuntimeHandler: "runc",
	}
}

func sampleContainer(id, sandboxID string, state runtimeapi.ContainerState) *apitest.FakeContainer {
	return &apitest.FakeContainer{
		ContainerStatus: runtimeapi.ContainerStatus{
			Id:         id,
			Metadata:   &runtimeapi.ContainerMetadata{Name: "app", Attempt: 3},
			State:      state,
			CreatedAt:  1_700_000_001_000_000_000,
			StartedAt:  1_700_000_002_000_000_000,
			FinishedAt: 0,
			Image:      &runtimeapi.ImageSpec{Image: "nginx:1.25", UserSpecifiedImage: "nginx:1.25"},
			ImageRef:   imageIDFor("nginx:1.25"),
			ImageId:    imageIDFor("nginx:1.25"),
			Labels:     map[string]string{"io.kubernetes.container.name": "app"},
			Annotations: map[string]string{
				"io.kubernetes.container.hash":         "abcd1234",
				"io.kubernetes.container.restartCount": "3",
			},
			Resources: &runtimeapi.ContainerResources{Linux: &runtimeapi.LinuxContainerResources{CpuShares: 102, MemoryLimitInBytes: 64 << 20}},
		},
		LinuxResources: &runtimeapi.LinuxContainerResources{CpuShares: 102, MemoryLimitInBytes: 64 << 20},
		SandboxID:      sandboxID,
	}
}

func TestStateRoundTrip(t *testing.T) {
	sb := sampleSandbox("web-0_default_uid-1_2", runtimeapi.PodSandboxState_SANDBOX_READY)
	hostNet := sampleSandbox("host_default_uid-2_0", runtimeapi.PodSandboxState_SANDBOX_NOTREADY)
	hostNet.RuntimeHandler = ""
	hostNet.Network.Ip = ""
	hostNet.Linux.Namespaces.Options.Network = runtimeapi.NamespaceMode_NODE
	c := sampleContainer(sb.Id+"_app_3", sb.Id, runtimeapi.ContainerState_CONTAINER_RUNNING)
	exited := sampleContainer(sb.Id+"_app_2", sb.Id, runtimeapi.ContainerState_CONTAINER_EXITED)
	exited.ExitCode, exited.Reason, exited.FinishedAt = 1, "Error", 1_700_000_003_000_000_000
	exited.LinuxResources = nil // optional field must survive as nil
	img := &runtimeapi.Image{Id: imageIDFor("nginx:1.25"), RepoTags: []string{"nginx:1.25"}, Size: fakeImageSize, Spec: &runtimeapi.ImageSpec{Image: "nginx:1.25"}}
	ips := map[string]string{sb.Id: "10.200.3.2"}

	data, err := encodeState(
		map[string]*apitest.FakePodSandbox{sb.Id: sb, hostNet.Id: hostNet},
		map[string]*apitest.FakeContainer{c.Id: c, exited.Id: exited},
		map[string]*runtimeapi.Image{"nginx:1.25": img},
		ips)
	if err != nil {
		t.Fatal(err)
	}
	// Write and read through the file functions, as the binary does.
	path := filepath.Join(t.TempDir(), "state.json")
	if err := writeFileAtomic(path, data); err != nil {
		t.Fatal(err)
	}
	got, err := loadStateFile(path)
	if err != nil {
		t.Fatalf("loadStateFile: %v\n%s", err, data)
	}

	if len(got.Sandboxes) != 2 || len(got.Containers) != 2 || len(got.Images) != 1 {
		t.Fatalf("loaded %d sandboxes, %d containers, %d images; want 2, 2, 1", len(got.Sandboxes), len(got.Containers), len(got.Images))
	}
	byID := map[string]*apitest.FakePodSandbox{}
	for _, s := range got.Sandboxes {
		byID[s.Id] = s
	}
	for _, want := range []*apitest.FakePodSandbox{sb, hostNet} {
		g := byID[want.Id]
		if g == nil {
			t.Fatalf("sandbox %q missing after load", want.Id)
		}
		if !proto.Equal(&g.PodSandboxStatus, &want.PodSandboxStatus) {
			t.Errorf("sandbox %q status changed:\n got %v\nwant %v", want.Id, &g.PodSandboxStatus, &want.PodSandboxStatus)
		}
		if g.RuntimeHandler != want.RuntimeHandler {
			t.Errorf("sandbox %q RuntimeHandler = %q, want %q", want.Id, g.RuntimeHandler, want.RuntimeHandler)
		}
	}
	cByID := map[string]*apitest.FakeContainer{}
	for _, x := range got.Containers {
		cByID[x.Id] = x
	}
	for _, want := range []*apitest.FakeContainer{c, exited} {
		g := cByID[want.Id]
		if g == nil {
			t.Fatalf("container %q missing after load", want.Id)
		}
		if !proto.Equal(&g.ContainerStatus, &want.ContainerStatus) {
			t.Errorf("container %q status changed:\n got %v\nwant %v", want.Id, &g.ContainerStatus, &want.ContainerStatus)
		}
		if g.SandboxID != want.SandboxID {
			t.Errorf("container %q SandboxID = %q, want %q", want.Id, g.SandboxID, want.SandboxID)
		}
		if (g.LinuxResources == nil) != (want.LinuxResources == nil) || !proto.Equal(g.LinuxResources, want.LinuxResources) {
			t.Errorf("container %q LinuxResources = %v, want %v", want.Id, g.LinuxResources, want.LinuxResources)
		}
	}
	if !proto.Equal(got.Images[0], img) {
		t.Errorf("image = %v, want %v", got.Images[0], img)
	}
	if len(got.IPAllocations) != 1 || got.IPAllocations[sb.Id] != "10.200.3.2" {
		t.Errorf("IPAllocations = %v, want %v", got.IPAllocations, ips)
	}

	// Enums are written by name, which keeps the file readable and stable
	// if the numbering ever changed. (Zero values such as SANDBOX_READY are
	// omitted by proto3 JSON and still round-trip, as checked above.)
	if !strings.Contains(string(data), `"CONTAINER_RUNNING"`) || !strings.Contains(string(data), `"SANDBOX_NOTREADY"`) {
		t.Errorf("state file does not spell enums by name:\n%s", data)
	}
	// No temp files left behind by the atomic write.
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("state dir has %d entries, want only state.json", len(entries))
	}
}

func TestLoadStateFile(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name    string
		content *string // nil: file absent
		wantErr string
	}{
		{name: "missing file is an empty node", content: nil},
		{name: "corrupt JSON is an error", content: ptr("{not json"), wantErr: "parse state file"},
		{name: "future version is an error", content: ptr(`{"version": 99}`), wantErr: "unsupported state version"},
		{name: "sandbox without id is an error", content: ptr(`{"version":1,"sandboxes":[{"status":{}}]}`), wantErr: "has no id"},
		{name: "unknown proto fields are ignored", content: ptr(`{"version":1,"sandboxes":[{"status":{"id":"x","fromTheFuture":1}}]}`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".json")
			if tc.content != nil {
				if err := os.WriteFile(path, []byte(*tc.content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			st, err := loadStateFile(path)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if st.IPAllocations == nil {
				t.Fatal("IPAllocations is nil")
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestApplyReboot(t *testing.T) {
	const now = int64(1_800_000_000_000_000_000)
	const earlier = int64(1_700_000_003_000_000_000)
	for _, tc := range []struct {
		name      string
		state     runtimeapi.ContainerState
		exitCode  int32
		reason    string
		finished  int64
		wantState runtimeapi.ContainerState
		wantCode  int32
		wantWhy   string
		wantAt    int64
		changed   bool
	}{
		{"running becomes exited 255 Unknown", runtimeapi.ContainerState_CONTAINER_RUNNING, 0, "", 0,
			runtimeapi.ContainerState_CONTAINER_EXITED, unknownExitCode, unknownExitReason, now, true},
		{"created stays created, as containerd leaves it", runtimeapi.ContainerState_CONTAINER_CREATED, 0, "", 0,
			runtimeapi.ContainerState_CONTAINER_CREATED, 0, "", 0, false},
		{"exited keeps its own exit status", runtimeapi.ContainerState_CONTAINER_EXITED, 1, "Error", earlier,
			runtimeapi.ContainerState_CONTAINER_EXITED, 1, "Error", earlier, false},
		{"unknown state is left alone", runtimeapi.ContainerState_CONTAINER_UNKNOWN, 0, "", 0,
			runtimeapi.ContainerState_CONTAINER_UNKNOWN, 0, "", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := sampleContainer("c", "s", tc.state)
			c.ExitCode, c.Reason, c.FinishedAt = tc.exitCode, tc.reason, tc.finished
			startedAt := c.StartedAt
			st := &runtimeState{Containers: []*apitest.FakeContainer{c}}
			nc, ns := applyReboot(st, now)
			if c.State != tc.wantState || c.ExitCode != tc.wantCode || c.Reason != tc.wantWhy || c.FinishedAt != tc.wantAt {
				t.Fatalf("after reboot: state=%v exit=%d reason=%q finished=%d; want %v %d %q %d",
					c.State, c.ExitCode, c.Reason, c.FinishedAt, tc.wantState, tc.wantCode, tc.wantWhy, tc.wantAt)
			}
			if c.StartedAt != startedAt {
				t.Errorf("StartedAt changed from %d to %d", startedAt, c.StartedAt)
			}
			if want := map[bool]int{true: 1, false: 0}[tc.changed]; nc != want || ns != 0 {
				t.Errorf("applyReboot counted %d containers, %d sandboxes; want %d, 0", nc, ns, want)
			}
		})
	}

	t.Run("every sandbox becomes NOTREADY, records and IPs kept", func(t *testing.T) {
		ready := sampleSandbox("a", runtimeapi.PodSandboxState_SANDBOX_READY)
		notReady := sampleSandbox("b", runtimeapi.PodSandboxState_SANDBOX_NOTREADY)
		st := &runtimeState{Sandboxes: []*apitest.FakePodSandbox{ready, notReady}, IPAllocations: map[string]string{"a": "10.200.3.2"}}
		_, ns := applyReboot(st, now)
		if ns != 1 {
			t.Errorf("changed %d sandboxes, want 1", ns)
		}
		for _, s := range st.Sandboxes {
			if s.State != runtimeapi.PodSandboxState_SANDBOX_NOTREADY {
				t.Errorf("sandbox %s state = %v, want NOTREADY", s.Id, s.State)
			}
		}
		if len(st.Sandboxes) != 2 || st.IPAllocations["a"] != "10.200.3.2" || ready.Network.Ip != "10.200.3.2" {
			t.Errorf("reboot dropped records or IPs: %d sandboxes, allocations %v", len(st.Sandboxes), st.IPAllocations)
		}
	})
}
