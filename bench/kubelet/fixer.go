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
	// One session per node while fixes of its pods are in flight, closed
	// with the last of them: a node's pods are usually fixed together, and
	// an idle connection per node ever fixed would hold one per node of the
	// fleet after a fleet-wide episode.
	type nodeSession struct {
		s    *session
		refs int
	}
	var mu sync.Mutex
	sessions := map[string]*nodeSession{}
	acquire := func(node string) (*session, error) {
		mu.Lock()
		defer mu.Unlock()
		ns := sessions[node]
		if ns == nil {
			s, err := newSession(base, node, wrap, clock.RealClock{}, sessionOptions{})
			if err != nil {
				return nil, err
			}
			ns = &nodeSession{s: s}
			sessions[node] = ns
		}
		ns.refs++
		return ns.s, nil
	}
	release := func(node string) {
		mu.Lock()
		defer mu.Unlock()
		ns := sessions[node]
		if ns.refs--; ns.refs == 0 {
			ns.s.close()
			delete(sessions, node)
		}
	}
	return func(ctx context.Context, pod *corev1.Pod) error {
		s, err := acquire(pod.Spec.NodeName)
		if err != nil {
			return err
		}
		defer release(pod.Spec.NodeName)
		// One pass of the status manager: the caller's readiness loop calls
		// again for a pod still stale (syncBatch's next pass), so one call
		// must not hold that loop through minutes of 429s.
		ctx, cancel := context.WithTimeout(ctx, fixerPassTimeout)
		defer cancel()
		_, err = s.syncPodStatus(ctx, pod.Namespace, pod.Name, func(st *corev1.PodStatus) bool {
			if st.Phase != corev1.PodRunning {
				return false
			}
			return setReadiness(st, func(string) bool { return true }, metav1.NewTime(s.clk.Now()))
		})
		return err
	}
}
