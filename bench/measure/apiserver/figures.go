package apiserver

import (
	"slices"

	"github.com/stormbench/stormbench/bench/measure"
	"github.com/stormbench/stormbench/bench/result"
)

// Name is the /metrics scraper of the control plane.
const Name = "apiserver"

// Verb classes of server-side latency (apiserver_request_duration_seconds),
// as in the Kubernetes API call latency SLO; WATCH and CONNECT are excluded
// because their duration is the life of a stream.
const (
	ClassMutating = "mutating"
	ClassGet      = "get"
	ClassList     = "list"
)

// RequestKindMutating is the value of result.LabelRequestKind on
// InflightMax and SeriesInflight for mutating requests, as kube-apiserver
// labels apiserver_current_inflight_requests (the other is "readOnly").
const RequestKindMutating = "mutating"

// Figures of Name. See METRICS.md for definitions.
const (
	// Requests: apiserver_request_total delta; unlabelled = all, or
	// labelled by verb/resource/subresource, or by code alone.
	Requests = "requests"
	// RequestRateMean: mean requests/s over the window's intervals.
	RequestRateMean = "requests_per_second_mean"
	// RequestRateStdDev: standard deviation of per-interval requests/s.
	RequestRateStdDev = "requests_per_second_stddev"
	// RequestRatePeak: highest per-interval requests/s.
	RequestRatePeak = "requests_per_second_peak"
	// BurstThreshold: max(baseline mean + 3σ, 2 × baseline mean) of
	// the per-interval rate of the requests the storm is charged with
	// (all requests less the simulation's flows).
	BurstThreshold = "burst_threshold"
	// BurstSeconds: storm-window seconds whose rate of the requests
	// the storm is charged with is above the burst threshold.
	BurstSeconds = "burst_seconds"
	// ExcessRequests: the excess the storm caused: storm requests less
	// baseline rate × storm length (RawExcessRequests), less the same
	// of the simulation's own flows (KWOK's and the harness's,
	// cluster.IsSimulationFlow).
	ExcessRequests = "excess_requests"
	// ExcessPerRestart: ExcessRequests per restarted node; labelled
	// flow, each flow's excess per restart (the simulation's included).
	ExcessPerRestart = "excess_requests_per_restart"
	// RawExcessRequests: storm requests minus baseline rate × storm
	// length, whoever sent them.
	RawExcessRequests = "raw_excess_requests"
	// RawExcessPerRestart: RawExcessRequests per restarted node
	// (also by verb/resource/subresource, where positive).
	RawExcessPerRestart = "raw_excess_requests_per_restart"
	// FlowRequests: APF-dispatched requests by flow (cluster.FlowOf of
	// the flow schema), in each window: the storm's counts and the
	// control's (baseline's) beside them.
	FlowRequests = "flow_requests"
	// Throttled: responses with code 429.
	Throttled = "throttled_requests"
	// FlowDispatched: apiserver_flowcontrol_dispatched_requests_total delta.
	FlowDispatched = "apf_dispatched_requests"
	// FlowRejected: apiserver_flowcontrol_rejected_requests_total delta.
	FlowRejected = "apf_rejected_requests"
	// FlowWait: histogram of apiserver_flowcontrol_request_wait_duration_seconds
	// deltas by priority level and flow schema (executed and rejected
	// requests together), for flows that queued at all.
	FlowWait = "apf_wait_seconds"
	// FlowInqueueMax: peak apiserver_flowcontrol_current_inqueue_requests.
	FlowInqueueMax = "apf_inqueue_requests_max"
	// InflightMax: peak apiserver_current_inflight_requests.
	InflightMax = "inflight_requests_max"
	// WatchersMax: peak registered watchers.
	WatchersMax = "watchers_max"
	// WatchEvents: apiserver_watch_events_total delta.
	WatchEvents = "watch_events"
	// CPUSeconds: process_cpu_seconds_total delta per component.
	CPUSeconds = "cpu_seconds"
	// RSSMax: peak process_resident_memory_bytes per component.
	RSSMax = "rss_bytes_max"
	// SliceControllerChanges: endpoint_slice_controller_changes delta.
	SliceControllerChanges = "endpointslice_controller_changes"
	// Scrapes and ScrapeFailures count scrapes per component.
	Scrapes        = "scrapes"
	ScrapeFailures = "scrape_failures"
	// ScrapesScheduled counts the scrape slots of the interval cadence,
	// per component, including the skipped ones: scrapes - scrape_failures
	// over it is the scrape coverage.
	ScrapesScheduled = "scrapes_scheduled"
	// ScrapesSkipped counts the slots that started no scrape, per
	// component: they found Options.MaxInFlight scrapes still
	// running (or the loop woke up after them).
	ScrapesSkipped = "scrapes_skipped"
	// ScrapeMaxGap is the longest time between two successful scrapes
	// of a component, in seconds.
	ScrapeMaxGap = "scrape_max_gap"
	// RequestDuration: apiserver_request_duration_seconds bucket deltas
	// per verb class (histogram).
	RequestDuration = "request_duration"
	// EtcdRequestDuration: etcd_request_duration_seconds bucket deltas
	// (histogram).
	EtcdRequestDuration = "etcd_request_duration"

	// Series names.
	SeriesRequestRate   = "requests_per_second"
	SeriesThrottledRate = "throttled_per_second"
	SeriesInflight      = "inflight_requests"
	SeriesRequestP99    = "request_duration_p99"
	SeriesWatchers      = "watchers"
	SeriesFlowInqueue   = "apf_inqueue_requests"
	SeriesCPUCores      = "cpu_cores"
	SeriesRSS           = "rss_bytes"
)

// Merge is how result.Merge combines the shards' apiserver
// measurements. The measurement observes the shared control plane, which
// every shard scraped in full; summing it would count the cluster n times.
// Every figure is therefore taken from the reference shard (result.Reference):
// they include every shard's own scrapes and harness requests, which an
// unsharded run sends once. excess_requests_per_restart, a ratio to the
// reference shard's own restarts, is then recomputed over the merged
// restarts by mergeExcessPerRestart.
func Merge() result.MergeRule {
	return result.MergeRule{Scope: result.ClusterWide, Figures: measure.Figures(map[result.Aggregation][]string{
		result.Reference: {Requests, RequestRateMean, RequestRateStdDev, RequestRatePeak, BurstThreshold,
			BurstSeconds, ExcessRequests, ExcessPerRestart, RawExcessRequests, RawExcessPerRestart, FlowRequests, Throttled, FlowDispatched,
			FlowRejected, FlowWait, FlowInqueueMax, InflightMax, WatchersMax, WatchEvents,
			CPUSeconds, RSSMax, SliceControllerChanges, Scrapes, ScrapeFailures,
			ScrapesScheduled, ScrapesSkipped, ScrapeMaxGap, RequestDuration, EtcdRequestDuration,
			SeriesRequestRate, SeriesThrottledRate, SeriesInflight, SeriesRequestP99, SeriesWatchers,
			SeriesFlowInqueue, SeriesCPUCores, SeriesRSS},
	}), Finish: mergeExcessPerRestart}
}

// mergeExcessPerRestart turns the reference shard's per-restart excess
// requests into per merged restart: the unlabelled figures as their total
// (excess_requests, raw_excess_requests) ÷ merged restarts, the labelled
// ones (per flow, per kind) scaled by the reference's restarts ÷ merged
// restarts.
func mergeExcessPerRestart(s *result.MergeShards, m *result.Measurement) error {
	ref := s.Reference
	if ref < 0 {
		return nil
	}
	refRestarts := s.Variants[ref].Restarts
	totals := map[string]string{ExcessPerRestart: ExcessRequests, RawExcessPerRestart: RawExcessRequests}
	kept := m.Values[:0]
	dropped := 0
	for _, v := range m.Values {
		totalName, perRestart := totals[v.Name]
		if !perRestart {
			kept = append(kept, v)
			continue
		}
		total, hasTotal := m.Value(totalName, result.WindowStorm)
		switch {
		case s.Restarts == 0:
			dropped++
			continue
		case len(v.Labels) == 0 && hasTotal && v.Window == result.WindowStorm:
			v.Value = total / float64(s.Restarts)
		case refRestarts > 0:
			v.Value = v.Value * float64(refRestarts) / float64(s.Restarts)
		default:
			dropped++
			continue
		}
		kept = append(kept, v)
	}
	m.Values = kept
	if dropped > 0 {
		s.Note("%d %s figures dropped: the reference shard restarted no node, so they cannot be rescaled", dropped, ExcessPerRestart)
	} else if refRestarts != s.Restarts && slices.ContainsFunc(m.Values, func(v result.Value) bool { return v.Name == ExcessPerRestart }) {
		s.Note("%s recomputed over the %d restarts of all shards (shard %d restarted %d)", ExcessPerRestart, s.Restarts, ref, refRestarts)
	}
	return nil
}
