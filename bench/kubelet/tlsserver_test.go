package kubelet

import (
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"k8s.io/client-go/rest"
)

// writeStatus answers a request with the API server's failure Status of
// code and reason (404 NotFound, 403 Forbidden).
func writeStatus(w http.ResponseWriter, code int, reason string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"%s","code":%d}`, reason, code)
}

// startTLS starts srv with TLS and HTTP/2, closes it when the test ends,
// and returns a rest.Config that trusts it, with token as its bearer token
// ("" for none).
func startTLS(t *testing.T, srv *httptest.Server, token string) *rest.Config {
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return &rest.Config{
		Host:            srv.URL,
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{CAData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})},
	}
}
