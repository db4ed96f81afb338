package result_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/stormbench/stormbench/bench/result"
)

// TestCommittedResults decodes every result document committed under
// results/ (a document with a "kind", such as a calibration or
// scripts/reach's results/host/reach.json, is another kind): each must
// validate, carry no merge marker of either schema, and encode and decode
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
			if len(r.Run.MergedFrom) != 0 || r.Run.Cluster.Settings.Flags["stormbench"] != nil {
				t.Errorf("merge marker: mergedFrom %v, flags %v", r.Run.MergedFrom, r.Run.Cluster.Settings.Flags)
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

// A schema 1 or 2 document marked its merge with a component flag; it
// decodes to Run.MergedFrom, and the flag is gone. In a schema 3 document
// the same flag is just a flag.
func TestDecodeLegacyMergeMarker(t *testing.T) {
	doc := func(version int, flags string) string {
		return `{"schemaVersion":` + strconv.Itoa(version) + `,"complete":true,` +
			`"run":{"id":"r","toolVersion":"v0","start":"2026-03-01T12:00:00Z","end":"2026-03-01T12:10:00Z",` +
			`"cluster":{"embedded":true,"settings":{"nodeMonitorGracePeriod":"50s","nodeLeaseDuration":"40s","nodeStatusUpdateFrequency":"10s","endpointSliceUpdatesBatchPeriod":"0s",` +
			`"flags":` + flags + `}},"fleet":{"nodes":1,"pods":1,"services":1},"seed":1},"variants":[]}`
	}
	tests := []struct {
		name       string
		doc        string
		mergedFrom []string
		flags      map[string]map[string]string
		err        string
	}{
		{name: "schema 2 merged", doc: doc(2, `{"stormbench":{"merged-shards":"2"}}`), mergedFrom: []string{"shard 0", "shard 1"}},
		{name: "schema 1 merged, other flags kept", doc: doc(1, `{"stormbench":{"merged-shards":"3","x":"y"},"kube-controller-manager":{"node-eviction-rate":"0.1"}}`),
			mergedFrom: []string{"shard 0", "shard 1", "shard 2"},
			flags:      map[string]map[string]string{"stormbench": {"x": "y"}, "kube-controller-manager": {"node-eviction-rate": "0.1"}}},
		{name: "schema 2 not merged", doc: doc(2, `{"kube-controller-manager":{"node-eviction-rate":"0.1"}}`),
			flags: map[string]map[string]string{"kube-controller-manager": {"node-eviction-rate": "0.1"}}},
		{name: "schema 3 keeps the flag", doc: doc(3, `{"stormbench":{"merged-shards":"2"}}`),
			flags: map[string]map[string]string{"stormbench": {"merged-shards": "2"}}},
		{name: "schema 2 bad count", doc: doc(2, `{"stormbench":{"merged-shards":"two"}}`), err: "not a number of shards"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := result.Decode(strings.NewReader(tt.doc))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Decode error %v, want one mentioning %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(r.Run.MergedFrom, tt.mergedFrom) {
				t.Errorf("MergedFrom = %q, want %q", r.Run.MergedFrom, tt.mergedFrom)
			}
			if got := r.Run.Cluster.Settings.Flags; !reflect.DeepEqual(got, tt.flags) {
				t.Errorf("Flags = %v, want %v", got, tt.flags)
			}
			if got := result.MergedShards(r); got != len(tt.mergedFrom) {
				t.Errorf("MergedShards = %d, want %d", got, len(tt.mergedFrom))
			}
		})
	}
}
