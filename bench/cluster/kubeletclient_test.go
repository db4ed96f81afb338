package cluster

import (
	"testing"

	"k8s.io/client-go/rest"
)

func TestKubeletClientConfig(t *testing.T) {
	base := &rest.Config{Host: "https://127.0.0.1:6443", QPS: 500, Burst: 1000}
	cfg := KubeletClientConfig(base, "n1", nil)
	if cfg.Impersonate.UserName != "system:node:n1" {
		t.Errorf("user %q", cfg.Impersonate.UserName)
	}
	if len(cfg.Impersonate.Groups) == 0 || cfg.Impersonate.Groups[0] != "system:nodes" {
		t.Errorf("groups %v", cfg.Impersonate.Groups)
	}
	// pkg/kubelet/apis/config/v1beta1/defaults.go
	if cfg.QPS != 50 || cfg.Burst != 100 || cfg.ContentType != "application/vnd.kubernetes.protobuf" {
		t.Errorf("qps %v burst %v content type %q", cfg.QPS, cfg.Burst, cfg.ContentType)
	}
	if base.Impersonate.UserName != "" || base.QPS != 500 {
		t.Error("KubeletClientConfig modified its base config")
	}
}
