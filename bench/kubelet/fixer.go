package kubelet

import (
	"context"
	"net/http"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	"github.com/stormbench/stormbench/bench/fleet"
)

// fixerPassTimeout bounds one fix; see StaleReadinessFixer.
const fixerPassTimeout = 10 * time.Second

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
		// One pass of the status manager: the caller's readiness loop calls
		// again for a pod still stale (syncBatch's next pass), so one call
		// must not hold that loop through minutes of 429s.
		ctx, cancel := context.WithTimeout(ctx, fixerPassTimeout)
		defer cancel()
		_, err := s.syncPodStatus(ctx, pod.Namespace, pod.Name, func(st *corev1.PodStatus, _ *corev1.PodSpec) bool {
			if st.Phase != corev1.PodRunning {
				return false
			}
			return setReadiness(st, func(string) bool { return true }, metav1.NewTime(s.clk.Now()))
		})
		return err
	}
}
