package track

import (
	"time"

	"github.com/stormbench/stormbench/bench/result"
)

// SecondSeries aggregates observations into 1 s buckets from an origin. A
// Sum series adds the observations of a second (events per second); a level
// Series keeps the maximum level of each second and carries the last level
// across seconds without observations (a gauge that did not change).
type SecondSeries struct {
	Origin time.Time
	Sum    bool
	vals   []float64 // sum or max per bucket
	last   []float64 // last observation per bucket (level series)
	has    []bool
}

func (s *SecondSeries) Observe(t time.Time, v float64) {
	i := max(int(t.Sub(s.Origin)/time.Second), 0)
	for len(s.vals) <= i {
		s.vals = append(s.vals, 0)
		s.last = append(s.last, 0)
		s.has = append(s.has, false)
	}
	switch {
	case !s.has[i]:
		s.vals[i] = v
	case s.Sum:
		s.vals[i] += v
	default:
		s.vals[i] = max(s.vals[i], v)
	}
	s.last[i] = v
	s.has[i] = true
}

// Series returns one point per second up to end; the point at T covers the
// second [T−1, T).
func (s *SecondSeries) Series(name, unit string, end time.Time) result.Series {
	out := result.Series{Name: name, Unit: unit, Start: s.Origin}
	n := int((end.Sub(s.Origin) + time.Second - 1) / time.Second)
	level := 0.0
	for i := 0; i < n; i++ {
		v := 0.0
		switch {
		case i < len(s.vals) && s.has[i]:
			v = s.vals[i]
			level = s.last[i]
		case !s.Sum:
			v = level
		}
		out.Points = append(out.Points, result.Point{T: float64(i + 1), V: v})
	}
	return out
}
