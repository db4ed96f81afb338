package clientlatency

import (
	"github.com/stormbench/stormbench/bench/measure"
	"github.com/stormbench/stormbench/bench/result"
)

// Name is the client-side latency of replayed requests.
const Name = "clientLatency"

// Figures of Name.
const (
	// Requests: requests sent (labelled source/verb/resource/subresource).
	Requests = "requests"
	// Errors: transport errors and 5xx responses.
	Errors = "errors"
	// Throttled: 429 responses.
	Throttled = "throttled_requests"
	// Retries: responses client-go retries (429/5xx with Retry-After).
	Retries = "retryable_responses"
	// RequestLatency: request latency histogram.
	RequestLatency = "latency"
	// Clamped: samples above the histogram's range, recorded at its top.
	Clamped = "clamped_samples"
)

// Merge is how result.Merge combines the shards'
// clientLatency measurements. Each shard counts what its own process sent,
// so every count (requests, errors, 429s, retries, clamped samples) is
// summed per label set and the latency HdrHistograms merge exactly. The
// kubelet counts of the merged run equal those of an unsharded run; the
// harness counts do not, since every shard waits for the whole fleet to be
// Ready.
func Merge() result.MergeRule {
	return result.MergeRule{Scope: result.PerShard, Figures: measure.Figures(map[result.Aggregation][]string{
		result.Sum: {Requests, Errors, Throttled, Retries, RequestLatency, Clamped},
	})}
}
