package result_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stormbench/stormbench/bench/result"
)

// TestCommittedResults decodes every result document committed under
// results/ (a document with a "kind", such as a calibration or
// scripts/reach's results/host/reach.json, is another kind): each must
// validate, carry no merge marker, and encode and decode
// back to the same values, so that a schema change cannot silently alter
// what the committed runs say.
func TestCommittedResults(t *testing.T) {
	var files []string
	for _, pattern := range []string{"../../results/baselines/*.json", "../../results/aa/*.json", "../../results/scale/*.json", "../../results/host/*.json"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 2 {
		t.Fatalf("found %d committed result files, want the baseline and the A/A check at least", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var doc struct {
				Kind string `json:"kind"`
			}
			if json.Unmarshal(data, &doc) == nil && doc.Kind != "" {
				t.Skipf("a %s, not a run's result (scripts/figures reads it)", doc.Kind)
			}
			r, err := result.Decode(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Run.MergedFrom) != 0 {
				t.Errorf("merge marker: mergedFrom %v", r.Run.MergedFrom)
			}
			var first, second bytes.Buffer
			if err := result.Encode(&first, r); err != nil {
				t.Fatal(err)
			}
			again, err := result.Decode(bytes.NewReader(first.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			if err := result.Encode(&second, again); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(first.Bytes(), second.Bytes()) {
				t.Error("encode(decode(encode(decode(file)))) differs from encode(decode(file))")
			}
		})
	}
}
