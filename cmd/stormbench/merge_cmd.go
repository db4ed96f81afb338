package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/stormbench/stormbench/bench/measure"
	"github.com/stormbench/stormbench/bench/result"
	"github.com/stormbench/stormbench/bench/watchers"
)

const mergeHelp = `Combine the result files of the shards of one sharded run
(stormbench run --shard i/n, same --run-id, profile and seed, same cluster)
into one result, as if one process had restarted every node.

Per variant run, counts of what each shard did add up (restarts, the
simulated kubelets' requests and counters, stormbench's CPU and memory) and
HdrHistograms merge exactly (client latency, node and pod recovery).
Figures of the shared control plane (apiserver, endpointSlices), which every
shard observed in full, are taken from one shard instead of being summed;
ratios per restart are recomputed over all shards' restarts. Caveats are
printed and kept in the result as measurement warnings starting "merge:".
See result.Merge for every rule.

Shards are named by their position among the arguments: shard 0 is the first.

Each shard result records its shard (i/n) and run id. A shard given twice,
or results of different splits, are refused (exit 2). So is a merge that
lacks a shard of the split, or holds a result that records no shard (one
written before shards were recorded, or by a run without --shard), since
it cannot be called complete: exit 2, unless --allow-incomplete, which
writes the merged result marked incomplete, with the reason in its errors.

The merged file goes in --output-file (-o FILE, the spelling before 0.2,
still works and says it is deprecated; -o names a format elsewhere).

Examples:
  stormbench merge --output-file results/big.json results/big-0.json results/big-1.json
  stormbench merge --force --output-file merged.json shard-*.json
`

func runMerge(_ context.Context, env *cmdEnv, args []string) error {
	var out string
	var force, allowIncomplete bool
	var old string
	fs := newFlagSet(env, "merge", "merge --output-file MERGED.json [--force] SHARD.json...\n\n"+mergeHelp)
	fs.StringVar(&out, "output-file", "", "Merged result file (required)")
	fs.StringVarP(&old, "output", "o", "", "Deprecated: the merged result file; use --output-file")
	fs.BoolVar(&force, "force", false, "Overwrite an existing merged result file")
	fs.BoolVar(&allowIncomplete, "allow-incomplete", false, "Merge even if shards are missing or unrecorded; the merged result is marked incomplete")
	if err := parse(fs, args); err != nil {
		return err
	}
	if old != "" {
		if out != "" {
			return usagef("merge: give --output-file only (-o is its deprecated spelling)")
		}
		fmt.Fprintf(env.stderr, "stormbench: merge -o FILE is deprecated: use --output-file %s\n", old)
		out = old
	}
	if out == "" {
		return usagef("merge needs the merged result file: --output-file MERGED.json")
	}
	paths := fs.Args()
	if len(paths) == 0 {
		return usagef("merge needs the shard result files")
	}
	infos := make([]os.FileInfo, len(paths))
	for i, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return usagef("shard result %s: %v", p, err)
		}
		for j := range i {
			if os.SameFile(infos[j], st) {
				return usagef("shard result %s given twice (as %s and %s)", p, paths[j], p)
			}
		}
		infos[i] = st
	}
	if st, err := os.Stat(out); err == nil {
		for _, in := range infos {
			if os.SameFile(in, st) {
				return usagef("-o %s is one of the shard results; choose another file", out)
			}
		}
		if !force {
			return usagef("merged result file %s exists; use --force to overwrite", out)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return usagef("merged result file %s: %v", out, err)
	}
	shards := make([]*result.Result, len(paths))
	for i, p := range paths {
		r, err := result.ReadFile(p)
		if err != nil {
			return usageError{err}
		}
		shards[i] = r
	}
	merged, err := result.Merge(mergeRules(), shards...)
	if err != nil {
		return usageError{err}
	}
	if cov := result.ShardCoverage(shards); !cov.Complete() && !allowIncomplete {
		return usagef("merge of run %s: %s; give every shard's result, or --allow-incomplete to write a merged result marked incomplete", merged.Run.ID, cov)
	}
	merged.Run.MergedFrom = slices.Clone(paths)
	if dir := filepath.Dir(out); dir != "." {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("creating result directory: %w", err)
		}
	}
	if err := result.WriteFile(out, merged, result.WriteOptions{Force: force}); err != nil {
		return err
	}

	status := "complete"
	if !merged.Complete {
		status = "INCOMPLETE"
	}
	fmt.Fprintf(env.stdout, "Merged %d shard results of run %s (seed %d) into %s: %s\n", len(shards), merged.Run.ID, merged.Run.Seed, out, status)
	for i, p := range paths {
		fmt.Fprintf(env.stdout, "  shard %d: %s%s\n", i, p, shardNote(shards[i]))
	}
	for k, v := range merged.Variants {
		parts := make([]string, len(shards))
		for i, s := range shards {
			parts[i] = fmt.Sprint(s.Variants[k].Restarts)
		}
		fmt.Fprintf(env.stdout, "  %s#%d: %d restarts (%s)%s\n", v.Variant, v.Repetition, v.Restarts, strings.Join(parts, " + "),
			fmtBool(v.Complete, "", ", incomplete"))
	}
	for _, e := range merged.Errors {
		fmt.Fprintf(env.stdout, "error: %s\n", e)
	}
	if notes := result.MergeNotes(merged); len(notes) > 0 {
		fmt.Fprintln(env.stdout, "Caveats:")
		for _, n := range notes {
			fmt.Fprintf(env.stdout, "  %s\n", n)
		}
	}
	return nil
}

// shardNote is " (shard i/n)" for a result that records its shard.
func shardNote(r *result.Result) string {
	if r.Run.Shard == nil {
		return ""
	}
	return " (shard " + r.Run.Shard.String() + ")"
}

// mergeRules are the merge rules of every measurement a run can record:
// bench/measure's and the steady watches'.
func mergeRules() result.MergeRules {
	rules := measure.MergeRules()
	rules[watchers.Name] = watchers.MergeRule()
	return rules
}
