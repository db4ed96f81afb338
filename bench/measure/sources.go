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
	// Fetch writes the body of one /metrics scrape into body, which the
	// caller owns, has reset and reuses for its next scrapes, and returns the
	// response's Content-Type, which tells the parser the exposition format
	// ("" lets the body tell protobuf delimited from text).
	// Request it with the Accept header MetricsAccept: protobuf costs about a
	// seventh of the text format to parse, and a fifth of its size.
	// Fetch runs concurrently with itself: a scrape loop starts each scrape
	// at its slot whether or not the previous ones have returned, each into
	// a body buffer of its own (see scraper).
	Fetch func(ctx context.Context, body *bytes.Buffer) (contentType string, err error)
}

// Component names used by the embedded cluster.
const (
	ComponentAPIServer         = "kube-apiserver"
	ComponentControllerManager = "kube-controller-manager"
	ComponentEtcd              = "etcd"
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
		Fetch: func(ctx context.Context, body *bytes.Buffer) (string, error) {
			var contentType string
			b, err := c.Get().AbsPath("/metrics").SetHeader("Accept", MetricsAccept).Do(ctx).ContentType(&contentType).Raw()
			if err != nil {
				return "", fmt.Errorf("fetching %s /metrics: %w", ComponentAPIServer, err)
			}
			body.Write(b)
			return contentType, nil
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
	// The body goes into the caller's buffer, grown to the largest body:
	// io.ReadAll would allocate about twice each body anew, every second.
	fetch := func(ctx context.Context, accept string, body *bytes.Buffer) (code int, contentType string, err error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return 0, "", err
		}
		req.Header.Set("Accept", accept)
		resp, err := client.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			_, _ = io.Copy(io.Discard, resp.Body)
			return resp.StatusCode, "", fmt.Errorf("HTTP %s", resp.Status)
		}
		body.Reset()
		_, err = body.ReadFrom(resp.Body)
		return resp.StatusCode, resp.Header.Get("Content-Type"), err
	}
	return MetricsSource{
		Component: component,
		Fetch: func(ctx context.Context, body *bytes.Buffer) (string, error) {
			accept := MetricsAccept
			if textOnly.Load() {
				accept = metricsAcceptText
			}
			code, contentType, err := fetch(ctx, accept, body)
			if code == http.StatusNotAcceptable && accept == MetricsAccept {
				textOnly.Store(true)
				_, contentType, err = fetch(ctx, metricsAcceptText, body)
			}
			if err != nil {
				return "", fmt.Errorf("fetching %s /metrics: %w", component, err)
			}
			return contentType, nil
		},
	}
}
