// Package recovery is the "recovery" measurement: it watches nodes, pods,
// leases and EndpointSlices and turns the observed transitions into
// recovery-latency histograms against the times the storm's restarts took
// their nodes down ([Tracker]), and the lease renewals of nodes that were
// not restarted ([LeaseTracker]). The trackers are pure: they take watch
// events and an injected clock, which is how they are tested.
//
// Timestamps are when stormbench received the events, so recovery
// latencies are late by the watch delivery delay.
package recovery
