package clientlatency

// ExpectedRequest is what a starting kubelet sends for one resource, from
// bench/kubelet/REQUESTS.md (Kubernetes 1.36, pkg/kubelet: kubelet.go
// NewMainKubelet and Run, config/apiserver.go,
// util/manager/watch_based_manager.go, kubelet_node_status.go,
// token/token_manager.go), in the vocabulary of the clientLatency
// measurement's labels (ParseRequest). client-go 1.36 informers use the
// streaming watch-list (KEP-3157, WatchListClient), so an informer's initial
// LIST is a WATCH with sendInitialEvents=true and counts as one WATCH here.
type ExpectedRequest struct {
	// Resource is the plural resource, as the API server's metrics label
	// it ("pods").
	Resource string
	// Subresource is the subresource ("status"); empty for none.
	Subresource string
	// Verbs are the verbs, in the vocabulary of apiserver_request_total,
	// whose counts add up to the expectation.
	Verbs []string
	// Expected is the count per kubelet start, for people.
	Expected string
	// Min and Max bound the count per start when the reference gives one;
	// Max < 0 means the count depends on the workload and is not checked.
	Min, Max float64
}

// KubeletStartRequests returns the requests a real kubelet sends per
// start, in the order a report lists them: informers, registration,
// heartbeats, pod status, then the rest. It is what the simulated kubelets
// replay on a restart and what the report holds their requests
// (SourceKubelet) to; bench/kubelet's tests hold it to REQUESTS.md.
func KubeletStartRequests() []ExpectedRequest {
	return []ExpectedRequest{
		{"nodes", "", []string{"WATCH"}, "1 (informer on its own Node)", 1, 1},
		{"pods", "", []string{"WATCH"}, "1 (informer on spec.nodeName)", 1, 1},
		{"services", "", []string{"WATCH"}, "1 (informer, for container env vars)", 1, 1},
		{"csidrivers", "", []string{"WATCH"}, "1 (volume plugin manager)", 1, 1},
		{"runtimeclasses", "", []string{"WATCH"}, "1 (runtimeclass manager)", 1, 1},
		{"secrets", "", []string{"WATCH"}, "1 per distinct mutable Secret the node's pods use", 0, -1},
		{"configmaps", "", []string{"WATCH"}, "1 per distinct mutable ConfigMap the node's pods use", 0, -1},
		{"nodes", "", []string{"POST"}, "1 (register; 409, already registered)", 1, 1},
		{"nodes", "", []string{"GET"}, "1–3 (after the 409; the CSI plugin's node-info start; volume reconstruction when pods with volumes ran; measured 2–3)", 1, 3},
		{"nodes", "", []string{"PATCH"}, "0–1 (reconcile after the 409)", 0, 1},
		{"nodes", "status", []string{"PATCH"}, "a few during start-up, then on change", 1, -1},
		{"leases", "", []string{"GET", "POST"}, "1 GET (POST if missing)", 1, 2},
		{"leases", "", []string{"PUT"}, "renewal every 10 s while up", 0, -1},
		{"pods", "", []string{"GET"}, "GET before a status PATCH when the status cache is cold", 0, -1},
		{"pods", "status", []string{"PATCH"}, "1 per pod status change (legacy gate: ≥ 2 per probed pod)", 0, -1},
		{"serviceaccounts", "token", []string{"POST"}, "1 per pod with a projected service-account token", 0, -1},
		{"events", "", []string{"POST"}, "4–6 (Starting, NodeAllocatableEnforced, NodeHas* ...; measured 4 hollow, 6 containerd)", 4, 6},
		{"events", "", []string{"PATCH"}, "0–3 (a NodeHas* event recorded twice within a start; timing-dependent)", 0, -1},
		{"csinodes", "", []string{"GET", "POST", "PUT"}, "1–2 (CSINode initialisation)", 1, 2},
		{"resourceslices", "", []string{"DELETECOLLECTION"}, "1 (DRA: the node's ResourceSlices wiped at start)", 1, 1},
		{"podcertificaterequests", "", []string{"WATCH"}, "0–1 (with its feature gate)", 0, 1},
		{"clustertrustbundles", "", []string{"WATCH"}, "0–1 (with its feature gate)", 0, 1},
	}
}
