package apiserver

import (
	"regexp"
	"testing"

	"github.com/stormbench/stormbench/bench/cluster"
)

// TestLeanDisabledMetricsReadNothing: the embedded API server's lean
// --disabled-metrics list holds no family stormbench reads, and only names
// the API server accepts.
func TestLeanDisabledMetricsReadNothing(t *testing.T) {
	read := map[string]string{}
	for name := range families {
		read[name] = "bench/measure families"
	}
	// Names read outside the parser: cluster status takes each
	// component's version from its build-info line (bench/cluster buildVersion).
	for _, name := range []string{"kubernetes_build_info", "etcd_server_version"} {
		read[name] = "bench/cluster buildVersion"
	}
	// k8s.io/component-base/metrics/api/v1 validateDisabledMetrics: a name
	// that does not match fails the API server's flag validation, and the
	// server does not start.
	valid := regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)
	seen := map[string]bool{}
	for _, name := range cluster.LeanDisabledMetrics() {
		if who, ok := read[name]; ok {
			t.Errorf("%s is disabled on the embedded API server, but %s reads it", name, who)
		}
		if !valid.MatchString(name) {
			t.Errorf("%q is not a fully qualified metric name: kube-apiserver would refuse --disabled-metrics", name)
		}
		if seen[name] {
			t.Errorf("%s listed twice", name)
		}
		seen[name] = true
	}
}
