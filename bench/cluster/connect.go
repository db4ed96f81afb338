package cluster

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/version"
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
	// RequestTimeout bounds every request of the Target's clients except
	// watches and other streams; default DefaultRequestTimeout, negative
	// for none.
	RequestTimeout time.Duration
}

// DefaultRequestTimeout bounds one API request that is not a watch or a
// stream. It is longer than the API server's own limit on a request
// (kube-apiserver --request-timeout, 1m by default), so a slow answer still
// comes back as the server's timeout error; a server that accepts a request
// and never answers fails the request instead of hanging the command.
const DefaultRequestTimeout = 70 * time.Second

// LoadKubeconfig loads the kubeconfig at path with the context (its current
// context if empty) and returns the client config and the context's name.
// Every failure is a ConfigError: a missing or malformed file, an unknown
// context, a context that does not make a client config.
func LoadKubeconfig(path, context string) (*rest.Config, string, error) {
	if path == "" {
		return nil, "", &ConfigError{errors.New("no kubeconfig given")}
	}
	if _, err := os.Stat(path); err != nil {
		return nil, "", &ConfigError{fmt.Errorf("kubeconfig %s: %w", path, err)}
	}
	rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: path}
	overrides := &clientcmd.ConfigOverrides{CurrentContext: context}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
	raw, err := cc.RawConfig()
	if err != nil {
		return nil, "", &ConfigError{fmt.Errorf("loading kubeconfig %s: %w", path, err)}
	}
	ctxName := cmp.Or(context, raw.CurrentContext)
	if _, ok := raw.Contexts[ctxName]; !ok {
		have := slices.Sorted(maps.Keys(raw.Contexts))
		if ctxName == "" {
			return nil, "", &ConfigError{fmt.Errorf("kubeconfig %s has no current context: give --context (have: %v)", path, have)}
		}
		return nil, "", &ConfigError{fmt.Errorf("context %q not found in kubeconfig %s (have: %v)", ctxName, path, have)}
	}
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, "", &ConfigError{fmt.Errorf("loading kubeconfig %s: %w", path, err)}
	}
	return cfg, ctxName, nil
}

// WithRequestTimeout makes every request of clients built from cfg that is
// not a watch, a followed log or an upgraded connection (exec, port-forward)
// end after d, unless its context ends first. The deadline covers reading
// the response body too. rest.Config.Timeout is not used for this because
// it also cuts watches short.
func WithRequestTimeout(cfg *rest.Config, d time.Duration) {
	if d <= 0 {
		return
	}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &deadlineTransport{next: rt, timeout: d} })
}

// deadlineTransport puts a deadline on every request that is not a stream.
type deadlineTransport struct {
	next    http.RoundTripper
	timeout time.Duration
}

func (t *deadlineTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if isStream(req) {
		return t.next.RoundTrip(req)
	}
	ctx, cancel := context.WithTimeout(req.Context(), t.timeout)
	resp, err := t.next.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel()
		if errors.Is(err, context.DeadlineExceeded) && req.Context().Err() == nil {
			return nil, fmt.Errorf("no answer within %s: %w", t.timeout, err)
		}
		return nil, err
	}
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// WrappedRoundTripper lets client-go find the transport underneath.
func (t *deadlineTransport) WrappedRoundTripper() http.RoundTripper { return t.next }

// isStream reports whether req is a watch, a followed log or a connection
// upgrade, which stay open as long as they are wanted.
func isStream(req *http.Request) bool {
	q := req.URL.Query()
	if w := q.Get("watch"); w == "true" || w == "1" {
		return true
	}
	if q.Get("follow") == "true" {
		return true
	}
	return req.Header.Get("Upgrade") != ""
}

// cancelOnClose ends a request's deadline context when its body is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}

// Connect loads a kubeconfig and checks within opts.Timeout that the API
// server answers, so an unreachable cluster fails fast with a clear error.
// Every later request of the Target's clients that is not a watch or a
// stream ends after opts.RequestTimeout (see WithRequestTimeout).
func Connect(ctx context.Context, opts ConnectOptions) (*Target, error) {
	cfg, ctxName, err := LoadKubeconfig(opts.Kubeconfig, opts.Context)
	if err != nil {
		return nil, err
	}
	cfg.QPS = opts.QPS
	cfg.Burst = opts.Burst
	cfg.UserAgent = "stormbench"
	// Protobuf, as the control plane's own clients and the kubelet speak
	// it (kube-controller-manager's --kube-api-content-type, the kubelet's
	// contentType): the harness's informers decode every pod, node and
	// lease update of the fleet, and a built-in type decodes several times
	// faster from protobuf than from JSON. JSON stays acceptable for what
	// has no protobuf (custom resources).
	cfg.ContentType = runtime.ContentTypeProtobuf
	cfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	timeout := cmp.Or(opts.Timeout, 10*time.Second)
	probe := rest.CopyConfig(cfg)
	probe.Timeout = timeout
	dc, err := kubernetes.NewForConfig(probe)
	if err != nil {
		return nil, fmt.Errorf("creating client: %w", err)
	}
	type answer struct {
		v   *version.Info
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		v, err := dc.Discovery().ServerVersion()
		ch <- answer{v, err}
	}()
	var v string
	select {
	case a := <-ch:
		if a.err != nil {
			return nil, fmt.Errorf("API server %s (context %q) is not reachable: %w", cfg.Host, ctxName, a.err)
		}
		v = a.v.GitVersion
	case <-time.After(timeout):
		return nil, fmt.Errorf("API server %s (context %q) did not answer within %s", cfg.Host, ctxName, timeout)
	case <-ctx.Done():
		return nil, fmt.Errorf("connecting to API server %s (context %q): %w", cfg.Host, ctxName, context.Cause(ctx))
	}
	WithRequestTimeout(cfg, cmp.Or(opts.RequestTimeout, DefaultRequestTimeout))
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating client: %w", err)
	}
	return &Target{Config: cfg, Client: client, Context: ctxName, Host: cfg.Host, ServerVersion: v}, nil
}
