package result_test

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stormbench/stormbench/bench/measure/apiserver"
	"github.com/stormbench/stormbench/bench/result"
	"github.com/stormbench/stormbench/bench/testutil"
)

// layoutFixture is a small result with everything the layout and the
// rounding treat specially: a series longer than a line, floats with 17
// digits, whole numbers above 6 digits, a long list of strings, a seed
// that a float64 would round, and a profile holding a float.
func layoutFixture() *result.Result {
	start := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	var pts []result.Point
	for i := range 23 {
		pts = append(pts, result.Point{T: 5.0649999999 + float64(i)*1.0003, V: 0.30000000000000004 * float64(i) / 7})
	}
	var warnings []string
	for i := range 12 {
		warnings = append(warnings, "scrape "+strings.Repeat("x", i)+" failed")
	}
	return &result.Result{SchemaVersion: result.SchemaVersion, Complete: true,
		Run: result.Run{ID: "r", ToolVersion: "v0", Start: start, End: start.Add(time.Minute), Seed: 9007199254740993,
			Profile: json.RawMessage(`{"apiVersion":"stormbench.io/v1alpha1","rate":0.123456789}`)},
		Variants: []result.VariantRun{{Variant: "default", Start: start, StormStart: start, Complete: true, Restarts: 1000,
			WaveStarts:   []float64{0, 12.3456789, 1e-9, 123456789.123},
			ResetSeconds: 1.0 / 3,
			Measurements: []result.Measurement{{Name: apiserver.Name,
				Values: []result.Value{
					{Name: "requests", Unit: result.UnitRequests, Value: 12345678},
					{Name: "cpu_seconds", Unit: result.UnitSeconds, Value: 2.0 / 3},
					{Name: "rss_bytes_max", Unit: result.UnitBytes, Value: 1.5e21},
					{Name: "tiny", Unit: result.UnitSeconds, Value: 1.23456789e-7},
				},
				Series: []result.Series{
					{Name: apiserver.SeriesRequestRate, Unit: result.UnitRequestsPerSecond, Start: start, Points: pts},
					{Name: apiserver.SeriesRequestRate, Unit: result.UnitRequestsPerSecond, Start: start.Add(time.Second), Points: pts[:3]},
				},
				Warnings: warnings,
			}}}}}
}

// TestEncodeLayoutGolden: numbers are rounded (a point's t to the
// millisecond, other fractions to 6 significant digits, whole numbers and
// the profile exact), a series' points go 10 to a line, and a list of
// strings fills lines of at most 160 characters.
func TestEncodeLayoutGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := result.Encode(&buf, layoutFixture()); err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, "layout.golden.json", buf.Bytes())
	for i, line := range strings.Split(buf.String(), "\n") {
		if len(line) > 240 {
			t.Errorf("line %d has %d characters: %s", i+1, len(line), line)
		}
	}
	for _, want := range []string{`"seed":9007199254740993`, `"rate":0.123456789`, `[5.065,0]`, `"value":0.666667`, `"value":12345678`, `"value":1.5e+21`, `"value":1.23457e-7`, `"resetSeconds":0.333333`} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("file lacks %s", want)
		}
	}
}

// TestEncodeRoundsOnce: a decoded file encodes to the same bytes (the
// rounding is idempotent), and every number read back is within the
// documented precision of what was written.
func TestEncodeRoundsOnce(t *testing.T) {
	in := layoutFixture()
	var first bytes.Buffer
	if err := result.Encode(&first, in); err != nil {
		t.Fatal(err)
	}
	r, err := result.Decode(bytes.NewReader(first.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var second bytes.Buffer
	if err := result.Encode(&second, r); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first.Bytes(), second.Bytes()) {
		t.Errorf("re-encoding changed the file:\n%s\n---\n%s", first.String(), second.String())
	}
	got, want := r.Variants[0].Measurements[0].Series[0].Points, in.Variants[0].Measurements[0].Series[0].Points
	for i := range want {
		if math.Abs(got[i].T-want[i].T) > 0.0005 {
			t.Errorf("point %d: t %v, want %v to the millisecond", i, got[i].T, want[i].T)
		}
		if d := math.Abs(got[i].V - want[i].V); d > 5e-6*math.Abs(want[i].V) {
			t.Errorf("point %d: v %v, want %v to 6 significant digits", i, got[i].V, want[i].V)
		}
	}
}
