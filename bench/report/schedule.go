package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/stormbench/stormbench/bench/result"
)

// orderNote says in what order the blocks of a run's storms ran, and
// whether the blocks were shuffled, read from the recorded order itself so
// that it cannot claim a shuffle that did not happen: a sweep keeps its
// wave sizes growing in every block (bench's blockOrder). It is empty for
// a single block.
func orderNote(r *result.Result) string {
	order := r.Run.Order
	if len(order) < 2 {
		return ""
	}
	var blocks []string
	same := true
	for _, b := range order {
		blocks = append(blocks, strings.Join(b, " "))
		same = same && slices.Equal(b, order[0])
	}
	how := "shuffled by the seed"
	switch {
	case same && len(order[0]) == 1:
		return fmt.Sprintf("order: %d blocks of one storm each: %s", len(order), strings.Join(blocks, " | "))
	case same && len(Sweep(r)) > 0:
		how = "in the same order in every block, not shuffled (a sweep keeps its wave sizes growing)"
	case same:
		how = "in the same order in every block (as the seed's shuffle drew them)"
	}
	return fmt.Sprintf("order: %d blocks, every variant once per block, %s: %s", len(order), how, strings.Join(blocks, " | "))
}

// scheduleNote says what the intervals of a run's repetitions cover. With
// one schedule replayed in every block (repetitions.seeds: fixed, and every
// file written before the seeds were recorded) they cover run-to-run noise
// only; with a schedule per block (vary), which nodes restart when as well.
// It is empty for a single block.
func scheduleNote(r *result.Result) string {
	if len(r.Run.Order) < 2 {
		return ""
	}
	if r.Run.Seeds.Vary() {
		return fmt.Sprintf("schedules: each block its own (repetitions.seeds: vary, %d seeds derived from seed %d), so the intervals cover run-to-run noise and the schedule", len(r.Run.Seeds.Blocks), r.Run.Seed)
	}
	return fmt.Sprintf("schedules: one, seed %d's, replayed in every block, so the intervals cover run-to-run noise only, one schedule (repetitions.seeds: vary covers the schedule too)", r.Run.Seed)
}
