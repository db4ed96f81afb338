//go:build k8s_1_37

package main

import (
	cadvisorapi "github.com/google/cadvisor/lib/model"
	"k8s.io/klog/v2"
)

// The cadvisor.Interface of k8s.io/kubernetes v1.37
// (pkg/kubelet/cadvisor/types.go): github.com/google/cadvisor/lib's model
// types, and MachineInfo takes a logger; the fake's bodies are in
// cadvisor.go.
type (
	machineInfo = cadvisorapi.MachineInfo
	fsInfo      = cadvisorapi.FsInfo
)

// MachineInfo reports the node's machine (machine).
func (c *fakeCadvisor) MachineInfo(logger klog.Logger) (*machineInfo, error) {
	return c.machine(c.Fake.MachineInfo(logger))
}
