package realnode

import "testing"

// TestAPILimitsConfig: the kubelet on containerd gets kubeAPIQPS and
// kubeAPIBurst only when they are set, so a default run's configuration
// carries the kubelet's own defaults.
func TestAPILimitsConfig(t *testing.T) {
	for _, tc := range []struct {
		qps, burst int
		want       string
	}{
		{0, 0, ""},
		{2, 0, "kubeAPIQPS: 2\n"},
		{0, 4, "kubeAPIBurst: 4\n"},
		{2, 4, "kubeAPIQPS: 2\nkubeAPIBurst: 4\n"},
	} {
		if got := apiLimitsConfig(tc.qps, tc.burst); got != tc.want {
			t.Errorf("apiLimitsConfig(%d, %d) = %q, want %q", tc.qps, tc.burst, got, tc.want)
		}
	}
}
