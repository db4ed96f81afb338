package report

import (
	"strings"
	"testing"

	"github.com/stormbench/stormbench/bench/compare"
	"github.com/stormbench/stormbench/bench/result"
)

// TestOrderAndScheduleNotes: the order note says "shuffled" only of blocks
// that differ, and says that a sweep does not shuffle; the schedule note
// says what the intervals cover.
func TestOrderAndScheduleNotes(t *testing.T) {
	sweep := []string{"legacy/wave=50", "legacy/wave=100", "preserve/wave=50", "preserve/wave=100"}
	runs := func(names ...string) []result.VariantRun {
		var vs []result.VariantRun
		for _, n := range names {
			vs = append(vs, result.VariantRun{Variant: n, Complete: true})
		}
		return vs
	}
	tests := []struct {
		name            string
		order           [][]string
		variants        []result.VariantRun
		seeds           *result.Seeds
		order1, sched1  string // in the notes; "" for no note
		notOrder, notSc string // not in the notes
	}{{
		name:     "A/B shuffled, fixed",
		order:    [][]string{{"legacy", "preserve"}, {"preserve", "legacy"}, {"legacy", "preserve"}},
		variants: runs("legacy", "preserve"),
		seeds:    &result.Seeds{Mode: "fixed"},
		order1:   "order: 3 blocks, every variant once per block, shuffled by the seed: legacy preserve | preserve legacy | legacy preserve",
		sched1:   "schedules: one, seed 42's, replayed in every block, so the intervals cover run-to-run noise only, one schedule",
	}, {
		name:     "a file before the seeds were recorded",
		order:    [][]string{{"legacy", "preserve"}, {"preserve", "legacy"}},
		variants: runs("legacy", "preserve"),
		order1:   "shuffled by the seed",
		sched1:   "run-to-run noise only, one schedule",
	}, {
		name:     "sweep",
		order:    [][]string{sweep, sweep, sweep},
		variants: runs(sweep...),
		order1:   "order: 3 blocks, every variant once per block, in the same order in every block, not shuffled (a sweep keeps its wave sizes growing)",
		notOrder: "shuffled by",
		sched1:   "noise only",
	}, {
		name:     "vary",
		order:    [][]string{{"legacy-a", "legacy-b"}, {"legacy-b", "legacy-a"}},
		variants: runs("legacy-a", "legacy-b"),
		seeds:    &result.Seeds{Mode: "vary", Blocks: []int64{42, 6839728766377637706}},
		order1:   "shuffled by the seed",
		sched1:   "schedules: each block its own (repetitions.seeds: vary, 2 seeds derived from seed 42), so the intervals cover run-to-run noise and the schedule",
		notSc:    "noise only",
	}, {
		name:     "one variant",
		order:    [][]string{{"legacy"}, {"legacy"}},
		variants: runs("legacy"),
		seeds:    &result.Seeds{Mode: "vary", Blocks: []int64{42, 6839728766377637706}},
		order1:   "order: 2 blocks of one storm each: legacy | legacy",
		notOrder: "shuffle",
		sched1:   "noise and the schedule",
	}, {
		name:     "one block",
		order:    [][]string{{"legacy", "preserve"}},
		variants: runs("legacy", "preserve"),
		seeds:    &result.Seeds{Mode: "vary", Blocks: []int64{42}},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &result.Result{Run: result.Run{Seed: 42, Order: tc.order, Seeds: tc.seeds}, Variants: tc.variants}
			o, s := orderNote(r), scheduleNote(r)
			if (tc.order1 == "") != (o == "") || !strings.Contains(o, tc.order1) {
				t.Errorf("order note %q, want one with %q", o, tc.order1)
			}
			if (tc.sched1 == "") != (s == "") || !strings.Contains(s, tc.sched1) {
				t.Errorf("schedule note %q, want one with %q", s, tc.sched1)
			}
			if tc.notOrder != "" && strings.Contains(o, tc.notOrder) {
				t.Errorf("order note %q says %q", o, tc.notOrder)
			}
			if tc.notSc != "" && strings.Contains(s, tc.notSc) {
				t.Errorf("schedule note %q says %q", s, tc.notSc)
			}
			// The notes travel in the summary's and the report's
			// isolation notes.
			all := strings.Join(isolationNotes(r), "\n")
			if !strings.Contains(all, o) || !strings.Contains(all, s) {
				t.Errorf("isolation notes %q lack the order or schedule note", all)
			}
		})
	}
}

// TestDeltaClass: a rise reads worse however it is written (+12%, a factor,
// up from 0), a fall better, "~" the same; too few runs mute the colour.
func TestDeltaClass(t *testing.T) {
	for _, tc := range []struct {
		d    *compare.Delta
		want string
	}{
		{nil, "same"},
		{&compare.Delta{Text: "~"}, "same"},
		{&compare.Delta{Text: "+12.0%"}, "worse"},
		{&compare.Delta{Text: "×13.2"}, "worse"},
		{&compare.Delta{Text: "up from 0"}, "worse"},
		{&compare.Delta{Text: "-55.0%"}, "better"},
		{&compare.Delta{Text: "down from 0"}, "better"},
		{&compare.Delta{Text: "up from 0", TooFew: true}, "worse unsure"},
	} {
		if got := deltaClass(tc.d); got != tc.want {
			t.Errorf("deltaClass(%+v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}
