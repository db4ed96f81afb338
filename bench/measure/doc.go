// Package measure holds stormbench's measurements: what a restart storm costs
// the control plane and the workloads. Every figure is defined in METRICS.md.
//
// # Lifecycle
//
// A measurement follows clusterloader2's start/gather model ([Measurement]):
//
//	set, err := measure.NewSet(profile.Measurements) // typed options, validated up front
//	set.Add(measure.NewSelfCost(...), measure.NewSimulator(...)) // the run's own
//	cl := set.ClientLatency()                          // install on the simulated kubelets:
//	kubeletConfig.Wrap(cl.Wrapper(measure.SourceKubelet))
//	err = set.Start(ctx, env)      // scrapers start, watches open and sync; then MarkBaselineStart
//	wait(set.BaselineWait())       // a full baseline window before the storm
//	set.MarkStormStart(clock.Now())
//	... storm, then the recovery wait ...
//	set.MarkStormEnd(ctx, clock.Now())
//	results := set.Gather(ctx)     // one result.Measurement per name
//	set.Dispose()
//
// Measurements are registered by name in [Constructors], a map built on each
// call: there is no init() registration and no package-level state. A
// measurement that fails to start or gather does not stop the others; its
// error is recorded in its result, next to whatever figures it still had.
//
// # Figures and merges
//
// Each measurement owns its figures: their names are constants in its
// *_figures.go file (apiserver_figures.go, ...), next to its
// [result.MergeRule], which gives each figure's [result.Aggregation] and any
// recomputation a sharded run's merge needs. [MergeRules], beside
// [Constructors], composes them for result.Merge. A new measurement
// therefore touches its own files here, one entry in Constructors and one in
// MergeRules (and METRICS.md, which defines every figure).
//
// # Measurements
//
//   - [APIServerMetrics] ("apiserver") scrapes the control plane's /metrics
//     ([MetricsSource]) every second and reports per-window deltas: request
//     counts by verb, resource, subresource and code, latency percentiles per
//     verb class, API Priority and Fairness, watchers, etcd latency, CPU and
//     RSS per component, and the burst figures derived from them.
//   - [ClientLatency] ("clientLatency") records every request the simulated
//     kubelets send in lock-free HdrHistograms per (verb, resource), through
//     an http.RoundTripper installed with rest.Config.Wrap.
//   - [EndpointSliceChurn] ("endpointSlices") watches the run's EndpointSlices
//     and counts writes, ready flips, not-ready endpoint-seconds and Service
//     outages ([SliceTracker]).
//   - [Recovery] ("recovery") watches nodes, pods and EndpointSlices and turns
//     the observed transitions into recovery-latency histograms against the
//     times the storm's restarts took their nodes down (the restarts'
//     outcomes, [RecoveryTracker]).
//   - [Simulator] and [SelfCost] (both "storm", gathered into one result)
//     are added by the run, not by the profile: the simulated kubelets'
//     counters and the restarts (storm.Restarts), and stormbench's own CPU
//     and RSS (sampled on the injected clock, with a heap profile at peaks).
//
// The trackers ([SliceTracker], [RecoveryTracker]) are pure: they take watch
// events and an injected clock, which is how they are tested (scripted event
// streams and k8s.io/utils/clock/testing). The Measurement types around them
// only wire informers to them.
//
// # Observation error
//
// Watch-based timestamps are the times stormbench received the events, on
// the clock in Env.Clock. They are late by the watch delivery delay, which is
// small on an idle API server and grows with its load during a storm, so
// recovery latencies and outage durations are slight overestimates; see
// [RecoveryTracker]. Scraped figures are quantized to the scrape interval:
// a window edge falls on the scrape nearest to it (see [APIServerMetrics]).
//
// # Cost
//
// The record path of [ClientLatency] takes about 50–80 ns and never
// allocates (BenchmarkClientLatencyRecord). One scrape of an API server the
// size of a 1,000-node cluster's (91,000 lines, 15 MB as text) costs about 30 ms
// as protobuf (2.5 MB), the format [MetricsAccept] asks for, and about 200 ms
// as text
// (BenchmarkAPIServerScrape, BenchmarkScrapeParseText).
package measure
