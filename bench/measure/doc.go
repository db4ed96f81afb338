// Package measure is the contract between a run and its measurements: what
// a storm costs the control plane and the workloads. Every figure is
// defined in METRICS.md.
//
// # Lifecycle
//
// A measurement follows clusterloader2's start/gather model ([Measurement]):
//
//	set, err := measure.NewSetFrom(registry.Constructors(), profile.Measurements) // validated up front
//	set.Add(self.NewSelfCost(...), self.NewSimulator(...)) // the run's own
//	cl := measure.Get[*clientlatency.Recorder](set)   // install on the simulated kubelets:
//	kubeletConfig.Wrap(cl.Wrapper(clientlatency.SourceKubelet))
//	err = set.Start(ctx, env)      // scrapers start, watches open and sync; then MarkBaselineStart
//	wait(set.BaselineWait())       // a full baseline window before the storm
//	set.MarkStormStart(clock.Now())
//	... storm, then the recovery wait ...
//	set.MarkStormEnd(ctx, clock.Now())
//	results := set.Gather(ctx)     // one result.Measurement per name
//	set.Dispose()
//
// A measurement that fails to start or gather does not stop the others; its
// error is recorded in its result, next to whatever figures it still had.
// [Env] is what a measurement gets from the run, [MetricsSource] one
// component's /metrics.
//
// # Measurements
//
// Each measurement is a package of its own, which owns its figures (their
// names are constants in its figures.go) and its [result.MergeRule]
// (each figure's [result.Aggregation] and any recomputation a sharded run's
// merge needs):
//
//   - apiserver ("apiserver") scrapes the control plane's /metrics every
//     second and reports per-window deltas: requests by verb, resource,
//     subresource and code, latency per verb class, API Priority and
//     Fairness, watchers, etcd latency, CPU and RSS per component, and the
//     burst figures derived from them.
//   - clientlatency ("clientLatency") records every request the simulated
//     kubelets send, in lock-free HdrHistograms per (verb, resource).
//   - churn ("endpointSlices") counts EndpointSlice writes, ready flips,
//     not-ready endpoint-seconds and Service outages.
//   - recovery ("recovery") turns node, pod and EndpointSlice transitions
//     into recovery-latency histograms against the storm's restarts.
//   - host ("host") samples the machine's CPU: a figure taken on a
//     saturated machine must say so.
//   - self ("storm", added by the run, not by the profile) is what
//     stormbench itself did and cost: the simulated kubelets' counters and
//     the restarts, and its own CPU and RSS.
//
// Package registry names them for a profile (Constructors) and for a
// sharded run's merge (MergeRules): a new measurement touches its own
// package, one entry in each, and METRICS.md.
//
// # Observation error
//
// Watch-based timestamps are the times stormbench received the events, on
// the clock in Env.Clock. They are late by the watch delivery delay, which is
// small on an idle API server and grows with its load during a storm, so
// recovery latencies and outage durations are slight overestimates.
// Scraped figures are quantized to the scrape interval: a window edge falls
// on the scrape nearest to it.
package measure
