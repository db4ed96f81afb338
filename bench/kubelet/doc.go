// Package kubelet models what a node's kubelet sends to the API server when
// the kubelet, its container runtime or the whole node restarts. While a node
// restarts, stormbench *is* that node's kubelet: every request goes out under
// the node's identity (user system:node:<name>, group system:nodes) with the
// kubelet's client settings, so the Node authorizer, NodeRestriction and API
// Priority and Fairness treat it as kubelet traffic.
//
// The request pattern follows the kubelet in k8s.io/kubernetes v1.36.3,
// pkg/kubelet; REQUESTS.md lists it with its sources and what the oracle
// measured.
package kubelet
