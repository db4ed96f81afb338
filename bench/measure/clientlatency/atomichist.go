package clientlatency

import (
	"math"
	"math/bits"
	"sync/atomic"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/stormbench/stormbench/bench/result"
)

// atomicHist is an HdrHistogram whose counts are updated with atomic adds,
// so that any number of goroutines record into it without locks. It uses
// exactly the bucket layout of hdrhistogram.New(1, highest, 3), which lets
// snapshot hand its counts to hdrhistogram.Import; TestAtomicHistMatchesHDR
// checks the layout value by value.
//
// Why not one plain histogram per goroutine, merged at the end: one
// 1 µs..60 s histogram at 3 digits is 17,408 counters (139 KB). Per
// goroutine and per (verb, resource), a 1,000-node storm would need
// gigabytes, and the requests of one simulated kubelet come from many
// goroutines (one per reflector) anyway. Uncontended atomic adds cost a few
// nanoseconds.
type atomicHist struct {
	highest                     int64
	unitMagnitude               int64
	subBucketHalfCountMagnitude int64
	subBucketHalfCount          int64
	subBucketMask               int64
	counts                      []atomic.Int64
	clamped                     atomic.Int64
}

// newAtomicHist returns a histogram for values 1..highest (microseconds).
// The layout formulas are those of hdrhistogram.New with a lowest
// discernible value of 1.
func newAtomicHist(highest int64) *atomicHist {
	const sig = result.HDRSignificantFigures
	largestSingleUnit := 2 * math.Pow10(sig)
	subBucketCountMagnitude := int64(math.Ceil(math.Log2(largestSingleUnit)))
	halfMag := max(subBucketCountMagnitude, 1) - 1
	subBucketCount := int64(1) << (halfMag + 1)
	// The number of counters is taken from the library itself, so that
	// Import never sees a slice of the wrong length.
	n := len(hdrhistogram.New(1, highest, sig).Export().Counts)
	return &atomicHist{
		highest:                     highest,
		unitMagnitude:               0,
		subBucketHalfCountMagnitude: halfMag,
		subBucketHalfCount:          subBucketCount / 2,
		subBucketMask:               subBucketCount - 1,
		counts:                      make([]atomic.Int64, n),
	}
}

// index is hdrhistogram's countsIndexFor.
func (h *atomicHist) index(v int64) int {
	pow2Ceiling := int64(64 - bits.LeadingZeros64(uint64(v|h.subBucketMask)))
	bucketIdx := pow2Ceiling - h.unitMagnitude - (h.subBucketHalfCountMagnitude + 1)
	subBucketIdx := v >> uint(bucketIdx+h.unitMagnitude)
	return int(((bucketIdx + 1) << uint(h.subBucketHalfCountMagnitude)) + subBucketIdx - h.subBucketHalfCount)
}

// record adds one value. Values below 0 count as 0; values above highest are
// recorded as highest and counted in clamped. It never allocates or blocks.
func (h *atomicHist) record(v int64) {
	if v < 0 {
		v = 0
	}
	if v > h.highest {
		v = h.highest
		h.clamped.Add(1)
	}
	h.counts[h.index(v)].Add(1)
}

// snapshot copies the counts into a regular HdrHistogram. Values recorded
// while it runs may or may not be included.
func (h *atomicHist) snapshot() *hdrhistogram.Histogram {
	counts := make([]int64, len(h.counts))
	for i := range h.counts {
		counts[i] = h.counts[i].Load()
	}
	return hdrhistogram.Import(&hdrhistogram.Snapshot{
		LowestTrackableValue:  1,
		HighestTrackableValue: h.highest,
		SignificantFigures:    result.HDRSignificantFigures,
		Counts:                counts,
	})
}
