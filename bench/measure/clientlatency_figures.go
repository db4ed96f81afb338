package measure

import "github.com/stormbench/stormbench/bench/result"

// MeasurementClientLatency is the client-side latency of replayed requests.
const MeasurementClientLatency = "clientLatency"

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
	// ClientRequestLatency: request latency histogram.
	ClientRequestLatency = "latency"
	// ClientClamped: samples above the histogram's range, recorded at its top.
	ClientClamped = "clamped_samples"
)

// clientLatencyMerge is how result.Merge combines the shards'
// clientLatency measurements. Each shard counts what its own process sent,
// so every count (requests, errors, 429s, retries, clamped samples) is
// summed per label set and the latency HdrHistograms merge exactly. The
// kubelet counts of the merged run equal those of an unsharded run; the
// harness counts do not, since every shard waits for the whole fleet to be
// Ready.
func clientLatencyMerge() result.MergeRule {
	return result.MergeRule{Scope: result.PerShard, Figures: map[string]result.Aggregation{
		ClientRequests:       result.Sum,
		ClientErrors:         result.Sum,
		ClientThrottled:      result.Sum,
		ClientRetries:        result.Sum,
		ClientRequestLatency: result.Sum,
		ClientClamped:        result.Sum,
	}}
}
