package storm

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/clock"

	"github.com/stormbench/stormbench/profiles"
)

// Stream constants give node selection and downtime draws their own PCG
// streams, so a change in how many nodes are selected does not shift the
// selection's random sequence into the downtimes (and vice versa).
const (
	streamSelect   uint64 = 0x73656c656374 // "select"
	streamDowntime uint64 = 0x646f776e74   // "downt"
)

// maxNormal caps normal draws (about 146 years) so they convert to a
// Duration safely; validation bounds real profiles far below it.
const maxNormal = float64(1 << 62)

// downtimeResolution is the granularity of drawn downtimes: finer values
// only make logs and results harder to read.
const downtimeResolution = time.Millisecond

// NodeInfo is what a schedule needs to know about a candidate node.
type NodeInfo struct {
	// Name is the node's name; names must be unique.
	Name string
	// Labels are the node's labels, matched against the storm's selector.
	Labels map[string]string
}

// Restart is one node's restart in a schedule.
type Restart struct {
	// Node is the node to restart.
	Node string
	// Wave is the index of the wave the node belongs to, from 0.
	Wave int
	// Offset is when the restart starts, from the start of the storm. With
	// a concurrency limit it can be later than the wave's start.
	Offset time.Duration
	// Downtime is how long the node's kubelet, runtime or the node itself
	// stays down.
	Downtime time.Duration
	// Index is the restart's position in Schedule.Restarts, which is also
	// the order in which downtimes were drawn.
	Index int
}

// Schedule is a storm's plan: which node restarts when, for how long. It is
// a pure function of the storm section, the seed and the node list (see
// NewSchedule), so two runs with the same inputs restart the same nodes at
// the same offsets.
type Schedule struct {
	// Restarts lists every restart in start order: by Offset, then Index.
	Restarts []Restart
	// Waves is the number of waves.
	Waves int
	// WaveSize is the number of nodes per wave; the last wave may be smaller.
	WaveSize int
	// WaveStarts are the waves' start offsets from the start of the storm,
	// one per wave: wave k starts at k × waves.interval. With a concurrency
	// limit a wave's restarts can start later than its wave.
	WaveStarts []time.Duration
	// Candidates is the number of nodes that matched the label selector.
	Candidates int
	// Seed is the seed the schedule was drawn with.
	Seed int64
	// End is the modelled time from the start of the storm until the last
	// restarted node reports Ready: the latest Offset + Downtime +
	// initDuration.
	End time.Duration
}

// NewSchedule computes the restarts of storm s over nodes with the given
// seed.
//
// Nodes are sorted by name first, so the order of the input does not matter.
// They are filtered by s.Select.LabelSelector, and s.Select.Count of them,
// or s.Select.Fraction of them rounded up (at least one), are chosen at
// random with a PCG generator seeded from seed. The chosen nodes are split
// into waves of s.Waves.Size ("50" or "10%" of the chosen nodes) that start
// s.Waves.Interval apart; without a size they form one wave at offset 0.
// Downtimes are drawn from s.Downtime for each restart in Index order.
//
// If s.Waves.Concurrency is positive, a restart does not start until fewer
// than Concurrency nodes are busy, a node being busy for its downtime plus
// s.InitDuration (it reports NotReady until initialized). Restarts start in
// Index order, so a later node never overtakes an earlier one.
//
// nodes should be the run's own nodes: the schedule does not check
// ownership, the caller does before it touches a node.
func NewSchedule(s *profiles.Storm, seed int64, nodes []NodeInfo) (*Schedule, error) {
	if s == nil {
		return nil, errors.New("building storm schedule: profile has no storm section")
	}
	selected, candidates, err := selectNodes(&s.Select, seed, nodes)
	if err != nil {
		return nil, fmt.Errorf("building storm schedule: %w", err)
	}
	waveSize, err := resolveWaveSize(s.Waves.Size, len(selected))
	if err != nil {
		return nil, fmt.Errorf("building storm schedule: %w", err)
	}
	if s.Waves.Interval.Duration < 0 {
		return nil, fmt.Errorf("building storm schedule: waves.interval %s is negative", s.Waves.Interval.Duration)
	}
	if s.Waves.Concurrency < 0 {
		return nil, fmt.Errorf("building storm schedule: waves.concurrency %d is negative", s.Waves.Concurrency)
	}
	if s.InitDuration.Duration < 0 {
		return nil, fmt.Errorf("building storm schedule: initDuration %s is negative", s.InitDuration.Duration)
	}
	draw, err := newSampler(s.Downtime, seed)
	if err != nil {
		return nil, fmt.Errorf("building storm schedule: downtime: %w", err)
	}

	sched := &Schedule{
		Restarts:   make([]Restart, len(selected)),
		Waves:      (len(selected) + waveSize - 1) / waveSize,
		WaveSize:   waveSize,
		Candidates: candidates,
		Seed:       seed,
	}
	for k := range sched.Waves {
		sched.WaveStarts = append(sched.WaveStarts, time.Duration(k)*s.Waves.Interval.Duration)
	}
	init := s.InitDuration.Duration
	limit := s.Waves.Concurrency
	var busy []time.Duration // end times of restarts that may still be busy, soonest first
	var prev time.Duration
	for i, name := range selected {
		wave := i / waveSize
		r := Restart{
			Node:     name,
			Wave:     wave,
			Offset:   time.Duration(wave) * s.Waves.Interval.Duration,
			Downtime: draw(),
			Index:    i,
		}
		if limit > 0 {
			// Keep start order: a restart never starts before the one
			// drawn before it.
			r.Offset = max(r.Offset, prev)
			for len(busy) > 0 && busy[0] <= r.Offset {
				busy = busy[1:]
			}
			for len(busy) >= limit {
				r.Offset, busy = max(r.Offset, busy[0]), busy[1:]
			}
			end := r.Offset + r.Downtime + init
			at, _ := slices.BinarySearch(busy, end)
			busy = slices.Insert(busy, at, end)
			prev = r.Offset
		}
		sched.End = max(sched.End, r.Offset+r.Downtime+init)
		sched.Restarts[i] = r
	}
	return sched, nil
}

// Shard returns shard i of n of the schedule, for runs split over several
// stormbench processes: the selected nodes are dealt as Deal deals them, so
// shards differ in size by at most one. Restarts keep their global Offset,
// Wave and Index, and are returned in start order. The shards of 0..n-1
// are disjoint and together hold every restart. An i outside [0, n)
// returns nil.
func (s *Schedule) Shard(i, n int) []Restart {
	if n < 1 || i < 0 || i >= n {
		return nil
	}
	names := make([]string, len(s.Restarts))
	for k, r := range s.Restarts {
		names[k] = r.Node
	}
	mine := sets.New(Deal(names, i, n)...)
	return slices.DeleteFunc(slices.Clone(s.Restarts), func(r Restart) bool { return !mine.Has(r.Node) })
}

// Deal returns the names dealt to shard i of n, sorted: the names are
// sorted and dealt round-robin. n of 1 or less keeps every name. It is the
// one split of nodes between the processes of a sharded run: their
// restarts (Schedule.Shard) and their steady watches.
func Deal(names []string, i, n int) []string {
	names = slices.Sorted(slices.Values(names))
	var out []string
	for k, name := range names {
		if n <= 1 || k%n == i {
			out = append(out, name)
		}
	}
	return out
}

// selectNodes returns the names of the chosen nodes in their random order,
// and the number of candidates that matched the selector.
func selectNodes(sel *profiles.Selection, seed int64, nodes []NodeInfo) ([]string, int, error) {
	sorted := slices.Clone(nodes)
	slices.SortFunc(sorted, func(a, b NodeInfo) int { return cmp.Compare(a.Name, b.Name) })
	for i := range sorted {
		if sorted[i].Name == "" {
			return nil, 0, errors.New("a node has no name")
		}
		if i > 0 && sorted[i].Name == sorted[i-1].Name {
			return nil, 0, fmt.Errorf("node %q is listed twice", sorted[i].Name)
		}
	}
	selector := labels.Everything()
	if sel.LabelSelector != "" {
		var err error
		if selector, err = labels.Parse(sel.LabelSelector); err != nil {
			return nil, 0, fmt.Errorf("parsing select.labelSelector %q: %w", sel.LabelSelector, err)
		}
	}
	var names []string
	for _, n := range sorted {
		if selector.Matches(labels.Set(n.Labels)) {
			names = append(names, n.Name)
		}
	}
	if len(names) == 0 {
		return nil, 0, fmt.Errorf("no node of %d matches select.labelSelector %q", len(nodes), sel.LabelSelector)
	}
	var want int
	switch {
	case sel.Count != 0 && sel.Fraction != 0:
		return nil, 0, errors.New("select sets both count and fraction")
	case sel.Count < 0:
		return nil, 0, fmt.Errorf("select.count %d is negative", sel.Count)
	case sel.Count > 0:
		want = sel.Count
		if want > len(names) {
			return nil, 0, fmt.Errorf("select.count %d exceeds the %d matching nodes", want, len(names))
		}
	case sel.Fraction > 0 && sel.Fraction <= 1:
		// The epsilon keeps 0.07 × 100 = 7.000000000000001 at 7 nodes.
		want = max(1, int(math.Ceil(sel.Fraction*float64(len(names))-1e-9)))
	default:
		return nil, 0, fmt.Errorf("select needs a count or a fraction in (0, 1], got fraction %v", sel.Fraction)
	}
	// A partial Fisher–Yates shuffle: the first want entries are a uniform
	// random sample, in random order.
	rng := rand.New(rand.NewPCG(uint64(seed), streamSelect))
	for i := range want {
		j := i + rng.IntN(len(names)-i)
		names[i], names[j] = names[j], names[i]
	}
	return names[:want], len(names), nil
}

// resolveWaveSize turns waves.size into a node count for selected nodes.
func resolveWaveSize(size string, selected int) (int, error) {
	if size == "" {
		return selected, nil
	}
	n, pct, err := profiles.ParseCountOrPercent(size)
	if err != nil {
		return 0, fmt.Errorf("waves.size %q: %w", size, err)
	}
	if pct {
		n = max(1, (selected*n+99)/100)
	}
	return min(n, selected), nil
}

// newSampler returns a function drawing successive downtimes from d with a
// PCG generator seeded from seed.
func newSampler(d profiles.Distribution, seed int64) (func() time.Duration, error) {
	rng := rand.New(rand.NewPCG(uint64(seed), streamDowntime))
	for _, v := range []struct {
		name string
		d    time.Duration
	}{{"value", d.Value.Duration}, {"min", d.Min.Duration}, {"max", d.Max.Duration}, {"mean", d.Mean.Duration}, {"stdDev", d.StdDev.Duration}} {
		if v.d < 0 {
			return nil, fmt.Errorf("%s %s is negative", v.name, v.d)
		}
	}
	lo, hi := d.Min.Duration, d.Max.Duration
	switch d.Type {
	case "", "fixed":
		v := d.Value.Duration
		return func() time.Duration { return v }, nil
	case "uniform":
		if hi < lo {
			return nil, fmt.Errorf("uniform max %s is below min %s", hi, lo)
		}
		return func() time.Duration {
			// Uint64N: hi-lo+1 can exceed MaxInt64 when hi-lo is MaxInt64.
			v := lo + time.Duration(rng.Uint64N(uint64(hi-lo)+1))
			return min(max(v.Round(downtimeResolution), lo), hi)
		}, nil
	case "normal":
		if hi != 0 && hi < lo {
			return nil, fmt.Errorf("normal max %s is below min %s", hi, lo)
		}
		mean, sd := float64(d.Mean.Duration), float64(d.StdDev.Duration)
		return func() time.Duration {
			// Clamp before converting: a float beyond int64 converts to
			// an unspecified value.
			f := min(max(mean+rng.NormFloat64()*sd, 0), maxNormal)
			v := time.Duration(math.Round(f)).Round(downtimeResolution)
			if lo != 0 {
				v = max(v, lo)
			}
			if hi != 0 {
				v = min(v, hi)
			}
			return v
		}, nil
	default:
		return nil, fmt.Errorf("unknown distribution type %q (want fixed, uniform or normal)", d.Type)
	}
}

// Play runs a schedule: it calls fn, each call in its own goroutine of an
// errgroup, at start+Offset of every restart as told by clk (restarts whose
// time has passed start at once). Restarts are started in start order
// whatever the order of sched. Once ctx is cancelled Play starts no further
// restart; it always waits for the running calls to return, and those get
// ctx so they can see the cancellation and bring their node back. Play
// returns nil when every restart was started, and an error wrapping the
// cancellation cause otherwise.
func Play(ctx context.Context, clk clock.Clock, sched []Restart, start time.Time, fn func(ctx context.Context, r Restart)) error {
	order := slices.Clone(sched)
	slices.SortStableFunc(order, func(a, b Restart) int {
		return cmp.Or(cmp.Compare(a.Offset, b.Offset), cmp.Compare(a.Index, b.Index))
	})
	var g errgroup.Group
	started := 0
	err := func() error {
		for _, r := range order {
			if wait := start.Add(r.Offset).Sub(clk.Now()); wait > 0 {
				t := clk.NewTimer(wait)
				select {
				case <-ctx.Done():
					t.Stop()
					return context.Cause(ctx)
				case <-t.C():
				}
			}
			// The timer and the cancellation can fire together; select
			// picks either, so look again.
			if err := ctx.Err(); err != nil {
				return context.Cause(ctx)
			}
			g.Go(func() error {
				fn(ctx, r)
				return nil
			})
			started++
		}
		return nil
	}()
	// fn reports its own failures (the restarts' outcomes); the group only
	// waits.
	_ = g.Wait()
	if err != nil {
		return fmt.Errorf("storm stopped after starting %d of %d restarts: %w", started, len(order), err)
	}
	return nil
}
