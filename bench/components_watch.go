package bench

import (
	"context"
	"time"

	"github.com/stormbench/stormbench/bench/measure"
	"github.com/stormbench/stormbench/bench/measure/apiserver"
)

// The control plane as a run reads it: its /metrics, and the settle after provisioning.

// provisionSettle is how the run waits for the API server's request rate to
// settle after provisioning: two 10 s windows that agree (measure.
// WaitSettled's tolerance), for at most one minute. Windows shorter than
// the 10 s node status period alias with it: on the quick fleet, 5 s
// windows read 2 to 10.5 requests/s for two minutes. The fleet is Ready
// while the controllers still write the last pods' EndpointSlices and
// workload statuses; a first baseline taken then is inflated (a quick run
// measured 103 requests/s in its legacy baseline against 10/s in the
// preserve variant's, and -253 excess requests per restart).
var provisionSettle = apiserver.SettleOptions{Interval: 2500 * time.Millisecond, Window: 10 * time.Second, Windows: 2, Timeout: time.Minute}

// settleAfterProvisioning waits until the API server's request rate is
// steady, so the first variant's baseline is not the provisioning's tail.
// A timeout is logged, not an error. Shards skip it: their baselines are
// aligned to the shared start time.
func settleAfterProvisioning(ctx context.Context, o Options) error {
	if !o.StartAt.IsZero() {
		return nil
	}
	src, ok := apiserverSource(o)
	if !ok {
		return nil
	}
	st, err := apiserver.WaitSettled(ctx, src, o.Clock, provisionSettle)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		o.Logf("After provisioning: %v (going on)", err)
		return nil
	}
	o.Logf("After provisioning: %s", st)
	return nil
}

// apiserverSource is kube-apiserver's /metrics among metricsSources(o).
func apiserverSource(o Options) (measure.MetricsSource, bool) {
	var src measure.MetricsSource
	for _, s := range metricsSources(o) {
		if s.Component == measure.ComponentAPIServer {
			src = s
		}
	}
	return src, src.Fetch != nil
}

func metricsSources(o Options) []measure.MetricsSource {
	var out []measure.MetricsSource
	if o.Embedded != nil {
		if eps, err := o.Embedded.MetricsEndpoints(); err == nil {
			for _, ep := range eps {
				out = append(out, measure.HTTPSource(ep.Component, ep.URL, ep.Client))
			}
			return out
		}
	}
	return append(out, measure.APIServerSource(o.Target.Client.CoreV1().RESTClient()))
}
