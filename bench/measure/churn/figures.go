package churn

import (
	"github.com/stormbench/stormbench/bench/measure"
	"github.com/stormbench/stormbench/bench/result"
)

// Name is EndpointSlice churn.
const Name = "endpointSlices"

// Figures of Name.
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

	// Series names.
	SeriesNotReady    = "not_ready_endpoints"
	SeriesSliceWrites = "slice_writes"
)

// Values of result.LabelDirection on SliceReadyFlips.
const (
	DirectionReadyToNot = "ready_to_not_ready"
	DirectionNotToReady = "not_ready_to_ready"
)

// Merge is how result.Merge combines the shards'
// endpointSlices measurements. Every shard watched the same EndpointSlices
// of the shared control plane, so the figures come from the reference
// shard, except extra_watcher_events and extra_watcher_restarts, which
// count each shard's own extra watches and are summed.
func Merge() result.MergeRule {
	return result.MergeRule{Scope: result.ClusterWide, Figures: measure.Figures(map[result.Aggregation][]string{
		result.Sum: {SliceWatcherEvents, SliceWatcherRestarts},
		result.Reference: {SliceWrites, SliceCreates, SliceUpdates, SliceDeletes, SliceBytesWritten, SliceFanOutEvents,
			SliceFanOutBytes, SliceReadyFlips, SliceNotReadyPeak, SliceNotReadySeconds, SliceServicesOutage,
			SliceOutageSeconds, SliceOngoingOutages, SliceEndpointsTracked, SliceServicesTracked,
			SeriesNotReady, SeriesSliceWrites},
	})}
}
