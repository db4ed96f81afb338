//go:build tools

// Package components records the main packages `make components` builds, so
// that `go mod tidy` keeps their dependencies in go.sum.
package components

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/cri-client/pkg/fake"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/pkg/kubemark"
	_ "sigs.k8s.io/kwok/cmd/kwok"
	_ "sigs.k8s.io/kwok/cmd/kwokctl"
)
