package result

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// HDRSignificantFigures is the precision of every HdrHistogram stormbench
// records: 3 significant digits (0.1 % relative error).
const HDRSignificantFigures = 3

// Histogram is a latency distribution, in one of two forms:
//   - an HdrHistogram (HDR set): recorded by stormbench itself in
//     microseconds, stored in the standard V2 compressed, base64 encoding so
//     that any HdrHistogram implementation can read it and histograms merge
//     exactly;
//   - Prometheus buckets (Buckets set): deltas of a server-side histogram
//     such as apiserver_request_duration_seconds, whose percentiles are
//     interpolated within buckets as histogram_quantile does.
//
// Summary is computed from either form when the histogram is built.
type Histogram struct {
	// Name is the histogram's name, a constant of the measurement that
	// emits it (bench/measure); see METRICS.md.
	Name string `json:"name"`
	// Window is the window it covers; empty for the whole measurement.
	Window string `json:"window,omitempty"`
	// Labels qualify the histogram.
	Labels map[string]string `json:"labels,omitempty"`
	// Unit is the unit of Summary (UnitSeconds).
	Unit string `json:"unit"`
	// Summary holds count and percentiles, for people.
	Summary Summary `json:"summary"`
	// HDR is the base64 V2-compressed HdrHistogram (HdrHistogram's own
	// interchange format), with values in HDRUnit.
	HDR string `json:"hdr,omitempty"`
	// HDRUnit is the unit of the encoded values (UnitMicroseconds).
	HDRUnit string `json:"hdrUnit,omitempty"`
	// Buckets are cumulative Prometheus buckets, in Unit, ending with +Inf.
	Buckets []Bucket `json:"buckets,omitempty"`
	// Sum is the sum of observations for bucket histograms, in Unit.
	Sum float64 `json:"sum,omitempty"`
}

// Summary is a percentile summary of a histogram. Every value is in the
// histogram's Unit. For bucket histograms percentiles are interpolated, Min
// is the lower bound of the first non-empty bucket and Max the upper bound
// of the last non-empty finite bucket.
type Summary struct {
	Count int64   `json:"count"`
	Min   float64 `json:"min"`
	Mean  float64 `json:"mean"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P99   float64 `json:"p99"`
	P999  float64 `json:"p99.9"`
	Max   float64 `json:"max"`
}

// Bucket is one cumulative Prometheus bucket: Count observations were at
// most LE. LE is encoded as in the Prometheus text format ("0.005", "+Inf").
type Bucket struct {
	LE    string  `json:"le"`
	Count float64 `json:"count"`
}

// NewHDR returns an empty HdrHistogram for durations in microseconds, from
// 1 µs to highest, with HDRSignificantFigures digits.
func NewHDR(highest time.Duration) *hdrhistogram.Histogram {
	return hdrhistogram.New(1, max(highest.Microseconds(), 2), HDRSignificantFigures)
}

// FromHDR builds a Histogram from an HdrHistogram holding microseconds.
func FromHDR(name, window string, labels map[string]string, h *hdrhistogram.Histogram) (Histogram, error) {
	enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return Histogram{}, fmt.Errorf("encoding histogram %s: %w", name, err)
	}
	return Histogram{
		Name:    name,
		Window:  window,
		Labels:  labels,
		Unit:    UnitSeconds,
		Summary: SummarizeHDR(h, 1e-6),
		HDR:     string(enc),
		HDRUnit: UnitMicroseconds,
	}, nil
}

// DecodeHDR decodes a V2 compressed, base64 HdrHistogram. It returns an
// error, never a panic, for malformed input.
func DecodeHDR(s string) (h *hdrhistogram.Histogram, err error) {
	if s == "" {
		return nil, errors.New("empty histogram encoding")
	}
	// hdrhistogram-go v1.1.2 indexes into the decoded buffers without bounds
	// checks, so truncated or corrupt input panics inside Decode; turn that
	// into an error, since result files are user input.
	defer func() {
		if r := recover(); r != nil {
			h, err = nil, fmt.Errorf("decoding histogram: malformed encoding (%v)", r)
		}
	}()
	h, err = hdrhistogram.Decode([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("decoding histogram: %w", err)
	}
	return h, nil
}

// SummarizeHDR summarizes h, multiplying every value by scale (1e-6 turns
// microseconds into seconds).
func SummarizeHDR(h *hdrhistogram.Histogram, scale float64) Summary {
	n := h.TotalCount()
	if n == 0 {
		return Summary{}
	}
	return Summary{
		Count: n,
		Min:   float64(h.Min()) * scale,
		Mean:  h.Mean() * scale,
		P50:   float64(h.ValueAtQuantile(50)) * scale,
		P90:   float64(h.ValueAtQuantile(90)) * scale,
		P99:   float64(h.ValueAtQuantile(99)) * scale,
		P999:  float64(h.ValueAtQuantile(99.9)) * scale,
		Max:   float64(h.Max()) * scale,
	}
}

// FromBuckets builds a bucket Histogram from Prometheus bucket upper bounds
// (ascending, the last one +Inf), cumulative counts and the observation sum.
func FromBuckets(name, window string, labels map[string]string, bounds, cumulative []float64, sum float64) Histogram {
	bs := make([]Bucket, len(bounds))
	for i, le := range bounds {
		bs[i] = Bucket{LE: formatLE(le), Count: cumulative[i]}
	}
	return Histogram{
		Name:    name,
		Window:  window,
		Labels:  labels,
		Unit:    UnitSeconds,
		Summary: SummarizeBuckets(bounds, cumulative, sum),
		Buckets: bs,
		Sum:     finite(sum),
	}
}

// SummarizeBuckets summarizes cumulative Prometheus buckets.
func SummarizeBuckets(bounds, cumulative []float64, sum float64) Summary {
	if len(cumulative) == 0 || cumulative[len(cumulative)-1] <= 0 {
		return Summary{}
	}
	total := cumulative[len(cumulative)-1]
	s := Summary{
		Count: int64(math.Round(total)),
		Mean:  finite(sum / total),
		P50:   BucketQuantile(0.5, bounds, cumulative),
		P90:   BucketQuantile(0.9, bounds, cumulative),
		P99:   BucketQuantile(0.99, bounds, cumulative),
		P999:  BucketQuantile(0.999, bounds, cumulative),
	}
	prev := 0.0
	minSet := false
	for i, c := range cumulative {
		if c > prev {
			lower := 0.0
			if i > 0 {
				lower = bounds[i-1]
			}
			if !minSet {
				s.Min, minSet = lower, true
			}
			if !math.IsInf(bounds[i], 1) {
				s.Max = bounds[i]
			} else {
				s.Max = lower
			}
		}
		prev = c
	}
	return s
}

// BucketQuantile returns the q-quantile (0 ≤ q ≤ 1) of cumulative Prometheus
// buckets with the given upper bounds, interpolating linearly within the
// bucket as PromQL's histogram_quantile does: the lowest bucket starts at 0,
// and a quantile in the +Inf bucket is the highest finite bound. It returns
// 0 for an empty histogram.
func BucketQuantile(q float64, bounds, cumulative []float64) float64 {
	n := len(cumulative)
	if n == 0 || len(bounds) != n || cumulative[n-1] <= 0 {
		return 0
	}
	q = min(max(q, 0), 1)
	rank := q * cumulative[n-1]
	i := 0
	for i < n-1 && cumulative[i] < rank {
		i++
	}
	if math.IsInf(bounds[i], 1) {
		if i == 0 {
			return 0
		}
		return bounds[i-1]
	}
	lower, below := 0.0, 0.0
	if i > 0 {
		lower, below = bounds[i-1], cumulative[i-1]
	}
	inBucket := cumulative[i] - below
	if inBucket <= 0 {
		return bounds[i]
	}
	return lower + (bounds[i]-lower)*(rank-below)/inBucket
}

func formatLE(le float64) string {
	if math.IsInf(le, 1) {
		return "+Inf"
	}
	return strconv.FormatFloat(le, 'g', -1, 64)
}

func finite(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return f
}

// Clone returns a copy of h that shares no map or slice with it.
func (h Histogram) Clone() Histogram {
	h.Labels = maps.Clone(h.Labels)
	h.Buckets = slices.Clone(h.Buckets)
	return h
}

// recorded says h holds samples, in either form.
func (h *Histogram) recorded() bool { return h.HDR != "" || len(h.Buckets) > 0 }

// MergeHistograms merges histograms of the same kind: HdrHistograms are
// merged exactly, and bucket histograms with identical bounds are summed.
// Histograms holding neither form (no samples) are skipped. The result takes
// its name, window, labels and unit from the first histogram.
func MergeHistograms(hs ...*Histogram) (Histogram, error) {
	if len(hs) == 0 {
		return Histogram{}, errors.New("merging histograms: none given")
	}
	first := hs[0]
	k := slices.IndexFunc(hs, (*Histogram).recorded)
	if k < 0 {
		return *first, nil
	}
	kind := hs[k]
	var out Histogram
	if kind.HDR != "" {
		var merged *hdrhistogram.Histogram
		for i, h := range hs {
			if !h.recorded() {
				continue
			}
			if h.HDR == "" || h.HDRUnit != kind.HDRUnit {
				return Histogram{}, fmt.Errorf("merging histograms: #%d (%s) is not an HdrHistogram in %s", i, h.Name, kind.HDRUnit)
			}
			d, err := DecodeHDR(h.HDR)
			if err != nil {
				return Histogram{}, fmt.Errorf("merging histograms: #%d (%s): %w", i, h.Name, err)
			}
			if merged == nil {
				merged = d
				continue
			}
			if dropped := merged.Merge(d); dropped > 0 {
				return Histogram{}, fmt.Errorf("merging histograms: #%d (%s): %d values out of range", i, h.Name, dropped)
			}
		}
		var err error
		if out, err = FromHDR(first.Name, first.Window, first.Labels, merged); err != nil {
			return Histogram{}, err
		}
	} else {
		bounds := make([]float64, len(kind.Buckets))
		for i, b := range kind.Buckets {
			le, err := strconv.ParseFloat(b.LE, 64)
			if err != nil {
				return Histogram{}, fmt.Errorf("merging histograms: bucket le %q: %w", b.LE, err)
			}
			bounds[i] = le
		}
		cum := make([]float64, len(bounds))
		sum := 0.0
		for i, h := range hs {
			if !h.recorded() {
				continue
			}
			if len(h.Buckets) != len(bounds) {
				return Histogram{}, fmt.Errorf("merging histograms: #%d (%s) has %d buckets, want %d", i, h.Name, len(h.Buckets), len(bounds))
			}
			for j, b := range h.Buckets {
				if b.LE != kind.Buckets[j].LE {
					return Histogram{}, fmt.Errorf("merging histograms: #%d (%s) bucket %d is le=%s, want le=%s", i, h.Name, j, b.LE, kind.Buckets[j].LE)
				}
				cum[j] += b.Count
			}
			sum += h.Sum
		}
		out = FromBuckets(first.Name, first.Window, first.Labels, bounds, cum, sum)
	}
	out.Unit = cmp.Or(first.Unit, out.Unit)
	return out, nil
}
