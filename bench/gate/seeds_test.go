package gate

import (
	"encoding/json"
	"testing"

	"github.com/stormbench/stormbench/bench/result"
)

// TestProfileRepetitionsForms: the repetitions a recorded profile asked for
// read the same from a count and from the mapping of repetitions.seeds.
func TestProfileRepetitionsForms(t *testing.T) {
	for raw, want := range map[string]int{
		`{"repetitions":5}`:                          5,
		`{"repetitions":{"count":5,"seeds":"vary"}}`: 5,
		`{}`: 0,
	} {
		r := &result.Result{Run: result.Run{Profile: json.RawMessage(raw)}}
		if got := profileRepetitions(r); got != want {
			t.Errorf("%s: %d repetitions, want %d", raw, got, want)
		}
	}
}
