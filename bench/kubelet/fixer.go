package kubelet

import (
	"context"
	"net/http"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	"github.com/stormbench/stormbench/bench/fleet"
)

// StaleReadinessFixer returns a fleet.StaleReadinessFixer that acts as the
// pod's node's status manager: when the node-lifecycle controller marked a
// pod not ready while its node's heartbeats were late, and the node is back,
// a real kubelet writes Ready=True again (GET + PATCH pods/status under the
// node's identity), because its own status differs. KWOK does not
// (kubernetes-sigs/kwok#1464), so stormbench does it for KWOK's nodes.
func StaleReadinessFixer(base *rest.Config, wrap func(http.RoundTripper) http.RoundTripper) fleet.StaleReadinessFixer {
	var mu sync.Mutex
	sessions := map[string]*session{}
	return func(ctx context.Context, pod *corev1.Pod) error {
		mu.Lock()
		s := sessions[pod.Spec.NodeName]
		if s == nil {
			var err error
			if s, err = newSession(base, pod.Spec.NodeName, wrap, clock.RealClock{}); err != nil {
				mu.Unlock()
				return err
			}
			sessions[pod.Spec.NodeName] = s
		}
		mu.Unlock()
		_, err := s.syncPodStatus(ctx, pod.Namespace, pod.Name, func(st *corev1.PodStatus, _ *corev1.PodSpec) bool {
			if st.Phase != corev1.PodRunning {
				return false
			}
			return setReadiness(st, func(string) bool { return true }, metav1.NewTime(s.clk.Now()))
		})
		return err
	}
}
