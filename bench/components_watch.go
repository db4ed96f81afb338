package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/stormbench/stormbench/bench/cluster"
	"github.com/stormbench/stormbench/bench/measure"
)

// The control plane during a storm: its components watched, restarted after a crash-loop back-off, and the settle after provisioning.

// componentPIDs is the embedded cluster's process ids by component, for
// the host measurement; nil for an existing cluster.
func componentPIDs(o Options) func() map[string]int {
	if o.Embedded == nil {
		return nil
	}
	return o.Embedded.PIDs
}

// watchComponents watches the embedded cluster's component processes during
// the storm: a component that exits, and one that comes back, is logged and
// noted, so the result says what happened (the
// measurements mark the gap in their own series). The returned stop waits
// for the watcher and returns those notes, for the variant's errors.
func watchComponents(ctx context.Context, o Options) (stop func() []string) {
	if o.Embedded == nil {
		return func() []string { return nil }
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	var notes []string
	go func() {
		defer close(done)
		down := map[string]time.Time{}
		// A component that exits is started again after a back-off, as
		// the kubelet of a kubeadm control-plane node restarts its static
		// pods (CrashLoopBackOff: 10 s, doubling to 5 minutes).
		exits := map[string]int{}
		retryAt := map[string]time.Time{}
		last := o.Embedded.PIDs()
		for {
			select {
			case <-ctx.Done():
				return
			case <-o.Clock.After(time.Second):
			}
			now := o.Clock.Now()
			pids := o.Embedded.PIDs()
			for name, pid := range last {
				alive := cluster.ProcessAlive(pids[name])
				_, wasDown := down[name]
				switch {
				case !alive && !wasDown:
					down[name] = now
					exits[name]++
					retryAt[name] = now.Add(crashLoopBackOff(exits[name]))
					msg := fmt.Sprintf("%s (pid %d) exited during the storm at %s (starting it again in %s); log: %s", name, pid, now.Format(time.RFC3339), crashLoopBackOff(exits[name]), o.Embedded.LogPath(name))
					notes = append(notes, msg)
					o.Logf("%s", msg)
				case alive && wasDown:
					msg := fmt.Sprintf("%s came back (pid %d) after %s", name, pids[name], now.Sub(down[name]).Round(time.Second))
					delete(down, name)
					notes = append(notes, msg)
					o.Logf("%s", msg)
				}
			}
			for name := range down {
				if now.Before(retryAt[name]) || cluster.ProcessAlive(pids[name]) {
					continue
				}
				if err := o.Embedded.Start(ctx); err != nil && ctx.Err() == nil {
					o.Logf("starting %s again: %v", name, err)
				}
				// Checked at the next tick; if it did not come up, the
				// next step of the back-off.
				exits[name]++
				retryAt[name] = o.Clock.Now().Add(crashLoopBackOff(exits[name]))
			}
			for name, pid := range pids {
				last[name] = pid
			}
		}
	}()
	return func() []string {
		cancel()
		<-done
		return notes
	}
}

// crashLoopBackOff is the kubelet's restart back-off of a container that
// exited for the nth time: 10 s, doubling, at most 5 minutes
// (pkg/kubelet/kubelet.go backOffPeriod, MaxCrashLoopBackOff).
func crashLoopBackOff(n int) time.Duration {
	d := 10 * time.Second
	for i := 1; i < n && d < 5*time.Minute; i++ {
		d *= 2
	}
	return min(d, 5*time.Minute)
}

// provisionSettle is how the run waits for the API server's request rate to
// settle after provisioning: two 10 s windows that agree (measure.
// WaitSettled's tolerance), for at most one minute. Windows shorter than
// the 10 s node status period alias with it: on the quick fleet, 5 s
// windows read 2 to 10.5 requests/s for two minutes. The fleet is Ready
// while the controllers still write the last pods' EndpointSlices and
// workload statuses; a first baseline taken then is inflated (a quick run
// measured 103 requests/s in its legacy baseline against 10/s in the
// preserve variant's, and -253 excess requests per restart).
var provisionSettle = measure.SettleOptions{Interval: 2500 * time.Millisecond, Window: 10 * time.Second, Windows: 2, Timeout: time.Minute}

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
	st, err := measure.WaitSettled(ctx, src, o.Clock, provisionSettle)
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

// cpuBudget is the embedded control plane's CPU budget (controlPlane.cpus);
// 0 for an existing cluster.
func cpuBudget(o Options) float64 {
	if o.Embedded == nil {
		return 0
	}
	return o.Embedded.CPUBudget()
}
