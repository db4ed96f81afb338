package cluster

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/transport"
	kwokv1alpha1 "sigs.k8s.io/kwok/pkg/apis/config/v1alpha1"
	"sigs.k8s.io/yaml"
)

// ComponentStatus is the health of one control-plane component.
type ComponentStatus struct {
	// Name is the component name (etcd, kube-apiserver, ...).
	Name string `json:"name"`
	// PID is its process id; 0 when unknown.
	PID int `json:"pid"`
	// Running reports whether the process is alive.
	Running bool `json:"running"`
	// Healthy reports whether its metrics endpoint answered.
	Healthy bool `json:"healthy"`
	// Version is what the component reports (from its build_info metric).
	Version string `json:"version,omitempty"`
	// MetricsURL is where its /metrics is served.
	MetricsURL string `json:"metricsURL,omitempty"`
	// Log is its log file.
	Log string `json:"log"`
	// Error says why it is not healthy.
	Error string `json:"error,omitempty"`
}

// MetricsEndpoint is a component's /metrics address and client credentials.
type MetricsEndpoint struct {
	// Component is the component name.
	Component string
	// URL is the full /metrics URL.
	URL string
	// Client is an HTTP client with the credentials the endpoint needs.
	Client *http.Client
}

// Fetch reads the endpoint's metrics text.
func (m MetricsEndpoint) Fetch(ctx context.Context) ([]byte, error) {
	return m.get(ctx, "", func(code int, _ []byte) error { return fmt.Errorf("%s /metrics: HTTP %d", m.Component, code) })
}

// get GETs path on the endpoint's host (the endpoint itself when path is
// empty) and returns the body of a 200; another answer is notOK's error.
func (m MetricsEndpoint) get(ctx context.Context, path string, notOK func(code int, body []byte) error) ([]byte, error) {
	u, err := url.Parse(m.URL)
	if err != nil {
		return nil, err
	}
	if path != "" {
		u.Path, u.RawQuery = path, ""
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	resp, err := m.Client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, notOK(resp.StatusCode, body)
	}
	return body, nil
}

// Configuration reads the resolved KwokctlConfiguration kwokctl saved for the
// cluster (component ports, metrics endpoints, credentials paths).
func (e *Embedded) Configuration() (*kwokv1alpha1.KwokctlConfiguration, error) {
	data, err := os.ReadFile(filepath.Join(e.Dir(), "kwok.yaml"))
	if err != nil {
		return nil, fmt.Errorf("reading cluster configuration: %w", err)
	}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading cluster configuration: %w", err)
		}
		if !bytes.Contains(doc, []byte("kind: KwokctlConfiguration")) {
			continue
		}
		var c kwokv1alpha1.KwokctlConfiguration
		if err := yaml.Unmarshal(doc, &c); err != nil {
			return nil, fmt.Errorf("decoding cluster configuration: %w", err)
		}
		return &c, nil
	}
	return nil, fmt.Errorf("cluster configuration %s holds no KwokctlConfiguration", filepath.Join(e.Dir(), "kwok.yaml"))
}

// MetricsEndpoints returns every component's /metrics endpoint, from the
// cluster configuration. kwokctl records a component's metrics address with
// its in-cluster host name; on the binary runtime it listens on 127.0.0.1.
func (e *Embedded) MetricsEndpoints() ([]MetricsEndpoint, error) {
	conf, err := e.Configuration()
	if err != nil {
		return nil, err
	}
	var out []MetricsEndpoint
	for _, c := range conf.Components {
		if c.Metric == nil {
			continue
		}
		m := c.Metric
		tlsConf := &tls.Config{InsecureSkipVerify: m.InsecureSkipVerify} //nolint:gosec // loopback, kwokctl's self-signed certificates
		if m.CertPath != "" && m.KeyPath != "" {
			cert, err := tls.LoadX509KeyPair(m.CertPath, m.KeyPath)
			if err != nil {
				return nil, fmt.Errorf("loading %s metrics credentials: %w", c.Name, err)
			}
			tlsConf.Certificates = []tls.Certificate{cert}
		}
		// The scrape loop keeps several scrapes of a component in flight
		// (apiserver.DefaultMaxScrapesInFlight); with the default two idle
		// connections per host, every scrape beyond two would dial, and a
		// TLS handshake to a loaded API server, anew. No compression: on
		// loopback, gzipping each body (promhttp does when asked) only
		// spends the component's CPU, and the API server's is what the
		// storm runs short of.
		var rt http.RoundTripper = &http.Transport{TLSClientConfig: tlsConf, DisableCompression: true, MaxIdleConnsPerHost: 8}
		if c.Name == "kube-apiserver" {
			// Under realistic APF the API server is scraped as the harness,
			// whose /metrics requests stormbench-observer sends to the exempt level,
			// not with kwokctl's admin certificate (system:masters).
			if token, err := e.harnessToken(); err != nil {
				return nil, err
			} else if token != "" {
				tlsConf.Certificates = nil
				rt = transport.NewBearerAuthRoundTripper(token, rt)
			}
		}
		out = append(out, MetricsEndpoint{
			Component: c.Name,
			URL:       m.Scheme + "://" + m.Host + m.Path,
			Client:    &http.Client{Timeout: 10 * time.Second, Transport: rt},
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Component < out[j].Component })
	return out, nil
}

// Status reports every component's process, health and version.
func (e *Embedded) Status(ctx context.Context) ([]ComponentStatus, error) {
	if !e.Exists() {
		have := "none"
		if names := ExistingClusters(e.opts.WorkDir); len(names) > 0 {
			have = strings.Join(names, ", ")
		}
		return nil, &ConfigError{fmt.Errorf("embedded cluster %q does not exist in %s (existing: %s; start one with `stormbench cluster up`)", e.opts.Name, e.opts.WorkDir, have)}
	}
	eps, err := e.MetricsEndpoints()
	if err != nil {
		return nil, err
	}
	pids := e.PIDs()
	var out []ComponentStatus
	for _, ep := range eps {
		st := ComponentStatus{Name: ep.Component, PID: pids[ep.Component], MetricsURL: ep.URL, Log: e.LogPath(ep.Component)}
		st.Running = ProcessAlive(st.PID)
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		body, err := ep.Fetch(cctx)
		cancel()
		if err != nil {
			st.Error = err.Error()
		} else {
			st.Healthy = true
			st.Version = buildVersion(body)
		}
		out = append(out, st)
	}
	return out, nil
}

// buildVersion finds the version in a component's build-info metric
// (kubernetes_build_info{git_version=...}, etcd_server_version{server_version=...}).
func buildVersion(metrics []byte) string {
	for line := range strings.Lines(string(metrics)) {
		for _, key := range []string{"git_version=\"", "server_version=\""} {
			_, rest, found := strings.Cut(line, key)
			if v, _, closed := strings.Cut(rest, `"`); found && closed && !strings.HasPrefix(line, "#") {
				return v
			}
		}
	}
	return ""
}

// ExistingClusters lists the embedded clusters in workDir, by name.
func ExistingClusters(workDir string) []string {
	dirs, _ := filepath.Glob(filepath.Join(workDir, "clusters", "*", "kwok.yaml"))
	var out []string
	for _, d := range dirs {
		out = append(out, filepath.Base(filepath.Dir(d)))
	}
	sort.Strings(out)
	return out
}

// versionedComponents are the components whose binaries are the cluster's
// Kubernetes version's (Components.Path); etcd and kwok are shared.
var versionedComponents = []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler"}

// CheckVersions checks that kube-apiserver, kube-controller-manager and
// kube-scheduler report the cluster's Kubernetes version in their build
// info: binaries of another version in the version's directory would make
// a run of one version measure another. A component that does not answer
// is not judged (Status and WaitHealthy say so).
func (e *Embedded) CheckVersions(ctx context.Context) error {
	st, err := e.Status(ctx)
	if err != nil {
		return err
	}
	return checkVersions(st, e.KubeVersion().String(), e.KubeVersion().MakeTarget())
}

// checkVersions is CheckVersions on a status.
func checkVersions(st []ComponentStatus, want, makeTarget string) error {
	var wrong []string
	for _, c := range st {
		if slices.Contains(versionedComponents, c.Name) && c.Healthy && c.Version != want {
			wrong = append(wrong, fmt.Sprintf("%s reports %q", c.Name, c.Version))
		}
	}
	if len(wrong) > 0 {
		return fmt.Errorf("%s, not the %s asked for: its binaries are of another version (rebuild them with `%s`)", strings.Join(wrong, ", "), want, makeTarget)
	}
	return nil
}
