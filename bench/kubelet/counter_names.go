package kubelet

// The names of the Counters in a Snapshot: the figures of the storm
// measurement (measure.MeasurementStorm) that count what the simulated
// kubelets did. Each is the counter's field name, lower-cased. The restarts
// are not a counter: the restarts' outcomes count them (storm.Restarts,
// measure.StormRestarts).
const (
	CounterPodStatusPatches       = "podStatusPatches"
	CounterReadyFlipsDown         = "readyFlipsDown"
	CounterReadyFlipsUp           = "readyFlipsUp"
	CounterReadyFlipsCoalesced    = "readyFlipsCoalesced"
	CounterStatusUpdatesCoalesced = "statusUpdatesCoalesced"
	CounterTokenRequests          = "tokenRequests"
	CounterObjectWatches          = "objectWatches"
	CounterContainerRestarts      = "containerRestarts"
	CounterMemoryEmptyDirsLost    = "memoryEmptyDirsLost"
	CounterPodsRejected           = "podsRejected"
	CounterPodsDeleted            = "podsDeleted"
	CounterPodsDrained            = "podsDrained"
	CounterErrors                 = "errors"
	CounterRetries                = "retries"
	CounterEventsDropped          = "eventsDropped"
	CounterStatusSyncsDropped     = "statusSyncsDropped"
)
