package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/stormbench/stormbench/bench/measure/apiserver"
	"github.com/stormbench/stormbench/bench/measure/self"
	"github.com/stormbench/stormbench/bench/result"
)

// writeShardFixtures writes two "shards" of abFixture (the same document,
// recorded as shards 0/2 and 1/2, the second started a second later) and
// returns their paths.
func writeShardFixtures(t *testing.T, dir string) (string, string) {
	t.Helper()
	var paths []string
	for i := range 2 {
		r, err := result.ReadFile(abFixture)
		if err != nil {
			t.Fatal(err)
		}
		r.Run.Start = r.Run.Start.Add(time.Duration(i) * time.Second)
		r.Run.Shard = &result.Shard{Index: i, Count: 2}
		p := filepath.Join(dir, "shard-"+string(rune('0'+i))+".json")
		if err := result.WriteFile(p, r, result.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths[0], paths[1]
}

func TestMergeCommand(t *testing.T) {
	dir := t.TempDir()
	a, b := writeShardFixtures(t, dir)
	garbage := filepath.Join(dir, "garbage.json")
	if err := os.WriteFile(garbage, []byte("not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other.json")
	r, err := result.ReadFile(b)
	if err != nil {
		t.Fatal(err)
	}
	r.Run.ID = "another-run"
	if err := result.WriteFile(other, r, result.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	// Another setup: versions and gates differ, the run's and a variant's.
	setup := filepath.Join(dir, "setup.json")
	if r, err = result.ReadFile(b); err != nil {
		t.Fatal(err)
	}
	r.Run.Cluster.Versions = map[string]string{"kube-apiserver": "v1.35.4", "etcd": "3.6.5"}
	r.Run.FeatureGates = map[string]bool{"ChangeContainerStatusOnKubeletRestart": true, "WatchListClient": false}
	r.Variants[0].FeatureGates = map[string]bool{"ChangeContainerStatusOnKubeletRestart": true, "ExtraGate": true}
	if err := result.WriteFile(setup, r, result.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	existing := filepath.Join(dir, "existing.json")
	if err := os.WriteFile(existing, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []cliCase{
		{"help", []string{"--help"}, exitOK, "as if one process had restarted every node"},
		{"no output", []string{a, b}, exitUsage, "--output-file MERGED.json"},
		{"no shards", []string{"--output-file", filepath.Join(dir, "m.json")}, exitUsage, "needs the shard result files"},
		{"missing file", []string{"--output-file", filepath.Join(dir, "m.json"), a, filepath.Join(dir, "nope.json")}, exitUsage, "no such file"},
		{"malformed file", []string{"--output-file", filepath.Join(dir, "m.json"), a, garbage}, exitUsage, "decoding result"},
		{"other run", []string{"--output-file", filepath.Join(dir, "m.json"), a, other}, exitUsage, "shard 1 is not of the same run as shard 0: run id another-run"},
		{"other setup", []string{"--output-file", filepath.Join(dir, "m.json"), a, setup}, exitUsage, "ExtraGate true, want unset"},
		{"same shard twice", []string{"--output-file", filepath.Join(dir, "m.json"), a, a}, exitUsage, "given twice"},
		{"same shard by another path", []string{"--output-file", filepath.Join(dir, "m.json"), a, filepath.Join(dir, ".", filepath.Base(a))}, exitUsage, "given twice"},
		{"output exists", []string{"--output-file", existing, a, b}, exitUsage, "exists: pass --force"},
		{"-o FILE, the old spelling", []string{"-o", existing, a, b}, exitUsage, "-o names the summary's format (text, json or yaml); the merged file goes in --output-file"},
		{"-o json writes no file named json", []string{"-o", "json", a, b}, exitUsage, "--output-file MERGED.json"},
		{"unknown -o", []string{"-o", "xml", "--output-file", filepath.Join(dir, "m.json"), a, b}, exitUsage, `unknown output format "xml"`},
		{"output is a shard", []string{"--force", "--output-file", b, a, b}, exitUsage, "is one of the shard results"},
		{"unknown flag", []string{"--nope", "--output-file", existing, a, b}, exitUsage, "unknown flag"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr := runCLIWant(t, tt.code, tt.want, append([]string{"merge"}, tt.args...)...)
			// Differences are named key by key, never as Go maps.
			if tt.code != exitOK && (strings.Contains(stderr, "map[") || len(stderr) > 600) {
				t.Errorf("message of %d characters in Go's words:\n%s", len(stderr), stderr)
			}
		})
	}
	if data, err := os.ReadFile(existing); err != nil || string(data) != "keep me" {
		t.Errorf("refused merge touched %s: %q, %v", existing, data, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "m.json")); !os.IsNotExist(err) {
		t.Errorf("a failed merge wrote a file: %v", err)
	}
}

func TestMergeCommandWrites(t *testing.T) {
	dir := t.TempDir()
	a, b := writeShardFixtures(t, dir)
	out := filepath.Join(dir, "merged", "run.json")
	code, stdout, stderr := runCLI(t, "merge", "--output-file", out, a, b)
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for _, w := range []string{"Merged 2 shard results of run", "shard 1: " + b, "legacy#0: ", "Caveats:", "cluster-wide figures taken from shard"} {
		if !strings.Contains(stdout, w) {
			t.Errorf("stdout lacks %q:\n%s", w, stdout)
		}
	}
	merged, err := result.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	shard, err := result.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	if result.MergedShards(merged) != 2 {
		t.Errorf("merged result not marked: %v", merged.Run.Cluster.Settings.Flags)
	}
	for k, v := range merged.Variants {
		s := shard.Variants[k]
		if v.Restarts != 2*s.Restarts {
			t.Errorf("%s: restarts %d, want %d", v.Variant, v.Restarts, 2*s.Restarts)
		}
		// The simulator's counters (self.Name) add up: the
		// name this package and bench/result agree on.
		got, ok := v.Measurement(self.Name).Value(self.TokenRequests, result.WindowStorm)
		want, _ := s.Measurement(self.Name).Value(self.TokenRequests, result.WindowStorm)
		if !ok || got != 2*want {
			t.Errorf("%s: storm tokenRequests %v, want %v", v.Variant, got, 2*want)
		}
		// The API server's figures are not summed.
		got, _ = v.Measurement(apiserver.Name).Value(apiserver.Requests, result.WindowStorm)
		want, _ = s.Measurement(apiserver.Name).Value(apiserver.Requests, result.WindowStorm)
		if got != want {
			t.Errorf("%s: API requests %v, want %v (one shard's)", v.Variant, got, want)
		}
	}

	// Again: refused without --force, done with it.
	if code, _, stderr := runCLI(t, "merge", "--output-file", out, a, b); code != exitUsage || !strings.Contains(stderr, "--force") {
		t.Errorf("second merge without --force: exit %d: %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "merge", "--force", "--output-file", out, a, b); code != exitOK {
		t.Errorf("merge --force: exit %d: %s", code, stderr)
	}
	// A merged result is not a shard.
	if code, _, stderr := runCLI(t, "merge", "--output-file", filepath.Join(dir, "again.json"), out); code != exitUsage || !strings.Contains(stderr, "already merged") {
		t.Errorf("merging a merged result: exit %d: %s", code, stderr)
	}
}

// TestMergeShardSet: merge refuses a shard given twice, even with its start
// moved, and a merge that lacks a shard or holds a result without a shard
// record (exit 2); --allow-incomplete writes the latter marked incomplete.
func TestMergeShardSet(t *testing.T) {
	dir := t.TempDir()
	s0, s1 := writeShardFixtures(t, dir)
	// write saves a copy of the fixture's shard 0 edited by edit.
	write := func(name string, edit func(r *result.Result)) string {
		return editResult(t, s0, filepath.Join(dir, name), edit)
	}
	again := write("shard-0-again.json", func(r *result.Result) { r.Run.Start = r.Run.Start.Add(time.Nanosecond) })
	threeWay := write("shard-0-of-3.json", func(r *result.Result) { r.Run.Shard = &result.Shard{Index: 0, Count: 3} })
	old0 := write("old-0.json", func(r *result.Result) { r.Run.Shard = nil })
	old1 := write("old-1.json", func(r *result.Result) { r.Run.Shard = nil; r.Run.Start = r.Run.Start.Add(time.Second) })
	tests := []struct {
		name     string
		args     []string
		code     int
		want     string // in stdout, or in stderr for a failure
		complete bool   // of the written result
	}{
		{"every shard", []string{s0, s1}, exitOK, "shard 1: " + s1 + " (shard 1/2)", true},
		{"every shard, reversed", []string{s1, s0}, exitOK, ": complete", true},
		{"same shard twice, start moved by 1ns", []string{s0, again}, exitUsage, "shards 0 and 1 are both shard 0/2 of run", false},
		{"same shard twice with the other", []string{s0, s1, again}, exitUsage, "the same shard given twice", false},
		{"other split", []string{threeWay, s1}, exitUsage, "not of one split into 3", false},
		{"one shard of two", []string{s1}, exitUsage, "shard 0 of 2 missing; give every shard's result, or --allow-incomplete", false},
		{"one shard of two, allowed", []string{"--allow-incomplete", s1}, exitOK, "INCOMPLETE", false},
		{"no records", []string{old0, old1}, exitUsage, "the results at positions 0, 1 record no shard", false},
		{"no records, allowed", []string{"--allow-incomplete", old0, old1}, exitOK, "error: merge: the results at positions 0, 1 record no shard", false},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(dir, "merged", strconv.Itoa(i)+".json")
			_, stderr := runCLIWant(t, tt.code, tt.want, append([]string{"merge", "--output-file", out}, tt.args...)...)
			if len(stderr) > 500 {
				t.Errorf("message of %d characters: %s", len(stderr), stderr)
			}
			r, err := result.ReadFile(out)
			if tt.code != exitOK {
				if err == nil {
					t.Errorf("a refused merge wrote %s", out)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.Complete != tt.complete {
				t.Errorf("merged result complete %t, want %t (errors %q)", r.Complete, tt.complete, r.Errors)
			}
		})
	}
}

// TestMergeFormats: -o json and yaml print the summary as data; with
// --output-file - the merged result goes to stdout and the summary to
// stderr.
func TestMergeFormats(t *testing.T) {
	dir := t.TempDir()
	a, b := writeShardFixtures(t, dir)
	for _, format := range []string{"json", "yaml"} {
		out := filepath.Join(dir, format+".json")
		code, stdout, stderr := runCLI(t, "merge", "-o", format, "--output-file", out, a, b)
		if code != exitOK {
			t.Fatalf("-o %s: exit %d: %s", format, code, stderr)
		}
		var s mergeSummary
		if err := yaml.UnmarshalStrict([]byte(stdout), &s); err != nil {
			t.Fatalf("-o %s: %v\n%s", format, err, stdout)
		}
		if s.Output != out || len(s.Shards) != 2 || len(s.Variants) == 0 || len(s.Variants[0].ShardRestarts) != 2 {
			t.Errorf("-o %s: summary %+v", format, s)
		}
		if _, err := result.ReadFile(out); err != nil {
			t.Errorf("-o %s: %v", format, err)
		}
		if _, err := os.Stat(filepath.Join(dir, format)); !os.IsNotExist(err) {
			t.Errorf("-o %s wrote a file named %s", format, format)
		}
	}
	code, stdout, stderr := runCLI(t, "merge", "--output-file", "-", a, b)
	if code != exitOK {
		t.Fatalf("--output-file -: exit %d: %s", code, stderr)
	}
	if _, err := result.Decode(strings.NewReader(stdout)); err != nil {
		t.Errorf("--output-file -: stdout is not a result: %v", err)
	}
	if !strings.Contains(stderr, "Merged 2 shard results") {
		t.Errorf("--output-file -: the summary is not on stderr:\n%s", stderr)
	}
}
