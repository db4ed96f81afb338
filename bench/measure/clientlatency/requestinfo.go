package clientlatency

import (
	"net/http"
	"net/url"
	"strings"
)

// RequestInfo is what a Kubernetes API request is, as the API server's
// metrics label it.
type RequestInfo struct {
	// Verb uses the vocabulary of apiserver_request_total: GET, LIST, WATCH,
	// POST, PUT, PATCH, APPLY, DELETE, DELETECOLLECTION, CONNECT; for a
	// non-resource request it is the HTTP method.
	Verb string
	// Resource is the plural resource ("pods"); empty for a non-resource
	// request.
	Resource string
	// Subresource is the subresource ("status"), if any.
	Subresource string
	// Namespace and Name are the request's namespace and object name.
	Namespace, Name string
}

// ParseRequest classifies an API request from its method and URL, the way
// the API server's RequestInfoFactory and metrics.CleanVerb do
// (k8s.io/apiserver/pkg/endpoints/request/requestinfo.go, .../metrics):
//
//	GET    /api/v1/pods?watch=true                    WATCH pods
//	GET    /api/v1/nodes?fieldSelector=metadata.name=n LIST nodes
//	GET    /api/v1/namespaces/x/configmaps/y           GET configmaps
//	PATCH  /api/v1/namespaces/x/pods/y/status          PATCH pods/status
//	POST   /api/v1/namespaces/x/serviceaccounts/y/token POST serviceaccounts/token
//	DELETE /api/v1/namespaces/x/pods                   DELETECOLLECTION pods
func ParseRequest(req *http.Request) RequestInfo {
	info := RequestInfo{Verb: req.Method}
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	if len(parts) < 3 || (parts[0] != "api" && parts[0] != "apis") {
		return info
	}
	if parts[0] == "apis" {
		// /apis/{group}/{version}/...
		if len(parts) < 4 {
			return info
		}
		parts = parts[3:]
	} else {
		// /api/{version}/...
		parts = parts[2:]
	}
	watchPath := false
	if parts[0] == "watch" {
		// The deprecated /watch/ path prefix.
		watchPath = true
		parts = parts[1:]
		if len(parts) == 0 {
			return info
		}
	}
	if parts[0] == "namespaces" && len(parts) > 1 {
		info.Namespace = parts[1]
		// namespaces/{ns}/status and /finalize are namespace subresources.
		if len(parts) > 2 && parts[2] != "status" && parts[2] != "finalize" {
			parts = parts[2:]
		}
	}
	info.Resource = parts[0]
	if len(parts) > 1 {
		info.Name = parts[1]
	}
	if len(parts) > 2 {
		info.Subresource = parts[2]
	}
	switch req.Method {
	case http.MethodGet, http.MethodHead:
		switch {
		case watchPath || isWatch(req.URL):
			info.Verb = "WATCH"
		case info.Name == "":
			info.Verb = "LIST"
		default:
			info.Verb = "GET"
		}
	case http.MethodPatch:
		if req.Header.Get("Content-Type") == "application/apply-patch+yaml" {
			info.Verb = "APPLY"
		}
	case http.MethodDelete:
		if info.Name == "" {
			info.Verb = "DELETECOLLECTION"
		}
	}
	switch info.Subresource {
	case "exec", "attach", "portforward", "proxy":
		info.Verb = "CONNECT"
	}
	return info
}

// isWatch reports whether the query asks for a watch, as the API server's
// getVerbIfWatch does: any value of watch other than "0" and "false".
func isWatch(u *url.URL) bool {
	if !strings.Contains(u.RawQuery, "watch") {
		return false
	}
	vs := u.Query()["watch"]
	if len(vs) == 0 {
		return false
	}
	v := strings.ToLower(vs[0])
	return v != "0" && v != "false"
}
