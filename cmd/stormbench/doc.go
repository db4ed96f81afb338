// Command stormbench drives KWOK-simulated nodes through coordinated kubelet
// restarts, container-runtime restarts and node reboots against a real
// control plane, and measures API-server bursts, EndpointSlice churn and
// recovery latency.
package main
