// Package clientlatency is the "clientLatency" measurement: every request
// the simulated kubelets send, recorded in lock-free HdrHistograms per
// (verb, resource) by an http.RoundTripper installed with
// rest.Config.Wrap ([Recorder.Wrapper]). It also holds [ParseRequest], how
// stormbench names a request by verb and resource, and the requests a
// starting kubelet is expected to send ([KubeletStartRequests]).
//
// The record path takes about 50–80 ns and never allocates
// (BenchmarkClientLatencyRecord).
package clientlatency
