//go:build !k8s_1_37

package main

import (
	cadvisorapi "github.com/google/cadvisor/info/v1"
	cadvisorapiv2 "github.com/google/cadvisor/info/v2"
)

// The cadvisor.Interface of k8s.io/kubernetes up to v1.36
// (pkg/kubelet/cadvisor/types.go), on github.com/google/cadvisor's info
// types; the fake's bodies are in cadvisor.go.
type (
	machineInfo = cadvisorapi.MachineInfo
	fsInfo      = cadvisorapiv2.FsInfo
)

// MachineInfo reports the node's machine (machine).
func (c *fakeCadvisor) MachineInfo() (*machineInfo, error) {
	return c.machine(c.Fake.MachineInfo())
}
