package kubelet

// The names of the Counters in a Snapshot: the figures of the storm
// measurement (measure.MeasurementStorm) that count what the simulated
// kubelets did. Each is the counter's field name, lower-cased. The restarts
// are not a counter: the restarts' outcomes count them (storm.Restarts,
// measure.StormRestarts).
const (
	CounterPodStatusPatches       = "pod_status_patches"
	CounterReadyFlipsDown         = "ready_flips_down"
	CounterReadyFlipsUp           = "ready_flips_up"
	CounterReadyFlipsCoalesced    = "ready_flips_coalesced"
	CounterStatusUpdatesCoalesced = "status_updates_coalesced"
	CounterTokenRequests          = "token_requests"
	CounterObjectWatches          = "object_watches"
	CounterContainerRestarts      = "container_restarts"
	CounterMemoryEmptyDirsLost    = "memory_empty_dirs_lost"
	CounterPodsRejected           = "pods_rejected"
	CounterPodsDeleted            = "pods_deleted"
	CounterPodsDrained            = "pods_drained"
	CounterErrors                 = "errors"
	CounterRetries                = "retries"
	CounterEventsDropped          = "events_dropped"
	CounterStatusSyncsDropped     = "status_syncs_dropped"
)
