package result_test

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stormbench/stormbench/bench/measure/apiserver"
	"github.com/stormbench/stormbench/bench/result"
)

// TestSparseRoundTrip: a labelled series leaves out its zero points at its
// reference's timestamps in the file and gets them back on decode, exactly;
// a series without a reference, and the reference itself, keep every point.
func TestSparseRoundTrip(t *testing.T) {
	start := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	pts := func(vs ...float64) []result.Point {
		var out []result.Point
		for i, v := range vs {
			out = append(out, result.Point{T: float64(i), V: v})
		}
		return out
	}
	series := []result.Series{
		{Name: apiserver.SeriesRequestRate, Unit: result.UnitRequestsPerSecond, Start: start, Points: pts(5, 0, 7, 0, 0)},
		{Name: apiserver.SeriesRequestRate, Labels: result.Labels(result.LabelResource, "pods"), Unit: result.UnitRequestsPerSecond, Start: start, Points: pts(0, 0, 7, 0, 0)},
		{Name: apiserver.SeriesRequestRate, Labels: result.Labels(result.LabelResource, "leases"), Unit: result.UnitRequestsPerSecond, Start: start, Points: pts(5, 0, 0, 0, 0)},
		// Another start: no reference, so dense.
		{Name: apiserver.SeriesRequestRate, Labels: result.Labels(result.LabelResource, "nodes"), Unit: result.UnitRequestsPerSecond, Start: start.Add(time.Second), Points: pts(0, 1)},
	}
	r := &result.Result{SchemaVersion: result.SchemaVersion, Complete: true,
		Run: result.Run{ID: "r", ToolVersion: "v0", Start: start, End: start.Add(time.Minute)},
		Variants: []result.VariantRun{{Variant: "default", Start: start, StormStart: start, Complete: true,
			Measurements: []result.Measurement{{Name: apiserver.Name, Series: series}}}}}
	want := make([]result.Series, len(series))
	for i, s := range series {
		want[i] = s
		want[i].Points = append([]result.Point(nil), s.Points...)
	}
	var buf bytes.Buffer
	if err := result.Encode(&buf, r); err != nil {
		t.Fatal(err)
	}
	file := buf.String()
	if !reflect.DeepEqual(r.Variants[0].Measurements[0].Series, want) {
		t.Fatal("Encode changed the result it wrote")
	}
	for _, s := range []string{`"points":[[2,7]],` + "\n" + `       "sparse":true`, `"points":[[0,5]],` + "\n" + `       "sparse":true`, `"points":[[0,5],[1,0],[2,7],[3,0],[4,0]]`, `"points":[[0,0],[1,1]]`} {
		if !strings.Contains(file, s) {
			t.Errorf("file lacks %s:\n%s", s, file)
		}
	}
	got, err := result.Decode(strings.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	if g := got.Variants[0].Measurements[0].Series; !reflect.DeepEqual(g, want) {
		t.Errorf("decoded series differ:\n got %+v\nwant %+v", g, want)
	}
}

// TestSparseWithoutReference: a sparse series whose reference is gone is
// refused, not read as a series with gaps.
func TestSparseWithoutReference(t *testing.T) {
	doc := `{"schemaVersion":4,"complete":false,"run":{"id":"r","toolVersion":"v0","start":"2026-12-01T08:00:00Z","cluster":{"embedded":false,"settings":{"nodeMonitorGracePeriod":"0s","nodeLeaseDuration":"0s","nodeStatusUpdateFrequency":"0s","endpointSliceUpdatesBatchPeriod":"0s"}},"fleet":{"nodes":1,"pods":1,"services":0},"seed":1},
"variants":[{"variant":"v","repetition":0,"start":"2026-12-01T08:00:00Z","stormStart":"2026-12-01T08:00:00Z","end":"2026-12-01T08:01:00Z","restarts":0,"complete":true,
"measurements":[{"name":"apiserver","series":[{"name":"requests_per_second","labels":{"resource":"pods"},"unit":"requests/s","start":"2026-12-01T08:00:00Z","points":[[1,2]],"sparse":true}]}]}]}`
	if _, err := result.Decode(strings.NewReader(doc)); err == nil || !strings.Contains(err.Error(), `sparse series requests_per_second{resource="pods"} has no unlabelled series`) {
		t.Errorf("error %v, want one about the missing reference", err)
	}
}
