//go:build !k8s_1_37

package main

import (
	"context"

	cadvisorapi "github.com/google/cadvisor/info/v1"
	cadvisorapiv2 "github.com/google/cadvisor/info/v2"
)

// The cadvisor.Interface of k8s.io/kubernetes up to v1.36
// (pkg/kubelet/cadvisor/types.go), on github.com/google/cadvisor's info
// types.

// MachineInfo reports --cpu cores, --memory bytes, --boot-id, and a machine
// ID and system UUID derived from the node name (stable across restarts).
func (c *fakeCadvisor) MachineInfo() (*cadvisorapi.MachineInfo, error) {
	mi, err := c.Fake.MachineInfo()
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

func fakeFsInfo(mountpoint string) cadvisorapiv2.FsInfo {
	inodes, free := uint64(fakeFsInodes), uint64(fakeFsInodes-fakeFsInodesUse)
	return cadvisorapiv2.FsInfo{
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
func (c *fakeCadvisor) ImagesFsInfo(context.Context) (cadvisorapiv2.FsInfo, error) {
	return fakeFsInfo("/"), nil
}

// RootFsInfo reports a 100Gi filesystem.
func (c *fakeCadvisor) RootFsInfo() (cadvisorapiv2.FsInfo, error) {
	return fakeFsInfo("/"), nil
}

// ContainerFsInfo reports a 100Gi filesystem.
func (c *fakeCadvisor) ContainerFsInfo(context.Context) (cadvisorapiv2.FsInfo, error) {
	return fakeFsInfo("/"), nil
}

// GetDirFsInfo reports a 100Gi filesystem for any path (the CRI stats
// provider asks it for the mountpoint of the runtime's image filesystem).
func (c *fakeCadvisor) GetDirFsInfo(path string) (cadvisorapiv2.FsInfo, error) {
	return fakeFsInfo(path), nil
}
