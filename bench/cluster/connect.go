package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Target is a connected cluster.
type Target struct {
	// Config is the admin rest.Config (harness identity).
	Config *rest.Config
	// Client is a clientset on Config.
	Client kubernetes.Interface
	// Context is the kubeconfig context in use.
	Context string
	// Host is the API server URL.
	Host string
	// ServerVersion is what the API server reports.
	ServerVersion string
}

// ConfigError is a kubeconfig that cannot be used: missing, malformed, or
// without the context asked for. It is bad input, not a failed run.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// IsConfigError reports whether err is, or wraps, a ConfigError.
func IsConfigError(err error) bool {
	var ce *ConfigError
	return errors.As(err, &ce)
}

// ConnectOptions says how to reach a cluster.
type ConnectOptions struct {
	// Kubeconfig is the kubeconfig path; required.
	Kubeconfig string
	// Context overrides the kubeconfig's current context.
	Context string
	// QPS and Burst set the harness client's rate limits.
	QPS   float32
	Burst int
	// Timeout bounds the reachability check; default 10s.
	Timeout time.Duration
}

// Connect loads a kubeconfig and checks within opts.Timeout that the API
// server answers, so an unreachable cluster fails fast with a clear error.
func Connect(ctx context.Context, opts ConnectOptions) (*Target, error) {
	if opts.Kubeconfig == "" {
		return nil, &ConfigError{errors.New("no kubeconfig given")}
	}
	if _, err := os.Stat(opts.Kubeconfig); err != nil {
		return nil, &ConfigError{fmt.Errorf("kubeconfig %s: %w", opts.Kubeconfig, err)}
	}
	rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: opts.Kubeconfig}
	overrides := &clientcmd.ConfigOverrides{CurrentContext: opts.Context}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
	raw, err := cc.RawConfig()
	if err != nil {
		return nil, &ConfigError{fmt.Errorf("loading kubeconfig %s: %w", opts.Kubeconfig, err)}
	}
	ctxName := opts.Context
	if ctxName == "" {
		ctxName = raw.CurrentContext
	}
	if _, ok := raw.Contexts[ctxName]; !ok {
		var have []string
		for k := range raw.Contexts {
			have = append(have, k)
		}
		return nil, &ConfigError{fmt.Errorf("context %q not found in kubeconfig %s (have: %v)", ctxName, opts.Kubeconfig, have)}
	}
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, &ConfigError{fmt.Errorf("loading kubeconfig %s: %w", opts.Kubeconfig, err)}
	}
	cfg.QPS = opts.QPS
	cfg.Burst = opts.Burst
	cfg.UserAgent = "stormbench"
	timeout := opts.Timeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	probe := rest.CopyConfig(cfg)
	probe.Timeout = timeout
	dc, err := kubernetes.NewForConfig(probe)
	if err != nil {
		return nil, fmt.Errorf("creating client: %w", err)
	}
	type answer struct {
		v   string
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		v, err := dc.Discovery().ServerVersion()
		if err != nil {
			ch <- answer{err: err}
			return
		}
		ch <- answer{v: v.GitVersion}
	}()
	var v string
	select {
	case a := <-ch:
		if a.err != nil {
			return nil, fmt.Errorf("API server %s (context %q) is not reachable: %w", cfg.Host, ctxName, a.err)
		}
		v = a.v
	case <-time.After(timeout):
		return nil, fmt.Errorf("API server %s (context %q) did not answer within %s", cfg.Host, ctxName, timeout)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating client: %w", err)
	}
	return &Target{Config: cfg, Client: client, Context: ctxName, Host: cfg.Host, ServerVersion: v}, nil
}
