package measure

import (
	"slices"

	"github.com/stormbench/stormbench/bench/result"
)

// MeasurementAPIServer is the /metrics scraper of the control plane.
const MeasurementAPIServer = "apiserver"

// Verb classes of server-side latency (apiserver_request_duration_seconds),
// as in the Kubernetes API call latency SLO; WATCH and CONNECT are excluded
// because their duration is the life of a stream.
const (
	ClassMutating = "mutating"
	ClassGet      = "get"
	ClassList     = "list"
)

// RequestKindMutating is the value of result.LabelRequestKind on
// APIInflightMax and SeriesInflight for mutating requests, as kube-apiserver
// labels apiserver_current_inflight_requests (the other is "readOnly").
const RequestKindMutating = "mutating"

// Figures of MeasurementAPIServer. See METRICS.md for definitions.
const (
	// APIRequests: apiserver_request_total delta; unlabelled = all, or
	// labelled by verb/resource/subresource, or by code alone.
	APIRequests = "requests"
	// APIRequestRateMean: mean requests/s over the window's intervals.
	APIRequestRateMean = "requests_per_second_mean"
	// APIRequestRateStdDev: standard deviation of per-interval requests/s.
	APIRequestRateStdDev = "requests_per_second_stddev"
	// APIRequestRatePeak: highest per-interval requests/s.
	APIRequestRatePeak = "requests_per_second_peak"
	// APIBurstThreshold: max(baseline mean + 3σ, 2 × baseline mean) of
	// the per-interval rate of the requests the storm is charged with
	// (all requests less the simulation's flows).
	APIBurstThreshold = "burst_threshold"
	// APIBurstSeconds: storm-window seconds whose rate of the requests
	// the storm is charged with is above the burst threshold.
	APIBurstSeconds = "burst_seconds"
	// APIExcessRequests: the excess the storm caused: storm requests less
	// baseline rate × storm length (APIRawExcessRequests), less the same
	// of the simulation's own flows (KWOK's and the harness's,
	// cluster.IsSimulationFlow).
	APIExcessRequests = "excess_requests"
	// APIExcessPerRestart: APIExcessRequests per restarted node; labelled
	// flow, each flow's excess per restart (the simulation's included).
	APIExcessPerRestart = "excess_requests_per_restart"
	// APIRawExcessRequests: storm requests minus baseline rate × storm
	// length, whoever sent them.
	APIRawExcessRequests = "raw_excess_requests"
	// APIRawExcessPerRestart: APIRawExcessRequests per restarted node
	// (also by verb/resource/subresource, where positive).
	APIRawExcessPerRestart = "raw_excess_requests_per_restart"
	// APIFlowRequests: APF-dispatched requests by flow (cluster.FlowOf of
	// the flow schema), in each window: the storm's counts and the
	// control's (baseline's) beside them.
	APIFlowRequests = "flow_requests"
	// APIThrottled: responses with code 429.
	APIThrottled = "throttled_requests"
	// APIFlowDispatched: apiserver_flowcontrol_dispatched_requests_total delta.
	APIFlowDispatched = "apf_dispatched_requests"
	// APIFlowRejected: apiserver_flowcontrol_rejected_requests_total delta.
	APIFlowRejected = "apf_rejected_requests"
	// APIFlowWait: histogram of apiserver_flowcontrol_request_wait_duration_seconds
	// deltas by priority level and flow schema (executed and rejected
	// requests together), for flows that queued at all.
	APIFlowWait = "apf_wait_seconds"
	// APIFlowInqueueMax: peak apiserver_flowcontrol_current_inqueue_requests.
	APIFlowInqueueMax = "apf_inqueue_requests_max"
	// APIInflightMax: peak apiserver_current_inflight_requests.
	APIInflightMax = "inflight_requests_max"
	// APIWatchersMax: peak registered watchers.
	APIWatchersMax = "watchers_max"
	// APIWatchEvents: apiserver_watch_events_total delta.
	APIWatchEvents = "watch_events"
	// APICPUSeconds: process_cpu_seconds_total delta per component.
	APICPUSeconds = "cpu_seconds"
	// APIRSSMax: peak process_resident_memory_bytes per component.
	APIRSSMax = "rss_bytes_max"
	// APISliceControllerChanges: endpoint_slice_controller_changes delta.
	APISliceControllerChanges = "endpointslice_controller_changes"
	// APIScrapes and APIScrapeFailures count scrapes per component.
	APIScrapes        = "scrapes"
	APIScrapeFailures = "scrape_failures"
	// APIScrapesScheduled counts the scrape slots of the interval cadence,
	// per component, including the skipped ones: scrapes - scrape_failures
	// over it is the scrape coverage.
	APIScrapesScheduled = "scrapes_scheduled"
	// APIScrapesSkipped counts the slots that started no scrape, per
	// component: they found APIServerOptions.MaxInFlight scrapes still
	// running (or the loop woke up after them).
	APIScrapesSkipped = "scrapes_skipped"
	// APIScrapeMaxGap is the longest time between two successful scrapes
	// of a component, in seconds.
	APIScrapeMaxGap = "scrape_max_gap"
	// APIRequestDuration: apiserver_request_duration_seconds bucket deltas
	// per verb class (histogram).
	APIRequestDuration = "request_duration"
	// APIEtcdRequestDuration: etcd_request_duration_seconds bucket deltas
	// (histogram).
	APIEtcdRequestDuration = "etcd_request_duration"

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

// apiServerMerge is how result.Merge combines the shards' apiserver
// measurements. The measurement observes the shared control plane, which
// every shard scraped in full; summing it would count the cluster n times.
// Every figure is therefore taken from the reference shard (result.Reference):
// they include every shard's own scrapes and harness requests, which an
// unsharded run sends once. excess_requests_per_restart, a ratio to the
// reference shard's own restarts, is then recomputed over the merged
// restarts by mergeExcessPerRestart.
func apiServerMerge() result.MergeRule {
	figures := map[string]result.Aggregation{}
	for _, name := range []string{
		APIRequests, APIRequestRateMean, APIRequestRateStdDev, APIRequestRatePeak, APIBurstThreshold,
		APIBurstSeconds, APIExcessRequests, APIExcessPerRestart, APIRawExcessRequests, APIRawExcessPerRestart, APIFlowRequests, APIThrottled, APIFlowDispatched,
		APIFlowRejected, APIFlowWait, APIFlowInqueueMax, APIInflightMax, APIWatchersMax, APIWatchEvents,
		APICPUSeconds, APIRSSMax, APISliceControllerChanges, APIScrapes, APIScrapeFailures,
		APIScrapesScheduled, APIScrapesSkipped, APIScrapeMaxGap, APIRequestDuration, APIEtcdRequestDuration,
		SeriesRequestRate, SeriesThrottledRate, SeriesInflight, SeriesRequestP99, SeriesWatchers,
		SeriesFlowInqueue, SeriesCPUCores, SeriesRSS,
	} {
		figures[name] = result.Reference
	}
	return result.MergeRule{Scope: result.ClusterWide, Figures: figures, Finish: mergeExcessPerRestart}
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
	totals := map[string]string{APIExcessPerRestart: APIExcessRequests, APIRawExcessPerRestart: APIRawExcessRequests}
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
		s.Note("%d %s figures dropped: the reference shard restarted no node, so they cannot be rescaled", dropped, APIExcessPerRestart)
	} else if refRestarts != s.Restarts && slices.ContainsFunc(m.Values, func(v result.Value) bool { return v.Name == APIExcessPerRestart }) {
		s.Note("%s recomputed over the %d restarts of all shards (shard %d restarted %d)", APIExcessPerRestart, s.Restarts, ref, refRestarts)
	}
	return nil
}
