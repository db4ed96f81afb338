package cluster

import (
	"strings"
	"testing"
)

// TestCheckVersions: the control plane's components must report the
// version asked for; etcd and kwok are shared, and a component that does
// not answer is left to the health checks.
func TestCheckVersions(t *testing.T) {
	st := func(apiserver, kcm string) []ComponentStatus {
		return []ComponentStatus{
			{Name: "etcd", Healthy: true, Version: "3.6.8"},
			{Name: "kube-apiserver", Healthy: true, Version: apiserver},
			{Name: "kube-controller-manager", Healthy: kcm != "", Version: kcm},
			{Name: "kube-scheduler", Healthy: true, Version: "v1.37.2"},
			{Name: "kwok-controller", Healthy: true, Version: "v0.8.0"},
		}
	}
	if err := checkVersions(st("v1.37.2", "v1.37.2"), "v1.37.2", "make components KUBE_VERSION=v1.37.2"); err != nil {
		t.Errorf("matching versions: %v", err)
	}
	if err := checkVersions(st("v1.37.2", ""), "v1.37.2", "make components KUBE_VERSION=v1.37.2"); err != nil {
		t.Errorf("a component not answering: %v", err)
	}
	err := checkVersions(st("v1.36.3", "v0.0.0-master"), "v1.37.2", "make components KUBE_VERSION=v1.37.2")
	for _, want := range []string{`kube-apiserver reports "v1.36.3", kube-controller-manager reports "v0.0.0-master", not the v1.37.2 asked for`, "`make components KUBE_VERSION=v1.37.2`"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("wrong versions: %v; want %q", err, want)
		}
	}
}
