//go:build k8s_1_34 || k8s_1_35

package main

import (
	"context"

	"k8s.io/kubernetes/pkg/kubelet"
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
)

// The kubelet APIs of k8s.io/kubernetes v1.34 and v1.35; kubeapi.go has
// those from v1.36 on.

// applyMetricsFeatureGates does nothing: k8s.io/component-base/metrics/features
// has no ApplyFeatureGates before v0.36, and cmd/kubelet/app/server.go (run)
// of v1.34 and v1.35 has no such step.
func applyMetricsFeatureGates() {}

// preInitRuntimeService makes the CRI clients as run() does; before v1.36
// PreInitRuntimeService takes no context.
func preInitRuntimeService(_ context.Context, kc *kubeletconfig.KubeletConfiguration, d *kubelet.Dependencies) error {
	return kubelet.PreInitRuntimeService(kc, d)
}
