//go:build !k8s_1_34 && !k8s_1_35

package main

import (
	"context"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	metricsfeatures "k8s.io/component-base/metrics/features"
	"k8s.io/kubernetes/pkg/kubelet"
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
)

// The kubelet APIs of k8s.io/kubernetes from v1.36 on; kubeapi_pre136.go
// has v1.34's and v1.35's.

// applyMetricsFeatureGates is what cmd/kubelet/app/server.go (run) does once
// the gates are set: propagate them to the metrics subsystem before any
// histogram is registered.
func applyMetricsFeatureGates() {
	metricsfeatures.ApplyFeatureGates(utilfeature.DefaultFeatureGate)
}

// preInitRuntimeService makes the CRI clients as run() does.
func preInitRuntimeService(ctx context.Context, kc *kubeletconfig.KubeletConfiguration, d *kubelet.Dependencies) error {
	return kubelet.PreInitRuntimeService(ctx, kc, d)
}
