package main

import (
	"context"

	"github.com/google/uuid"

	cadvisortest "k8s.io/kubernetes/pkg/kubelet/cadvisor/testing"
)

// Filesystem the fake cAdvisor reports for every path: 100Gi, 10% used.
// With cadvisortest.Fake's zero-capacity filesystems the image garbage
// collector posts an InvalidDiskCapacity warning event every 5 minutes
// (harmless under kubemark's fake recorder, not with the real one).
const (
	fakeFsCapacity  = 100 << 30
	fakeFsAvailable = 90 << 30
	fakeFsInodes    = 6553600
	fakeFsInodesUse = 65536
)

// fakeCadvisor is kubemark's cadvisortest.Fake with the machine shape and
// the boot ID of this hollow node. Its methods that return cAdvisor's types
// are in cadvisor_info.go (github.com/google/cadvisor/info, up to 1.36) and
// cadvisor_model.go (github.com/google/cadvisor/lib/model, from 1.37).
type fakeCadvisor struct {
	cadvisortest.Fake
	numCores   int
	memory     uint64
	bootID     string
	machineID  string
	systemUUID string
}

func newFakeCadvisor(nodeName string, numCores int, memory uint64, bootID string) *fakeCadvisor {
	id := stableID(nodeName)
	return &fakeCadvisor{
		Fake:       cadvisortest.Fake{NodeName: nodeName},
		numCores:   numCores,
		memory:     memory,
		bootID:     bootID,
		machineID:  id,
		systemUUID: uuid.NewSHA1(uuid.NameSpaceOID, []byte("hollow-kubelet/"+nodeName)).String(),
	}
}

// machine is the fake's MachineInfo: --cpu cores, --memory bytes,
// --boot-id, and a machine ID and system UUID derived from the node name
// (stable across restarts).
func (c *fakeCadvisor) machine(mi *machineInfo, err error) (*machineInfo, error) {
	if err != nil {
		return nil, err
	}
	mi.NumCores = c.numCores
	mi.NumPhysicalCores = c.numCores
	mi.NumSockets = 1
	mi.MemoryCapacity = c.memory
	mi.BootID = c.bootID
	mi.MachineID = c.machineID
	mi.SystemUUID = c.systemUUID
	return mi, nil
}

func fakeFsInfo(mountpoint string) fsInfo {
	inodes, free := uint64(fakeFsInodes), uint64(fakeFsInodes-fakeFsInodesUse)
	return fsInfo{
		Device:     "/dev/hollow",
		Mountpoint: mountpoint,
		Capacity:   fakeFsCapacity,
		Available:  fakeFsAvailable,
		Usage:      fakeFsCapacity - fakeFsAvailable,
		Inodes:     &inodes,
		InodesFree: &free,
	}
}

// ImagesFsInfo reports a 100Gi filesystem.
func (c *fakeCadvisor) ImagesFsInfo(context.Context) (fsInfo, error) {
	return fakeFsInfo("/"), nil
}

// RootFsInfo reports a 100Gi filesystem.
func (c *fakeCadvisor) RootFsInfo() (fsInfo, error) {
	return fakeFsInfo("/"), nil
}

// ContainerFsInfo reports a 100Gi filesystem.
func (c *fakeCadvisor) ContainerFsInfo(context.Context) (fsInfo, error) {
	return fakeFsInfo("/"), nil
}

// GetDirFsInfo reports a 100Gi filesystem for any path (the CRI stats
// provider asks it for the mountpoint of the runtime's image filesystem).
func (c *fakeCadvisor) GetDirFsInfo(path string) (fsInfo, error) {
	return fakeFsInfo(path), nil
}
