// Package churn is the "endpointSlices" measurement: it watches the run's
// EndpointSlices and counts writes, ready flips, not-ready endpoint-seconds
// and Service outages ([SliceTracker]), with the watch fan-out that each
// write costs a cluster of kube-proxies. The tracker is pure: it takes
// watch events and an injected clock, which is how it is tested.
package churn
