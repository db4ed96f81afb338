package result

import (
	"math"
	"testing"
	"time"
)

// mergeT0 is the fixtures' time origin.
var mergeT0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

func TestSumSeries(t *testing.T) {
	s := func(start time.Duration, pts ...float64) *Series {
		out := &Series{Name: "x", Unit: UnitCount, Start: mergeT0.Add(start)}
		for i := 0; i+1 < len(pts); i += 2 {
			out.Points = append(out.Points, Point{T: pts[i], V: pts[i+1]})
		}
		return out
	}
	tests := []struct {
		name  string
		in    []*Series
		start time.Duration
		want  []Point
	}{
		{"one", []*Series{s(0, 1, 5, 2, 6)}, 0, []Point{{1, 5}, {2, 6}}},
		{"aligned", []*Series{s(0, 1, 5, 2, 6), s(0, 1, 1, 2, 1)}, 0, []Point{{1, 6}, {2, 7}}},
		{"later series holds its last level", []*Series{s(0, 1, 1, 2, 1, 3, 1), s(time.Second, 1, 2)}, 0, []Point{{1, 1}, {2, 3}, {3, 3}}},
		{"earlier second series", []*Series{s(2*time.Second, 1, 1), s(0, 1, 4, 2, 4)}, 0, []Point{{1, 4}, {2, 4}, {3, 5}}},
		{"sub-second offset", []*Series{s(0, 1, 1, 2, 1), s(300*time.Millisecond, 1, 2, 2, 0)}, 0, []Point{{1, 1}, {2, 3}, {3, 1}}},
		{"empty", []*Series{{Name: "x", Unit: UnitCount, Start: mergeT0}}, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := sumSeries(tt.in...)
			if !got.Start.Equal(mergeT0.Add(tt.start)) || !pointsEqual(got.Points, tt.want) {
				t.Errorf("sumSeries = start %v %v, want %v %v", got.Start.Sub(mergeT0), got.Points, tt.start, tt.want)
			}
		})
	}
}

func pointsEqual(a, b []Point) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i].T-b[i].T) > 1e-9 || math.Abs(a[i].V-b[i].V) > 1e-9 {
			return false
		}
	}
	return true
}
