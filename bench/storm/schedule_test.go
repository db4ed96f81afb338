package storm

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/stormbench/stormbench/profiles"
)

func dur(d time.Duration) metav1.Duration { return metav1.Duration{Duration: d} }

// fleet returns n nodes named kn-000.. with a zone label cycling a, b, c and
// every fifth node labelled role=infra.
func fleet(n int) []NodeInfo {
	nodes := make([]NodeInfo, n)
	for i := range nodes {
		l := map[string]string{"type": "kwok", "zone": string(rune('a' + i%3))}
		if i%5 == 0 {
			l["role"] = "infra"
		}
		nodes[i] = NodeInfo{Name: fmt.Sprintf("kn-%03d", i), Labels: l}
	}
	return nodes
}

func shuffled(nodes []NodeInfo, seed uint64) []NodeInfo {
	out := slices.Clone(nodes)
	rand.New(rand.NewPCG(seed, seed)).Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

func mustSchedule(t *testing.T, s *profiles.Storm, seed int64, nodes []NodeInfo) *Schedule {
	t.Helper()
	sched, err := NewSchedule(s, seed, nodes)
	if err != nil {
		t.Fatalf("NewSchedule: %v", err)
	}
	return sched
}

func names(rs []Restart) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Node
	}
	return out
}

// checkInvariants checks what every schedule must satisfy.
func checkInvariants(t *testing.T, sched *Schedule) {
	t.Helper()
	seen := map[string]bool{}
	for i, r := range sched.Restarts {
		if r.Index != i {
			t.Errorf("restart %d has Index %d", i, r.Index)
		}
		if seen[r.Node] {
			t.Errorf("node %s restarts twice", r.Node)
		}
		seen[r.Node] = true
		if i > 0 && r.Offset < sched.Restarts[i-1].Offset {
			t.Errorf("restart %d starts at %s, before restart %d at %s", i, r.Offset, i-1, sched.Restarts[i-1].Offset)
		}
		if r.Wave < 0 || r.Wave >= sched.Waves {
			t.Errorf("restart %d is in wave %d of %d", i, r.Wave, sched.Waves)
		}
	}
}

func TestNewScheduleDeterministic(t *testing.T) {
	storm := &profiles.Storm{
		Kind:         profiles.StormKubelet,
		Select:       profiles.Selection{Fraction: 0.3, LabelSelector: "type=kwok"},
		Waves:        profiles.Waves{Size: "10%", Interval: dur(5 * time.Second), Concurrency: 7},
		Downtime:     profiles.Distribution{Type: "normal", Mean: dur(20 * time.Second), StdDev: dur(5 * time.Second), Min: dur(5 * time.Second)},
		InitDuration: dur(2 * time.Second),
	}
	nodes := fleet(200)
	want := mustSchedule(t, storm, 42, nodes)
	checkInvariants(t, want)
	if len(want.Restarts) != 60 {
		t.Fatalf("selected %d nodes, want 60 (30%% of 200)", len(want.Restarts))
	}
	for _, seed := range []uint64{1, 2, 3} {
		got := mustSchedule(t, storm, 42, shuffled(nodes, seed))
		if !reflect.DeepEqual(got, want) {
			t.Errorf("input order %d changed the schedule:\n got %v\nwant %v", seed, got.Restarts[:5], want.Restarts[:5])
		}
	}
	// The input slice is not reordered.
	in := shuffled(nodes, 9)
	before := slices.Clone(in)
	mustSchedule(t, storm, 42, in)
	if !reflect.DeepEqual(in, before) {
		t.Error("NewSchedule reordered its input")
	}
}

// TestNewSchedulePinned pins the quick profile's schedule over a known fleet.
// The same seed must give the same nodes, offsets and downtimes in every
// stormbench version, so that results stay comparable; a change here breaks
// that promise and needs a note in the release.
func TestNewSchedulePinned(t *testing.T) {
	p, err := profiles.Load("quick")
	if err != nil {
		t.Fatal(err)
	}
	sched := mustSchedule(t, p.Storm, p.Seed, fleet(p.Fleet.Nodes))
	var b strings.Builder
	for _, r := range sched.Restarts {
		fmt.Fprintf(&b, "%d %s wave=%d offset=%s downtime=%s\n", r.Index, r.Node, r.Wave, r.Offset, r.Downtime)
	}
	want := pinnedQuick
	if got := b.String(); got != want {
		t.Errorf("quick schedule changed:\n%s\nwant:\n%s", got, want)
	}
	if sched.Waves != 2 || sched.WaveSize != 5 || sched.Candidates != 50 || sched.Seed != 42 {
		t.Errorf("Waves, WaveSize, Candidates, Seed = %d, %d, %d, %d; want 2, 5, 50, 42", sched.Waves, sched.WaveSize, sched.Candidates, sched.Seed)
	}
}

const pinnedQuick = `0 kn-009 wave=0 offset=0s downtime=7.05s
1 kn-005 wave=0 offset=0s downtime=3.773s
2 kn-020 wave=0 offset=0s downtime=5.443s
3 kn-000 wave=0 offset=0s downtime=5.962s
4 kn-041 wave=0 offset=0s downtime=5.137s
5 kn-032 wave=1 offset=5s downtime=3.604s
6 kn-023 wave=1 offset=5s downtime=3.421s
7 kn-013 wave=1 offset=5s downtime=4.164s
8 kn-027 wave=1 offset=5s downtime=7.326s
9 kn-045 wave=1 offset=5s downtime=3.358s
`

func TestNewScheduleSeedChangesSelection(t *testing.T) {
	storm := &profiles.Storm{
		Select:   profiles.Selection{Count: 10},
		Downtime: profiles.Distribution{Type: "uniform", Min: dur(time.Second), Max: dur(time.Minute)},
	}
	nodes := fleet(100)
	a := mustSchedule(t, storm, 1, nodes)
	b := mustSchedule(t, storm, 2, nodes)
	sa, sb := names(a.Restarts), names(b.Restarts)
	slices.Sort(sa)
	slices.Sort(sb)
	if slices.Equal(sa, sb) {
		t.Errorf("seeds 1 and 2 selected the same nodes %v", sa)
	}
	var da, db []time.Duration
	for i := range a.Restarts {
		da = append(da, a.Restarts[i].Downtime)
		db = append(db, b.Restarts[i].Downtime)
	}
	if slices.Equal(da, db) {
		t.Errorf("seeds 1 and 2 drew the same downtimes %v", da)
	}
}

func TestNewScheduleSelectionSize(t *testing.T) {
	for _, tc := range []struct {
		name  string
		sel   profiles.Selection
		nodes int
		want  int
	}{
		{"count", profiles.Selection{Count: 3}, 10, 3},
		{"count all", profiles.Selection{Count: 10}, 10, 10},
		{"fraction exact", profiles.Selection{Fraction: 0.2}, 50, 10},
		{"fraction float error", profiles.Selection{Fraction: 0.07}, 100, 7},
		{"fraction rounds up", profiles.Selection{Fraction: 0.25}, 10, 3},
		{"fraction at least one", profiles.Selection{Fraction: 0.001}, 10, 1},
		{"fraction one", profiles.Selection{Fraction: 1}, 37, 37},
		{"fraction of matching", profiles.Selection{Fraction: 0.5, LabelSelector: "role=infra"}, 100, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sched := mustSchedule(t, &profiles.Storm{Select: tc.sel}, 7, fleet(tc.nodes))
			checkInvariants(t, sched)
			if len(sched.Restarts) != tc.want {
				t.Errorf("selected %d nodes, want %d", len(sched.Restarts), tc.want)
			}
		})
	}
}

func TestNewScheduleSelectionIsUniform(t *testing.T) {
	// Over many seeds every node should be chosen about equally often;
	// a biased shuffle (say, one that favours the first names) shows here.
	const nodes, pick, seeds = 20, 5, 4000
	counts := make(map[string]int)
	for seed := range int64(seeds) {
		for _, r := range mustSchedule(t, &profiles.Storm{Select: profiles.Selection{Count: pick}}, seed, fleet(nodes)).Restarts {
			counts[r.Node]++
		}
	}
	want := float64(seeds*pick) / nodes // 1000
	for n, c := range counts {
		if math.Abs(float64(c)-want) > 0.1*want {
			t.Errorf("node %s chosen %d times over %d seeds, want about %.0f", n, c, seeds, want)
		}
	}
}

func TestNewScheduleWaves(t *testing.T) {
	const interval = 5 * time.Second
	for _, tc := range []struct {
		name       string
		count      int
		size       string
		wantSizes  []int // nodes per wave
		wantWaveSz int
	}{
		{"all at once", 10, "", []int{10}, 10},
		{"count", 10, "3", []int{3, 3, 3, 1}, 3},
		{"count divides", 9, "3", []int{3, 3, 3}, 3},
		{"percent rounds up", 10, "25%", []int{3, 3, 3, 1}, 3},
		{"percent half", 8, "50%", []int{4, 4}, 4},
		{"percent at least one", 10, "1%", []int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 1},
		{"hundred percent", 6, "100%", []int{6}, 6},
		{"larger than selection", 4, "100", []int{4}, 4},
		{"one per wave", 3, "1", []int{1, 1, 1}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			storm := &profiles.Storm{
				Select:   profiles.Selection{Count: tc.count},
				Waves:    profiles.Waves{Size: tc.size, Interval: dur(interval)},
				Downtime: profiles.Distribution{Type: "fixed", Value: dur(time.Minute)},
			}
			sched := mustSchedule(t, storm, 3, fleet(20))
			checkInvariants(t, sched)
			if sched.Waves != len(tc.wantSizes) || sched.WaveSize != tc.wantWaveSz {
				t.Errorf("Waves, WaveSize = %d, %d; want %d, %d", sched.Waves, sched.WaveSize, len(tc.wantSizes), tc.wantWaveSz)
			}
			sizes := make([]int, sched.Waves)
			for _, r := range sched.Restarts {
				sizes[r.Wave]++
				if want := time.Duration(r.Wave) * interval; r.Offset != want {
					t.Errorf("%s in wave %d starts at %s, want %s", r.Node, r.Wave, r.Offset, want)
				}
			}
			if !slices.Equal(sizes, tc.wantSizes) {
				t.Errorf("wave sizes %v, want %v", sizes, tc.wantSizes)
			}
			var wantStarts []time.Duration
			for k := range tc.wantSizes {
				wantStarts = append(wantStarts, time.Duration(k)*interval)
			}
			if !slices.Equal(sched.WaveStarts, wantStarts) {
				t.Errorf("WaveStarts = %v, want %v", sched.WaveStarts, wantStarts)
			}
			wantEnd := time.Duration(len(tc.wantSizes)-1)*interval + time.Minute
			if sched.End != wantEnd {
				t.Errorf("End = %s, want %s", sched.End, wantEnd)
			}
		})
	}
}

func TestNewScheduleConcurrencyExact(t *testing.T) {
	for _, tc := range []struct {
		name        string
		waves       profiles.Waves
		downtime    time.Duration
		init        time.Duration
		wantOffsets []time.Duration
		wantWaves   []int
		wantEnd     time.Duration
	}{
		{
			name:        "all at once, two at a time",
			waves:       profiles.Waves{Concurrency: 2},
			downtime:    10 * time.Second,
			wantOffsets: []time.Duration{0, 0, 10 * time.Second, 10 * time.Second, 20 * time.Second},
			wantWaves:   []int{0, 0, 0, 0, 0},
			wantEnd:     30 * time.Second,
		},
		{
			name:        "init duration counts as busy",
			waves:       profiles.Waves{Concurrency: 4},
			downtime:    3 * time.Second,
			init:        2 * time.Second,
			wantOffsets: []time.Duration{0, 0, 0, 0, 5 * time.Second},
			wantWaves:   []int{0, 0, 0, 0, 0},
			wantEnd:     10 * time.Second,
		},
		{
			name:        "limit delays the next wave",
			waves:       profiles.Waves{Size: "2", Interval: dur(5 * time.Second), Concurrency: 1},
			downtime:    3 * time.Second,
			init:        time.Second,
			wantOffsets: []time.Duration{0, 4 * time.Second, 8 * time.Second, 12 * time.Second, 16 * time.Second},
			wantWaves:   []int{0, 0, 1, 1, 2},
			wantEnd:     20 * time.Second,
		},
		{
			name:        "limit above wave size changes nothing",
			waves:       profiles.Waves{Size: "2", Interval: dur(5 * time.Second), Concurrency: 3},
			downtime:    3 * time.Second,
			wantOffsets: []time.Duration{0, 0, 5 * time.Second, 5 * time.Second, 10 * time.Second},
			wantWaves:   []int{0, 0, 1, 1, 2},
			wantEnd:     13 * time.Second,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			storm := &profiles.Storm{
				Select:       profiles.Selection{Count: 5},
				Waves:        tc.waves,
				Downtime:     profiles.Distribution{Type: "fixed", Value: dur(tc.downtime)},
				InitDuration: dur(tc.init),
			}
			sched := mustSchedule(t, storm, 1, fleet(5))
			checkInvariants(t, sched)
			var offsets []time.Duration
			var waves []int
			for _, r := range sched.Restarts {
				offsets = append(offsets, r.Offset)
				waves = append(waves, r.Wave)
			}
			if !slices.Equal(offsets, tc.wantOffsets) || !slices.Equal(waves, tc.wantWaves) {
				t.Errorf("offsets %v waves %v; want %v %v", offsets, waves, tc.wantOffsets, tc.wantWaves)
			}
			if sched.End != tc.wantEnd {
				t.Errorf("End = %s, want %s", sched.End, tc.wantEnd)
			}
		})
	}
}

func TestNewScheduleConcurrencyNeverExceeded(t *testing.T) {
	const initDuration = 2 * time.Second
	for _, limit := range []int{1, 3, 10, 40} {
		for _, size := range []string{"", "7", "30%"} {
			t.Run(fmt.Sprintf("limit=%d/size=%q", limit, size), func(t *testing.T) {
				storm := &profiles.Storm{
					Select:       profiles.Selection{Fraction: 0.5},
					Waves:        profiles.Waves{Size: size, Interval: dur(3 * time.Second), Concurrency: limit},
					Downtime:     profiles.Distribution{Type: "uniform", Min: dur(time.Second), Max: dur(20 * time.Second)},
					InitDuration: dur(initDuration),
				}
				sched := mustSchedule(t, storm, int64(limit), fleet(120))
				checkInvariants(t, sched)
				busyAt := func(at time.Duration) int {
					n := 0
					for _, r := range sched.Restarts {
						if r.Offset <= at && at < r.Offset+r.Downtime+initDuration {
							n++
						}
					}
					return n
				}
				peak := 0
				// The busy count only rises at a start, so checking every
				// start checks every instant.
				for _, r := range sched.Restarts {
					n := busyAt(r.Offset)
					peak = max(peak, n)
					if n > limit {
						t.Fatalf("%d nodes busy at %s, limit %d", n, r.Offset, limit)
					}
					if wave := time.Duration(r.Wave) * storm.Waves.Interval.Duration; r.Offset < wave {
						t.Errorf("%s starts at %s, before its wave at %s", r.Node, r.Offset, wave)
					}
				}
				// The limit is a bound, not a target, but when a wave alone
				// can fill it, it is reached.
				if limit <= sched.WaveSize && peak != limit {
					t.Errorf("peak concurrency %d, want the limit %d", peak, limit)
				}
			})
		}
	}
}

func TestDowntimeDistributions(t *testing.T) {
	const draws = 100000
	s := time.Second
	for _, tc := range []struct {
		name             string
		d                profiles.Distribution
		lo, hi           time.Duration
		wantMean, tolMan time.Duration
		wantSD           time.Duration // 0: not checked
	}{
		{name: "fixed", d: profiles.Distribution{Type: "fixed", Value: dur(7 * s)}, lo: 7 * s, hi: 7 * s, wantMean: 7 * s},
		{name: "default type is fixed", d: profiles.Distribution{Value: dur(3 * s)}, lo: 3 * s, hi: 3 * s, wantMean: 3 * s},
		{name: "uniform", d: profiles.Distribution{Type: "uniform", Min: dur(3 * s), Max: dur(8 * s)}, lo: 3 * s, hi: 8 * s, wantMean: 5500 * time.Millisecond, tolMan: 50 * time.Millisecond,
			// The standard deviation of U(a, b) is (b-a)/√12.
			wantSD: time.Duration(float64(5*s) / math.Sqrt(12))},
		{name: "uniform degenerate", d: profiles.Distribution{Type: "uniform", Min: dur(4 * s), Max: dur(4 * s)}, lo: 4 * s, hi: 4 * s, wantMean: 4 * s},
		{name: "normal", d: profiles.Distribution{Type: "normal", Mean: dur(30 * s), StdDev: dur(5 * s)}, lo: 0, hi: time.Hour, wantMean: 30 * s, tolMan: 100 * time.Millisecond, wantSD: 5 * s},
		{name: "normal clamped", d: profiles.Distribution{Type: "normal", Mean: dur(30 * s), StdDev: dur(10 * s), Min: dur(25 * s), Max: dur(35 * s)}, lo: 25 * s, hi: 35 * s,
			// Symmetric clamping keeps the mean.
			wantMean: 30 * s, tolMan: 100 * time.Millisecond},
		{name: "normal never negative", d: profiles.Distribution{Type: "normal", Mean: dur(s), StdDev: dur(10 * s)}, lo: 0, hi: time.Hour,
			// E[max(X, 0)] for X ~ N(μ, σ) is μΦ(μ/σ) + σφ(μ/σ).
			wantMean: time.Duration(float64(s)*0.5398278 + float64(10*s)*0.3969525), tolMan: 100 * time.Millisecond},
		{name: "normal zero stdDev", d: profiles.Distribution{Type: "normal", Mean: dur(12 * s)}, lo: 12 * s, hi: 12 * s, wantMean: 12 * s},
	} {
		t.Run(tc.name, func(t *testing.T) {
			draw, err := newSampler(tc.d, 1)
			if err != nil {
				t.Fatal(err)
			}
			var sum, sumSq float64
			for range draws {
				v := draw()
				if v < tc.lo || v > tc.hi {
					t.Fatalf("drew %s, outside [%s, %s]", v, tc.lo, tc.hi)
				}
				if v%downtimeResolution != 0 {
					t.Fatalf("drew %s, finer than %s", v, downtimeResolution)
				}
				sum += float64(v)
				sumSq += float64(v) * float64(v)
			}
			mean := sum / draws
			sd := math.Sqrt(sumSq/draws - mean*mean)
			if math.Abs(mean-float64(tc.wantMean)) > float64(tc.tolMan) {
				t.Errorf("mean %s, want %s ± %s", time.Duration(mean), tc.wantMean, tc.tolMan)
			}
			if tc.wantSD != 0 && math.Abs(sd-float64(tc.wantSD)) > 0.02*float64(tc.wantSD) {
				t.Errorf("standard deviation %s, want %s ± 2%%", time.Duration(sd), tc.wantSD)
			}
		})
	}
}

func TestNewScheduleDowntimesWithinBounds(t *testing.T) {
	storm := &profiles.Storm{
		Select:   profiles.Selection{Fraction: 1},
		Downtime: profiles.Distribution{Type: "normal", Mean: dur(10 * time.Second), StdDev: dur(20 * time.Second), Min: dur(2 * time.Second), Max: dur(15 * time.Second)},
	}
	sched := mustSchedule(t, storm, 5, fleet(500))
	var atMin, atMax int
	for _, r := range sched.Restarts {
		if r.Downtime < 2*time.Second || r.Downtime > 15*time.Second {
			t.Fatalf("%s: downtime %s outside [2s, 15s]", r.Node, r.Downtime)
		}
		switch r.Downtime {
		case 2 * time.Second:
			atMin++
		case 15 * time.Second:
			atMax++
		}
	}
	// With σ twice the width of the window, many draws land on each bound.
	if atMin == 0 || atMax == 0 {
		t.Errorf("%d draws clamped to min and %d to max, want some of each", atMin, atMax)
	}
}

func TestNewScheduleLabelSelector(t *testing.T) {
	nodes := fleet(60)
	for _, tc := range []struct {
		selector string
		match    func(NodeInfo) bool
	}{
		{"zone=a", func(n NodeInfo) bool { return n.Labels["zone"] == "a" }},
		{"zone in (a,b),role!=infra", func(n NodeInfo) bool { return n.Labels["zone"] != "c" && n.Labels["role"] != "infra" }},
		{"!role", func(n NodeInfo) bool { return n.Labels["role"] == "" }},
		{"", func(NodeInfo) bool { return true }},
	} {
		t.Run(tc.selector, func(t *testing.T) {
			var want []string
			for _, n := range nodes {
				if tc.match(n) {
					want = append(want, n.Name)
				}
			}
			storm := &profiles.Storm{Select: profiles.Selection{Fraction: 1, LabelSelector: tc.selector}}
			sched := mustSchedule(t, storm, 11, nodes)
			got := names(sched.Restarts)
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("selected %v, want %v", got, want)
			}
			if sched.Candidates != len(want) {
				t.Errorf("Candidates = %d, want %d", sched.Candidates, len(want))
			}
			// A partial selection draws only from matching nodes.
			part := mustSchedule(t, &profiles.Storm{Select: profiles.Selection{Fraction: 0.3, LabelSelector: tc.selector}}, 11, nodes)
			for _, r := range part.Restarts {
				if !slices.Contains(want, r.Node) {
					t.Errorf("selected %s, which does not match %q", r.Node, tc.selector)
				}
			}
		})
	}
}

func TestNewScheduleErrors(t *testing.T) {
	ok := profiles.Storm{Select: profiles.Selection{Count: 2}}
	for _, tc := range []struct {
		name  string
		storm *profiles.Storm
		nodes []NodeInfo
		want  string
	}{
		{"no storm", nil, fleet(3), "no storm section"},
		{"no nodes", &ok, nil, `no node of 0 matches`},
		{"nothing matches", &profiles.Storm{Select: profiles.Selection{Count: 1, LabelSelector: "zone=x"}}, fleet(3), `no node of 3 matches select.labelSelector "zone=x"`},
		{"count above candidates", &profiles.Storm{Select: profiles.Selection{Count: 3, LabelSelector: "role=infra"}}, fleet(6), "select.count 3 exceeds the 2 matching nodes"},
		{"duplicate node", &ok, append(fleet(3), NodeInfo{Name: "kn-001"}), `node "kn-001" is listed twice`},
		{"unnamed node", &ok, []NodeInfo{{Name: "a"}, {}}, "a node has no name"},
		{"bad selector", &profiles.Storm{Select: profiles.Selection{Count: 1, LabelSelector: "zone in (a"}}, fleet(3), "parsing select.labelSelector"},
		{"count and fraction", &profiles.Storm{Select: profiles.Selection{Count: 1, Fraction: 0.5}}, fleet(3), "both count and fraction"},
		{"neither count nor fraction", &profiles.Storm{}, fleet(3), "needs a count or a fraction"},
		{"fraction above one", &profiles.Storm{Select: profiles.Selection{Fraction: 1.5}}, fleet(3), "needs a count or a fraction in (0, 1], got fraction 1.5"},
		{"negative count", &profiles.Storm{Select: profiles.Selection{Count: -1}}, fleet(3), "select.count -1 is negative"},
		{"bad wave size", &profiles.Storm{Select: ok.Select, Waves: profiles.Waves{Size: "0"}}, fleet(3), `waves.size "0": must be a positive count`},
		{"negative interval", &profiles.Storm{Select: ok.Select, Waves: profiles.Waves{Interval: dur(-time.Second)}}, fleet(3), "waves.interval -1s is negative"},
		{"negative concurrency", &profiles.Storm{Select: ok.Select, Waves: profiles.Waves{Concurrency: -1}}, fleet(3), "waves.concurrency -1 is negative"},
		{"negative init", &profiles.Storm{Select: ok.Select, InitDuration: dur(-time.Second)}, fleet(3), "initDuration -1s is negative"},
		{"unknown distribution", &profiles.Storm{Select: ok.Select, Downtime: profiles.Distribution{Type: "poisson"}}, fleet(3), `downtime: unknown distribution type "poisson"`},
		{"uniform inverted", &profiles.Storm{Select: ok.Select, Downtime: profiles.Distribution{Type: "uniform", Min: dur(2 * time.Second), Max: dur(time.Second)}}, fleet(3), "uniform max 1s is below min 2s"},
		{"negative downtime", &profiles.Storm{Select: ok.Select, Downtime: profiles.Distribution{Value: dur(-time.Second)}}, fleet(3), "downtime: value -1s is negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sched, err := NewSchedule(tc.storm, 1, tc.nodes)
			if err == nil {
				t.Fatalf("NewSchedule succeeded with %d restarts, want an error containing %q", len(sched.Restarts), tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "building storm schedule: ") {
				t.Errorf("error %q, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestShard(t *testing.T) {
	storm := &profiles.Storm{
		Select:   profiles.Selection{Count: 23},
		Waves:    profiles.Waves{Size: "5", Interval: dur(time.Second), Concurrency: 4},
		Downtime: profiles.Distribution{Type: "uniform", Min: dur(time.Second), Max: dur(9 * time.Second)},
	}
	sched := mustSchedule(t, storm, 99, fleet(40))
	for n := 1; n <= 8; n++ {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			owner := map[string]int{}
			for i := range n {
				shard := sched.Shard(i, n)
				if want := len(sched.Restarts) / n; len(shard) != want && len(shard) != want+1 {
					t.Errorf("shard %d of %d has %d restarts, want %d or %d", i, n, len(shard), want, want+1)
				}
				for k, r := range shard {
					if prev, dup := owner[r.Node]; dup {
						t.Errorf("%s is in shards %d and %d", r.Node, prev, i)
					}
					owner[r.Node] = i
					if r != sched.Restarts[r.Index] {
						t.Errorf("shard %d changed restart %v to %v", i, sched.Restarts[r.Index], r)
					}
					if k > 0 && r.Index < shard[k-1].Index {
						t.Errorf("shard %d is not in start order", i)
					}
				}
				if !reflect.DeepEqual(shard, sched.Shard(i, n)) {
					t.Errorf("shard %d of %d differs between calls", i, n)
				}
			}
			if len(owner) != len(sched.Restarts) {
				t.Errorf("shards hold %d restarts, the schedule %d", len(owner), len(sched.Restarts))
			}
		})
	}
	for _, bad := range [][2]int{{0, 0}, {-1, 2}, {2, 2}} {
		if got := sched.Shard(bad[0], bad[1]); got != nil {
			t.Errorf("Shard(%d, %d) = %v, want nil", bad[0], bad[1], got)
		}
	}
}

// player runs Play in the background over a fake clock and reports every
// call of fn with the fake time it happened at.
type player struct {
	clk   *clocktesting.FakeClock
	start time.Time
	calls chan call
	done  chan error
}

type call struct {
	r  Restart
	at time.Time
}

func newPlayer(ctx context.Context, t *testing.T, sched []Restart, start time.Time, fn func(ctx context.Context, r Restart)) *player {
	t.Helper()
	p := &player{
		clk:   clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)),
		start: start,
		calls: make(chan call, len(sched)),
		done:  make(chan error, 1),
	}
	if start.IsZero() {
		p.start = p.clk.Now()
	}
	go func() {
		p.done <- Play(ctx, p.clk, sched, p.start, func(ctx context.Context, r Restart) {
			p.calls <- call{r, p.clk.Now()}
			if fn != nil {
				fn(ctx, r)
			}
		})
	}()
	return p
}

// deadlock bounds waits in Play tests. It never decides a pass: it only
// turns a hang into a failure.
const deadlock = time.Minute

func (p *player) expectCalls(t *testing.T, want ...string) {
	t.Helper()
	var got []string
	for range want {
		select {
		case c := <-p.calls:
			got = append(got, c.r.Node)
			if wantAt := p.start.Add(c.r.Offset); !c.at.Equal(wantAt) {
				t.Errorf("%s started at %s, want %s", c.r.Node, c.at.Sub(p.start), c.r.Offset)
			}
		case <-time.After(deadlock):
			t.Fatalf("got calls %v, still waiting for %v", got, want)
		}
	}
	slices.Sort(got)
	want = slices.Sorted(slices.Values(want))
	if !slices.Equal(got, want) {
		t.Errorf("calls %v, want %v", got, want)
	}
}

// waitBlocked waits until Play waits on the fake clock, then checks that no
// call is pending beyond those expected.
func (p *player) waitBlocked(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(deadlock)
	for !p.clk.HasWaiters() {
		if time.Now().After(deadline) {
			t.Fatal("Play never waited on the clock")
		}
		time.Sleep(time.Millisecond)
	}
	select {
	case c := <-p.calls:
		t.Fatalf("unexpected call for %s at %s", c.r.Node, c.at.Sub(p.start))
	default:
	}
}

func (p *player) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-p.done:
		return err
	case <-time.After(deadlock):
		t.Fatal("Play did not return")
		return nil
	}
}

func TestPlayHonoursOffsets(t *testing.T) {
	s := time.Second
	sched := []Restart{
		{Node: "a", Offset: 0, Index: 0},
		{Node: "b", Offset: 0, Index: 1},
		{Node: "c", Offset: 5 * s, Index: 2},
		{Node: "e", Offset: 12 * s, Index: 4},
		{Node: "d", Offset: 5 * s, Index: 3}, // out of order on purpose
	}
	p := newPlayer(context.Background(), t, sched, time.Time{}, nil)
	p.expectCalls(t, "a", "b")
	p.waitBlocked(t)
	p.clk.Step(4 * s)
	p.waitBlocked(t) // 4 s: nothing yet
	p.clk.Step(s)
	p.expectCalls(t, "c", "d")
	p.waitBlocked(t)
	p.clk.Step(7*s - time.Nanosecond)
	p.waitBlocked(t)
	p.clk.Step(time.Nanosecond)
	p.expectCalls(t, "e")
	if err := p.wait(t); err != nil {
		t.Errorf("Play: %v", err)
	}
}

func TestPlayLateStart(t *testing.T) {
	// A start in the past starts overdue restarts at once and waits for
	// the rest.
	s := time.Second
	clkStart := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	sched := []Restart{{Node: "a", Offset: 0}, {Node: "b", Offset: 10 * s, Index: 1}, {Node: "c", Offset: 30 * s, Index: 2}}
	p := newPlayer(context.Background(), t, sched, clkStart.Add(-20*s), nil)
	for range 2 {
		select {
		case c := <-p.calls:
			if !c.at.Equal(clkStart) {
				t.Errorf("overdue %s started at %s, want at once", c.r.Node, c.at)
			}
		case <-time.After(deadlock):
			t.Fatal("overdue restarts did not start")
		}
	}
	p.waitBlocked(t)
	p.clk.Step(10 * s)
	p.expectCalls(t, "c")
	if err := p.wait(t); err != nil {
		t.Errorf("Play: %v", err)
	}
}

func TestPlayStopsOnCancel(t *testing.T) {
	s := time.Second
	sched := []Restart{{Node: "a"}, {Node: "b", Offset: 10 * s, Index: 1}, {Node: "c", Offset: 20 * s, Index: 2}}
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	release := make(chan struct{})
	var finished atomic.Bool
	var sawCancel atomic.Bool
	p := newPlayer(ctx, t, sched, time.Time{}, func(ctx context.Context, r Restart) {
		// A running restart sees the cancellation, then takes its time
		// to bring its node back.
		<-ctx.Done()
		sawCancel.Store(true)
		<-release
		finished.Store(true)
	})
	p.expectCalls(t, "a")
	p.waitBlocked(t)
	errInterrupt := errors.New("interrupted")
	cancel(errInterrupt)
	close(release)
	err := p.wait(t)
	if !finished.Load() || !sawCancel.Load() {
		t.Error("Play returned before the running restart finished")
	}
	if !errors.Is(err, errInterrupt) || !strings.Contains(err.Error(), "after starting 1 of 3 restarts") {
		t.Errorf("Play: %v, want the cancellation cause after starting 1 of 3 restarts", err)
	}
	p.clk.Step(time.Minute)
	select {
	case c := <-p.calls:
		t.Errorf("%s started after the cancellation", c.r.Node)
	default:
	}
}

func TestPlayCancelledBeforeStart(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var calls atomic.Int32
	clk := clocktesting.NewFakeClock(time.Now())
	err := Play(ctx, clk, []Restart{{Node: "a"}, {Node: "b", Offset: time.Second}}, clk.Now(), func(context.Context, Restart) { calls.Add(1) })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Play: %v, want context.Canceled", err)
	}
	if calls.Load() != 0 {
		t.Errorf("%d restarts started after cancellation", calls.Load())
	}
}

func TestPlayRunsConcurrently(t *testing.T) {
	// Restarts at the same offset overlap: each call gets its own goroutine,
	// so a slow restart does not hold back the next.
	const n = 50
	sched := make([]Restart, n)
	for i := range sched {
		sched[i] = Restart{Node: fmt.Sprint(i), Index: i}
	}
	var wg sync.WaitGroup
	wg.Add(n)
	clk := clocktesting.NewFakeClock(time.Now())
	done := make(chan error, 1)
	go func() {
		done <- Play(context.Background(), clk, sched, clk.Now(), func(context.Context, Restart) {
			wg.Done()
			wg.Wait() // returns only once all n calls are running together
		})
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Play: %v", err)
		}
	case <-time.After(deadlock):
		t.Fatal("restarts did not run concurrently")
	}
}

func TestDowntimeExtremesDoNotPanic(t *testing.T) {
	// Validation bounds profiles far below these, but NewSchedule is
	// exported and must not panic or wrap around on any input.
	for _, d := range []profiles.Distribution{
		{Type: "uniform", Max: dur(math.MaxInt64)},
		{Type: "normal", Mean: dur(math.MaxInt64), StdDev: dur(math.MaxInt64)},
		{Type: "normal", StdDev: dur(math.MaxInt64)},
	} {
		draw, err := newSampler(d, 1)
		if err != nil {
			t.Fatal(err)
		}
		for range 1000 {
			if v := draw(); v < 0 {
				t.Fatalf("%+v drew %s", d, v)
			}
		}
	}
}

func BenchmarkNewSchedule(b *testing.B) {
	storm := &profiles.Storm{
		Select:       profiles.Selection{Fraction: 0.5, LabelSelector: "type=kwok"},
		Waves:        profiles.Waves{Size: "5%", Interval: dur(10 * time.Second), Concurrency: 500},
		Downtime:     profiles.Distribution{Type: "normal", Mean: dur(20 * time.Second), StdDev: dur(5 * time.Second)},
		InitDuration: dur(2 * time.Second),
	}
	nodes := shuffled(fleet(100000), 1)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := NewSchedule(storm, 1, nodes); err != nil {
			b.Fatal(err)
		}
	}
}

func TestDeal(t *testing.T) {
	names := []string{"n3", "n1", "n2", "n4", "n5"}
	if got := Deal(slices.Clone(names), 0, 1); !slices.Equal(got, []string{"n1", "n2", "n3", "n4", "n5"}) {
		t.Errorf("one shard: %v", got)
	}
	var all []string
	for i := range 2 {
		all = append(all, Deal(slices.Clone(names), i, 2)...)
	}
	slices.Sort(all)
	if !slices.Equal(all, []string{"n1", "n2", "n3", "n4", "n5"}) {
		t.Errorf("two shards together hold %v", all)
	}
}
