package measure

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"

	"k8s.io/client-go/rest"
)

// MetricsSource fetches one component's /metrics.
type MetricsSource struct {
	// Component names the component in results: kube-apiserver,
	// kube-controller-manager, etcd, kwok-controller ...
	Component string
	// Fetch returns the body of one /metrics scrape and the response's
	// Content-Type, which tells the parser the exposition format ("" lets
	// the body tell protobuf delimited from text).
	// Request it with the Accept header MetricsAccept: protobuf costs about a
	// seventh of the text format to parse, and a fifth of its size.
	// The body may live in a buffer the source reuses: it is valid until
	// the next Fetch, which must not run concurrently (each component's
	// scrape loop fetches and parses in turn).
	Fetch func(ctx context.Context) (body []byte, contentType string, err error)
}

// Component names used by the embedded cluster.
const (
	ComponentAPIServer         = "kube-apiserver"
	ComponentControllerManager = "kube-controller-manager"
	ComponentEtcd              = "etcd"
	ComponentKwok              = "kwok-controller"
)

// MetricsAccept is the Accept header for /metrics scrapes: the protobuf
// delimited exposition format, which every Kubernetes component, etcd and
// kwok serve through promhttp's content negotiation, with the text format
// (version 0.0.4) as fallback. It is what Prometheus itself sends.
const MetricsAccept = "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.7,text/plain;version=0.0.4;q=0.3"

// metricsAcceptText takes whatever the component serves: kwok 0.8's
// controller refuses both protobuf and an explicit text/plain with 406.
const metricsAcceptText = "*/*"

// APIServerSource scrapes kube-apiserver's /metrics through a REST client
// (client.CoreV1().RESTClient() or client.Discovery().RESTClient()), so it
// uses the harness' credentials and TLS. The harness identity needs the
// "get" verb on the /metrics non-resource URL (cluster-admin has it).
//
// Behind a load balancer every scrape may reach a different API server,
// which makes counters jump; scrape each server directly instead.
func APIServerSource(c rest.Interface) MetricsSource {
	return MetricsSource{
		Component: ComponentAPIServer,
		Fetch: func(ctx context.Context) ([]byte, string, error) {
			var contentType string
			b, err := c.Get().AbsPath("/metrics").SetHeader("Accept", MetricsAccept).Do(ctx).ContentType(&contentType).Raw()
			if err != nil {
				return nil, "", fmt.Errorf("fetching %s /metrics: %w", ComponentAPIServer, err)
			}
			return b, contentType, nil
		},
	}
}

// HTTPSource scrapes a component's /metrics over plain HTTP(S), for the
// embedded cluster's components on loopback. client carries any TLS
// settings; nil means http.DefaultClient.
//
// It asks for the protobuf exposition, which costs a fraction of the text
// format to parse. A component that refuses it (kwok's controller answers
// 406 Not Acceptable) is asked for text from then on.
func HTTPSource(component, url string, client *http.Client) MetricsSource {
	if client == nil {
		client = http.DefaultClient
	}
	var textOnly atomic.Bool
	// One body buffer for the source's scrapes, grown to the largest body:
	// io.ReadAll would allocate about twice each body anew, every second.
	var buf bytes.Buffer
	fetch := func(ctx context.Context, accept string) (code int, body []byte, contentType string, err error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return 0, nil, "", err
		}
		req.Header.Set("Accept", accept)
		resp, err := client.Do(req)
		if err != nil {
			return 0, nil, "", err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			_, _ = io.Copy(io.Discard, resp.Body)
			return resp.StatusCode, nil, "", fmt.Errorf("HTTP %s", resp.Status)
		}
		buf.Reset()
		_, err = buf.ReadFrom(resp.Body)
		return resp.StatusCode, buf.Bytes(), resp.Header.Get("Content-Type"), err
	}
	return MetricsSource{
		Component: component,
		Fetch: func(ctx context.Context) ([]byte, string, error) {
			if !textOnly.Load() {
				code, b, contentType, err := fetch(ctx, MetricsAccept)
				if code != http.StatusNotAcceptable {
					if err != nil {
						return nil, "", fmt.Errorf("fetching %s /metrics: %w", component, err)
					}
					return b, contentType, nil
				}
				textOnly.Store(true)
			}
			_, b, contentType, err := fetch(ctx, metricsAcceptText)
			if err != nil {
				return nil, "", fmt.Errorf("fetching %s /metrics: %w", component, err)
			}
			return b, contentType, nil
		},
	}
}
