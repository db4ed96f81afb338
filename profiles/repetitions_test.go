package profiles

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestRepetitionsForms: repetitions is a count, as in every profile and
// result written before the mapping, or a mapping {count, seeds}; the
// seeds mode defaults to fixed, and a fixed profile writes a count back.
func TestRepetitionsForms(t *testing.T) {
	const head = "apiVersion: stormbench.io/v1alpha1\nkind: StormProfile\nmetadata: {name: r}\nseed: 7\nfleet: {nodes: 10, podsPerNode: 2}\nstorm:\n  kind: kubelet\n  select: {count: 2}\n  downtime: {type: fixed, value: 3s}\n"
	tests := []struct {
		name, yaml string
		count      int
		mode       string
		json       string // how the resolved profile writes repetitions
		err        string // in the error, if any
	}{
		{"count", "repetitions: 5\n", 5, SeedsFixed, `"repetitions":5`, ""},
		{"absent", "", 1, SeedsFixed, `"repetitions":1`, ""},
		{"mapping, vary", "repetitions: {count: 5, seeds: vary}\n", 5, SeedsVary, `"repetitions":{"count":5,"seeds":"vary"}`, ""},
		{"mapping, fixed", "repetitions: {count: 3, seeds: fixed}\n", 3, SeedsFixed, `"repetitions":3`, ""},
		{"mapping without count", "repetitions: {seeds: vary}\n", 1, SeedsVary, `"repetitions":{"count":1,"seeds":"vary"}`, ""},
		{"unknown member", "repetitions: {count: 5, sedes: vary}\n", 0, "", "", "repetitions.sedes: Invalid value: unknown field"},
		{"unknown mode", "repetitions: {count: 5, seeds: random}\n", 0, "", "", `repetitions.seeds: Unsupported value: "random"`},
		{"count out of range", "repetitions: {count: 101}\n", 0, "", "", "repetitions: Invalid value: 101: must be between 1 and 100"},
		{"a string", "repetitions: five\n", 0, "", "", "repetitions: Invalid value: must be a count such as 5, or a mapping such as {count: 5, seeds: vary}"},
		{"a fraction", "repetitions: 2.5\n", 0, "", "", "repetitions: Invalid value: must be a count such as 5"},
		{"a list", "repetitions: [5]\n", 0, "", "", "repetitions: Invalid value: must be a count such as 5"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse("r.yaml", []byte(head+tc.yaml))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Repetitions.Count != tc.count || p.Repetitions.Mode() != tc.mode {
				t.Errorf("repetitions %+v (mode %s), want %d, %s", p.Repetitions, p.Repetitions.Mode(), tc.count, tc.mode)
			}
			b, err := json.Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), tc.json) {
				t.Errorf("resolved profile writes %s, want %s", b, tc.json)
			}
			// What is written reads back the same, as a profile (YAML)
			// and as a result records it (JSON, read by Decode).
			y, err := Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			back, err := Parse("back.yaml", y)
			if err != nil || back.Repetitions.Count != p.Repetitions.Count || back.Repetitions.Mode() != p.Repetitions.Mode() {
				t.Errorf("read back %+v, %v; want %+v", back.Repetitions, err, p.Repetitions)
			}
			rec, err := Decode("recorded", b)
			if err != nil || rec.Repetitions.Count != p.Repetitions.Count || rec.Repetitions.Mode() != p.Repetitions.Mode() {
				t.Errorf("json read back %+v, %v; want %+v", rec, err, p.Repetitions)
			}
		})
	}
}

// TestRepetitionsUnmarshalStrict: a result's reader of the recorded profile
// refuses an unknown member of the mapping too.
func TestRepetitionsUnmarshalStrict(t *testing.T) {
	var r Repetitions
	if err := json.Unmarshal([]byte(`{"count":2,"seed":3}`), &r); err == nil {
		t.Errorf("unknown member accepted: %+v", r)
	}
	if err := json.Unmarshal([]byte(`4`), &r); err != nil || r != (Repetitions{Count: 4}) {
		t.Errorf("a count: %+v, %v", r, err)
	}
}

// TestBlockSeed: block 0 keeps the profile's seed; the others are
// deterministic, distinct, non-negative, and unrelated for nearby seeds.
func TestBlockSeed(t *testing.T) {
	if got := BlockSeed(42, 0); got != 42 {
		t.Errorf("BlockSeed(42, 0) = %d, want 42", got)
	}
	seen := map[int64]bool{}
	for _, seed := range []int64{0, 1, 42, 43, -5, 1 << 62} {
		for b := range 20 {
			s := BlockSeed(seed, b)
			if s != BlockSeed(seed, b) {
				t.Fatalf("BlockSeed(%d, %d) is not deterministic", seed, b)
			}
			if b > 0 && s < 0 {
				t.Errorf("BlockSeed(%d, %d) = %d, negative", seed, b, s)
			}
			if b > 0 && seen[s] {
				t.Errorf("BlockSeed(%d, %d) = %d, seen before", seed, b, s)
			}
			seen[s] = true
		}
	}
	// A pinned value: a change of the mixing would change every vary run's
	// schedules, which results compare across.
	if got := BlockSeed(42, 1); got != 6839728766377637706 {
		t.Errorf("BlockSeed(42, 1) = %d, want 6839728766377637706", got)
	}
}
