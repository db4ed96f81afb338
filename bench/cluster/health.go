package cluster

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/clock"

	"github.com/stormbench/stormbench/bench/poll"
)

// HealthCheck is one thing the control plane must serve before it is used:
// an endpoint of a component, or its leader lease.
type HealthCheck struct {
	// Component is the component checked (kube-apiserver, kube-scheduler ...).
	Component string
	// What is what is checked, for people: "/readyz", "leader lease" ...
	What string
	// Check returns nil when the component serves, else why not. It is
	// called with a context that ends after a few seconds.
	Check func(ctx context.Context) error
}

// String names the check: "kube-apiserver /readyz".
func (c HealthCheck) String() string { return c.Component + " " + c.What }

// WaitOptions say how long WaitHealthy waits and how it reports.
type WaitOptions struct {
	// Timeout bounds the wait; it must be positive.
	Timeout time.Duration
	// Interval is the time between two rounds of checks; default 500ms.
	Interval time.Duration
	// Clock is the clock the wait runs on; default the real clock.
	Clock clock.Clock
	// Progress, when set, is called with the checks not passed yet after
	// each round that leaves some, whenever that list changed.
	Progress func(waiting []HealthCheck)
}

// probeTimeout bounds one call of a HealthCheck.
const probeTimeout = 5 * time.Second

// UnhealthyError is a wait for the control plane that expired with checks
// not passed.
type UnhealthyError struct {
	// Timeout is how long the wait lasted.
	Timeout time.Duration
	// Failed are the checks that had not passed, and Errs the last error
	// of each (the same length as Failed).
	Failed []HealthCheck
	Errs   []error
}

func (e *UnhealthyError) Error() string {
	var parts []string
	for i, c := range e.Failed {
		parts = append(parts, fmt.Sprintf("%s (%v)", c, e.Errs[i]))
	}
	return fmt.Sprintf("not healthy after %s: %s", e.Timeout, strings.Join(parts, "; "))
}

// Components returns the names of the components that failed a check,
// each once, in the order of the checks.
func (e *UnhealthyError) Components() []string {
	var out []string
	for _, c := range e.Failed {
		if !slices.Contains(out, c.Component) {
			out = append(out, c.Component)
		}
	}
	return out
}

// WaitHealthy runs the checks until each has passed once, a round every
// o.Interval, and returns nil then. A check that passed is not run again.
// When o.Timeout has passed, or ctx ends, it returns an error naming every
// check that has not passed, with its last error (an *UnhealthyError on
// timeout).
func WaitHealthy(ctx context.Context, checks []HealthCheck, o WaitOptions) error {
	if o.Timeout <= 0 {
		return fmt.Errorf("waiting for the control plane: timeout %s is not positive", o.Timeout)
	}
	interval := o.Interval
	if interval <= 0 {
		interval = 500 * time.Millisecond
	}
	pending := checks
	var errs []error
	var reported string
	w := poll.Wait{Clock: o.Clock, Interval: interval, Timeout: o.Timeout}
	err := w.Until(ctx, func(ctx context.Context) (bool, string, error) {
		var failed []HealthCheck
		errs = nil
		for _, c := range pending {
			cctx, cancel := context.WithTimeout(ctx, probeTimeout)
			err := c.Check(cctx)
			cancel()
			if err != nil {
				failed, errs = append(failed, c), append(errs, err)
			}
		}
		pending = failed
		if len(pending) == 0 {
			return true, "", nil
		}
		if n := names(pending); n != reported && o.Progress != nil && ctx.Err() == nil {
			o.Progress(pending)
			reported = n
		}
		return false, "", nil
	})
	switch {
	case err == nil:
		return nil
	case errors.Is(err, poll.ErrTimeout):
		return &UnhealthyError{Timeout: o.Timeout, Failed: pending, Errs: errs}
	}
	return fmt.Errorf("waiting for %s: %w", names(pending), ctx.Err())
}

func names(checks []HealthCheck) string {
	s := make([]string, len(checks))
	for i, c := range checks {
		s[i] = c.String()
	}
	return strings.Join(s, ", ")
}

// HealthChecks are what the embedded cluster serves once it is ready to be
// used, each component's in turn: every component's process and /metrics,
// as Status checks them (so that `stormbench cluster status` passes once
// they do); kube-apiserver's /readyz; kube-controller-manager's and
// kube-scheduler's /healthz and a live leader lease; the KWOK controller's
// /healthz, which it serves with its /metrics. clk tells whether a lease
// is live.
func (e *Embedded) HealthChecks(clk clock.PassiveClock) ([]HealthCheck, error) {
	eps, err := e.MetricsEndpoints()
	if err != nil {
		return nil, err
	}
	rc, err := clientcmd.BuildConfigFromFlags("", e.Kubeconfig())
	if err != nil {
		return nil, fmt.Errorf("loading the cluster's kubeconfig: %w", err)
	}
	rc.Timeout = probeTimeout
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("loading the cluster's kubeconfig: %w", err)
	}
	var checks []HealthCheck
	for _, ep := range eps {
		checks = append(checks, HealthCheck{Component: ep.Component, What: "/metrics", Check: func(ctx context.Context) error {
			// As Status: a component without a pid file is not running.
			switch pid, ok := e.PIDs()[ep.Component]; {
			case !ok:
				return errors.New("no pid file yet")
			case !ProcessAlive(pid):
				return fmt.Errorf("process %d is not running", pid)
			}
			_, err := ep.Fetch(ctx)
			return err
		}})
		switch ep.Component {
		case "kube-apiserver":
			checks = append(checks, probe(ep, "/readyz"))
		case "kube-controller-manager", "kube-scheduler":
			checks = append(checks, probe(ep, "/healthz"), leaderCheck(client, ep.Component, clk))
		case "kwok-controller":
			checks = append(checks, probe(ep, "/healthz"))
		}
	}
	return checks, nil
}

// probe is a GET of path on the host of a component's metrics endpoint,
// with its credentials, which must answer 200.
func probe(ep MetricsEndpoint, path string) HealthCheck {
	return HealthCheck{Component: ep.Component, What: path, Check: func(ctx context.Context) error {
		_, err := ep.get(ctx, path, func(code int, body []byte) error {
			return fmt.Errorf("HTTP %d: %s", code, firstFailure(string(body[:min(len(body), 4096)])))
		})
		return err
	}}
}

// firstFailure is the first failed check a /readyz or /healthz body lists
// ("[-]poststarthook/... failed"), or the body's start.
func firstFailure(body string) string {
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, "[-]") {
			return strings.TrimSpace(line)
		}
	}
	body = strings.TrimSpace(body)
	if len(body) > 200 {
		body = body[:200] + "..."
	}
	return body
}

// leaderCheck passes when the component holds a live leader lease
// (kube-system/<component>, the default --leader-elect-resource-name of
// both kube-controller-manager and kube-scheduler): until then the
// controllers or the scheduler do not run.
func leaderCheck(client kubernetes.Interface, component string, clk clock.PassiveClock) HealthCheck {
	return HealthCheck{Component: component, What: "leader lease", Check: func(ctx context.Context) error {
		l, err := client.CoordinationV1().Leases(metav1.NamespaceSystem).Get(ctx, component, metav1.GetOptions{})
		if err != nil {
			return err
		}
		return leaseLive(l.Spec.HolderIdentity, l.Spec.RenewTime, l.Spec.LeaseDurationSeconds, clk.Now())
	}}
}

// leaseLive reports why a leader lease is not held at now: no holder, never
// renewed, or expired.
func leaseLive(holder *string, renew *metav1.MicroTime, durationSeconds *int32, now time.Time) error {
	switch {
	case holder == nil || *holder == "":
		return errors.New("no holder yet")
	case renew == nil:
		return fmt.Errorf("held by %s, never renewed", *holder)
	case durationSeconds != nil && renew.Add(time.Duration(*durationSeconds)*time.Second).Before(now):
		return fmt.Errorf("held by %s, expired (renewed %s)", *holder, renew.UTC().Format(time.RFC3339))
	}
	return nil
}

// WaitHealthy waits until the cluster serves (HealthChecks) for up to
// o.Timeout. When it does not, the error names each component not
// healthy and its log, and says how to look at the cluster, left running,
// and how to remove it.
func (e *Embedded) WaitHealthy(ctx context.Context, o WaitOptions) error {
	checks, err := e.HealthChecks(cmp.Or[clock.PassiveClock](o.Clock, clock.RealClock{}))
	if err != nil {
		return fmt.Errorf("embedded cluster %q: %w", e.opts.Name, err)
	}
	err = WaitHealthy(ctx, checks, o)
	if err == nil {
		return nil
	}
	var b strings.Builder
	var ue *UnhealthyError
	if errors.As(err, &ue) {
		for _, c := range ue.Components() {
			fmt.Fprintf(&b, "\n  %s log: %s", c, e.LogPath(c))
		}
	}
	return fmt.Errorf("embedded cluster %q: %w%s\n  it is left running: `%s` shows it; remove it with `%s`",
		e.opts.Name, err, b.String(), e.Command("status"), e.Command("down"))
}
