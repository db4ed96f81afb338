package result

// Measurement names, as registered in bench/measure and as keyed in a
// profile's measurements section.
const (
	// MeasurementAPIServer is the /metrics scraper of the control plane.
	MeasurementAPIServer = "apiserver"
	// MeasurementClientLatency is the client-side latency of replayed requests.
	MeasurementClientLatency = "clientLatency"
	// MeasurementEndpointSlices is EndpointSlice churn.
	MeasurementEndpointSlices = "endpointSlices"
	// MeasurementRecovery is recovery latency.
	MeasurementRecovery = "recovery"
	// MeasurementStorm holds what the simulated kubelets did (bench/measure
	// Simulator) and what stormbench itself cost (bench/measure SelfCost)
	// during the storm. It is not a profile section: every storm has it.
	MeasurementStorm = "storm"
)

// Window names.
const (
	// WindowBaseline is the window measured before the storm starts.
	WindowBaseline = "baseline"
	// WindowStorm runs from the storm's start to the gather after recovery.
	WindowStorm = "storm"
)

// Units.
const (
	UnitRequests          = "requests"
	UnitRequestsPerSecond = "requests/s"
	UnitSeconds           = "seconds"
	UnitBytes             = "bytes"
	UnitCount             = "count"
	UnitCores             = "cores"
	UnitEvents            = "events"
	UnitEndpointSeconds   = "endpoint-seconds"
	UnitMicroseconds      = "microseconds"
	UnitRatio             = "ratio"
)

// Label keys.
const (
	LabelVerb          = "verb"
	LabelResource      = "resource"
	LabelSubresource   = "subresource"
	LabelCode          = "code"
	LabelClass         = "class"
	LabelComponent     = "component"
	LabelPriorityLevel = "priority_level"
	LabelFlowSchema    = "flow_schema"
	LabelReason        = "reason"
	LabelRequestKind   = "request_kind"
	LabelOperation     = "operation"
	LabelSource        = "source"
	LabelService       = "service"
	LabelDirection     = "direction"
)

// Verb classes of server-side latency (apiserver_request_duration_seconds),
// as in the Kubernetes API call latency SLO; WATCH and CONNECT are excluded
// because their duration is the life of a stream.
const (
	ClassMutating = "mutating"
	ClassGet      = "get"
	ClassList     = "list"
)

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
	// APIBurstThreshold: max(baseline mean + 3σ, 2 × baseline mean).
	APIBurstThreshold = "burst_threshold"
	// APIBurstSeconds: storm-window seconds above the burst threshold.
	APIBurstSeconds = "burst_seconds"
	// APIExcessRequests: storm requests minus baseline rate × storm length.
	APIExcessRequests = "excess_requests"
	// APIExcessPerRestart: excess requests per restarted node (also by
	// verb/resource/subresource).
	APIExcessPerRestart = "excess_requests_per_restart"
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
	// per component, including those skipped because a scrape overran its
	// slot: scrapes - scrape_failures over it is the scrape coverage.
	APIScrapesScheduled = "scrapes_scheduled"
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
	SeriesRequestRate      = "requests_per_second"
	SeriesThrottledRate    = "throttled_per_second"
	SeriesInflight         = "inflight_requests"
	SeriesRequestP99       = "request_duration_p99"
	SeriesWatchers         = "watchers"
	SeriesFlowInqueue      = "apf_inqueue_requests"
	SeriesCPUCores         = "cpu_cores"
	SeriesRSS              = "rss_bytes"
	SeriesNotReady         = "not_ready_endpoints"
	SeriesSliceWrites      = "slice_writes"
	SeriesUnrecoveredNodes = "unrecovered_nodes"
)

// Figures of MeasurementClientLatency.
const (
	// ClientRequests: requests sent (labelled source/verb/resource/subresource).
	ClientRequests = "requests"
	// ClientErrors: transport errors and 5xx responses.
	ClientErrors = "errors"
	// ClientThrottled: 429 responses.
	ClientThrottled = "throttled_requests"
	// ClientRetries: responses client-go retries (429/5xx with Retry-After).
	ClientRetries = "retryable_responses"
	// ClientLatency: request latency histogram.
	ClientLatency = "latency"
	// ClientClamped: samples above the histogram's range, recorded at its top.
	ClientClamped = "clamped_samples"
)

// Figures of MeasurementEndpointSlices.
const (
	SliceWrites           = "slice_writes"
	SliceCreates          = "slice_creates"
	SliceUpdates          = "slice_updates"
	SliceDeletes          = "slice_deletes"
	SliceBytesWritten     = "slice_bytes_written"
	SliceFanOutEvents     = "fanout_events_estimate"
	SliceFanOutBytes      = "fanout_bytes_estimate"
	SliceReadyFlips       = "ready_flips"
	SliceNotReadyPeak     = "not_ready_endpoints_peak"
	SliceNotReadySeconds  = "not_ready_endpoint_seconds"
	SliceServicesOutage   = "services_with_outage"
	SliceOutageSeconds    = "outage_seconds"
	SliceOngoingOutages   = "outages_ongoing"
	SliceWatcherEvents    = "extra_watcher_events"
	SliceWatcherRestarts  = "extra_watcher_restarts"
	SliceEndpointsTracked = "endpoints"
	SliceServicesTracked  = "services"
	DirectionReadyToNot   = "ready_to_not_ready"
	DirectionNotToReady   = "not_ready_to_ready"
)

// Figures of MeasurementRecovery (histograms unless noted).
const (
	RecoveryNode       = "node_ready"
	RecoveryPod        = "pod_ready"
	RecoveryPodRunning = "pod_running"
	RecoveryService    = "service_ready"
	RecoveryStorm      = "fleet_recovered"
	// RecoveryUnrecovered (value, labelled by kind) counts restarts not
	// recovered at gather time.
	RecoveryUnrecovered = "unrecovered"
	// RecoveryFromEvents (value) counts nodes whose NotReady state was never
	// observed, so recovery was taken from the storm's ReportedReady event.
	RecoveryFromEvents = "node_ready_from_events"
	// RecoveryUnattributed (value, labelled by kind) counts not-ready
	// observations no restart explains.
	RecoveryUnattributed = "unattributed"
	// The healthy nodes' lease renewals during the storm (values): nodes
	// watched, renewals, late renewals (more than 1.5 renew intervals, a
	// quarter of the lease duration each, after the previous one; a lease
	// not renewed by the end counts too), nodes with a late renewal,
	// expired leases (a gap longer than the lease duration) and the longest
	// gap. The first step of the cascade; the healthy nodes that then went
	// NotReady and their pods are RecoveryUnattributed's node and pod counts.
	HealthyLeaseNodes     = "healthy_lease_nodes"
	HealthyLeaseRenewals  = "healthy_lease_renewals"
	HealthyLeaseLate      = "healthy_lease_late"
	HealthyLeaseLateNodes = "healthy_lease_late_nodes"
	HealthyLeaseExpired   = "healthy_lease_expired"
	HealthyLeaseMaxGap    = "healthy_lease_max_gap"
	// LabelKind qualifies recovery values: node, pod, service.
	LabelKind = "kind"
)
