package result

import (
	"math"
	"testing"
	"time"
)

func TestHDRRoundTripAndMerge(t *testing.T) {
	a := hdrOf(t, "latency", WindowStorm, nil, time.Millisecond, 2*time.Millisecond, 3*time.Millisecond)
	b := hdrOf(t, "latency", WindowStorm, nil, 10*time.Second, 20*time.Second)
	empty := hdrOf(t, "latency", WindowStorm, nil)

	for _, h := range []Histogram{a, b, empty} {
		d, err := DecodeHDR(h.HDR)
		if err != nil {
			t.Fatalf("DecodeHDR: %v", err)
		}
		if got := SummarizeHDR(d, 1e-6); got != h.Summary {
			t.Errorf("round trip summary = %+v, want %+v", got, h.Summary)
		}
	}

	m, err := MergeHistograms(&a, &b, &empty)
	if err != nil {
		t.Fatal(err)
	}
	if m.Summary.Count != 5 {
		t.Errorf("merged count = %d, want 5", m.Summary.Count)
	}
	// 3 significant digits: every value is within 0.1 %.
	within := func(got, want float64) bool { return math.Abs(got-want) <= want*1e-3 }
	if !within(m.Summary.Max, 20) || !within(m.Summary.Min, 0.001) || !within(m.Summary.P50, 0.003) {
		t.Errorf("merged summary = %+v, want min 1ms, p50 3ms, max 20s", m.Summary)
	}
	// Merging is associative with the encoded form: merge(merge(a,b), a) == merge(a, a, b).
	m2, err := MergeHistograms(&m, &a)
	if err != nil {
		t.Fatal(err)
	}
	m3, err := MergeHistograms(&a, &a, &b)
	if err != nil {
		t.Fatal(err)
	}
	if m2.Summary != m3.Summary || m2.HDR != m3.HDR {
		t.Errorf("merge is not associative: %+v vs %+v", m2.Summary, m3.Summary)
	}
}

func TestMergeMismatch(t *testing.T) {
	h := hdrOf(t, "latency", "", nil, time.Second)
	b := FromBuckets("d", "", nil, []float64{1, math.Inf(1)}, []float64{1, 2}, 3)
	b3 := FromBuckets("d", "", nil, []float64{1, 2, math.Inf(1)}, []float64{1, 2, 2}, 3)
	b2 := FromBuckets("d", "", nil, []float64{1, math.Inf(1)}, []float64{4, 4}, 1)
	tests := []struct {
		name string
		in   []*Histogram
		ok   bool
	}{
		{"hdr with buckets", []*Histogram{&h, &b}, false},
		{"buckets with hdr", []*Histogram{&b, &h}, false},
		{"different bounds", []*Histogram{&b, &b3}, false},
		{"same bounds", []*Histogram{&b, &b2}, true},
		{"none", nil, false},
		{"only empty", []*Histogram{{Name: "x", Unit: UnitSeconds}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := MergeHistograms(tt.in...)
			if (err == nil) != tt.ok {
				t.Errorf("MergeHistograms error = %v, want ok=%v", err, tt.ok)
			}
		})
	}
	m, err := MergeHistograms(&b, &b2)
	if err != nil {
		t.Fatal(err)
	}
	if m.Summary.Count != 6 || m.Sum != 4 || m.Buckets[0].Count != 5 {
		t.Errorf("summed buckets = %+v", m)
	}
}

func TestBucketQuantile(t *testing.T) {
	inf := math.Inf(1)
	tests := []struct {
		name   string
		q      float64
		bounds []float64
		cum    []float64
		want   float64
	}{
		{"empty", 0.5, []float64{1, inf}, []float64{0, 0}, 0},
		{"first bucket interpolates from zero", 0.5, []float64{1, 2, inf}, []float64{10, 10, 10}, 0.5},
		{"middle bucket", 0.75, []float64{1, 2, inf}, []float64{50, 100, 100}, 1.5},
		{"exact boundary", 0.5, []float64{1, 2, inf}, []float64{50, 100, 100}, 1},
		{"in +Inf bucket gives highest finite bound", 0.99, []float64{1, 2, inf}, []float64{10, 20, 100}, 2},
		{"only +Inf bucket", 0.5, []float64{inf}, []float64{5}, 0},
		{"q=0", 0, []float64{1, 2, inf}, []float64{0, 10, 10}, 1},
		{"q=1", 1, []float64{1, 2, inf}, []float64{5, 10, 10}, 2},
		{"mismatched lengths", 0.5, []float64{1}, []float64{1, 2}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := BucketQuantile(tt.q, tt.bounds, tt.cum); math.Abs(got-tt.want) > 1e-9 {
				t.Errorf("BucketQuantile(%v) = %v, want %v", tt.q, got, tt.want)
			}
		})
	}
}

func TestSummarizeBuckets(t *testing.T) {
	inf := math.Inf(1)
	s := SummarizeBuckets([]float64{0.1, 0.2, 0.4, inf}, []float64{0, 4, 10, 10}, 2)
	want := Summary{Count: 10, Min: 0.1, Mean: 0.2, P50: 0.2 + 0.2*(1.0/6), P90: 0.2 + 0.2*(5.0/6), P99: 0.2 + 0.2*(5.9/6), P999: 0.2 + 0.2*(5.99/6), Max: 0.4}
	const eps = 1e-9
	if s.Count != want.Count || math.Abs(s.Min-want.Min) > eps || math.Abs(s.Mean-want.Mean) > eps ||
		math.Abs(s.P50-want.P50) > eps || math.Abs(s.P99-want.P99) > eps || math.Abs(s.Max-want.Max) > eps {
		t.Errorf("SummarizeBuckets = %+v, want %+v", s, want)
	}
	// Observations in +Inf: max is the highest finite bound.
	s = SummarizeBuckets([]float64{1, inf}, []float64{0, 3}, 9)
	if s.Max != 1 || s.Min != 1 {
		t.Errorf("all in +Inf: %+v, want min=max=1", s)
	}
}

func TestDecodeHDRMalformed(t *testing.T) {
	for _, s := range []string{"", "!!!", "HISTFAAAAB", "HISTFAAAACh4nJNpmSzMwMDAxAABzFCaEUwz2X+AMIKZAEVcA1I="} {
		if _, err := DecodeHDR(s); err == nil {
			t.Errorf("DecodeHDR(%q) succeeded", s)
		}
	}
}
