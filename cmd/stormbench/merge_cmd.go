package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/stormbench/stormbench/bench/measure/registry"
	"github.com/stormbench/stormbench/bench/outfile"
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

The merged file goes in --output-file ("-": stdout, the summary then goes to
stderr); -o names the summary's format: text, json or yaml. (-o FILE, the
spelling before 0.3, is refused with a hint.)`

const mergeExamples = `  stormbench merge --output-file results/big.json results/big-0.json results/big-1.json
  stormbench merge --force --output-file merged.json shard-*.json
  stormbench merge -o json --output-file merged.json shard-*.json | jq .variants`

func newMergeCmd(env *cmdEnv) *cobra.Command {
	o := &mergeOptions{format: "text"}
	cmd := &cobra.Command{
		Use:     "merge --output-file MERGED.json [--force] SHARD.json...",
		Short:   "Combine the result files of a sharded run (run --shard i/n) into one result",
		Long:    mergeHelp + "\n\n" + outputRules,
		Example: mergeExamples,
		RunE: func(_ *cobra.Command, args []string) error {
			if err := o.validate(args); err != nil {
				return err
			}
			return o.run(env, args)
		},
	}
	o.addFlags(cmd.Flags())
	return cmd
}

// mergeOptions are the flags of merge.
type mergeOptions struct {
	// out is the merged result file; format is the summary's.
	out, format            string
	force, allowIncomplete bool
}

func (o *mergeOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.out, "output-file", "", "Merged result file (required; - for stdout)")
	fs.StringVarP(&o.format, "output", "o", o.format, "Format of the summary: text, json or yaml")
	fs.BoolVar(&o.force, "force", false, "Overwrite an existing merged result file")
	fs.BoolVar(&o.allowIncomplete, "allow-incomplete", false, "Merge even if shards are missing or unrecorded; the merged result is marked incomplete")
}

// validate checks the flags and the shard files before anything is read:
// each shard given once, the merged file none of them and writable.
func (o *mergeOptions) validate(paths []string) error {
	if err := checkFormat(o.format); err != nil {
		if strings.ContainsAny(o.format, "./") {
			return usagef("merge -o %s: -o names the summary's format (text, json or yaml); the merged file goes in --output-file %s", o.format, o.format)
		}
		return err
	}
	if o.out == "" {
		return usagef("merge needs the merged result file: --output-file MERGED.json")
	}
	if len(paths) == 0 {
		return usagef("merge needs the shard result files")
	}
	infos := make([]os.FileInfo, len(paths))
	for i, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return usagef("shard result %s: %v", p, err)
		}
		if j := slices.IndexFunc(infos[:i], func(in os.FileInfo) bool { return os.SameFile(in, st) }); j >= 0 {
			return usagef("shard result %s given twice (as %s and %s)", p, paths[j], p)
		}
		infos[i] = st
	}
	if st, err := os.Stat(o.out); err == nil && slices.ContainsFunc(infos, func(in os.FileInfo) bool { return os.SameFile(in, st) }) {
		return usagef("--output-file %s is one of the shard results; choose another file", o.out)
	}
	if err := outfile.Check(o.out, outfile.Options{Force: o.force, MakeDirs: true, Stdout: io.Discard}); err != nil {
		return usagef("--output-file: %v", err)
	}
	return nil
}

// run merges the shards, writes the merged result and prints the summary.
func (o *mergeOptions) run(env *cmdEnv, paths []string) error {
	shards, err := readAll(paths, result.ReadFile)
	if err != nil {
		return err
	}
	merged, err := result.Merge(mergeRules(), shards...)
	if err != nil {
		return usageError{err}
	}
	if cov, ok := result.ShardCoverage(shards); !ok && !o.allowIncomplete {
		return usagef("merge of run %s: %s; give every shard's result, or --allow-incomplete to write a merged result marked incomplete", merged.Run.ID, cov)
	}
	merged.Run.MergedFrom = slices.Clone(paths)
	if err := result.WriteFile(o.out, merged, result.WriteOptions{Force: o.force, MakeDirs: true, Stdout: env.stdout}); err != nil {
		return err
	}
	summary := env.stdout
	if toStdout(o.out) {
		summary = env.stderr
	}
	return printMergeSummary(summary, o.format, o.out, paths, shards, merged)
}

// mergeSummary is merge's summary in -o json and yaml.
type mergeSummary struct {
	Output   string          `json:"output"`
	RunID    string          `json:"runID"`
	Seed     int64           `json:"seed"`
	Complete bool            `json:"complete"`
	Shards   []string        `json:"shards"`
	Variants []mergedVariant `json:"variants"`
	Errors   []string        `json:"errors,omitempty"`
	Caveats  []string        `json:"caveats,omitempty"`
}

type mergedVariant struct {
	Variant    string `json:"variant"`
	Repetition int    `json:"repetition"`
	Restarts   int    `json:"restarts"`
	// ShardRestarts are the restarts of each shard, in argument order.
	ShardRestarts []int `json:"shardRestarts"`
	Complete      bool  `json:"complete"`
}

func printMergeSummary(w io.Writer, format, out string, paths []string, shards []*result.Result, merged *result.Result) error {
	s := mergeSummary{Output: out, RunID: merged.Run.ID, Seed: merged.Run.Seed, Complete: merged.Complete,
		Shards: paths, Errors: merged.Errors, Caveats: result.MergeNotes(merged)}
	for k, v := range merged.Variants {
		mv := mergedVariant{Variant: v.Variant, Repetition: v.Repetition, Restarts: v.Restarts, Complete: v.Complete}
		for _, sh := range shards {
			mv.ShardRestarts = append(mv.ShardRestarts, sh.Variants[k].Restarts)
		}
		s.Variants = append(s.Variants, mv)
	}
	if format == "json" || format == "yaml" {
		return printStructured(w, format, s)
	}
	fmt.Fprintf(w, "Merged %d shard results of run %s (seed %d) into %s: %s\n", len(shards), s.RunID, s.Seed, out, fmtBool(merged.Complete, "complete", "INCOMPLETE"))
	for i, p := range paths {
		fmt.Fprintf(w, "  shard %d: %s%s\n", i, p, shardNote(shards[i]))
	}
	for _, v := range s.Variants {
		fmt.Fprintf(w, "  %s#%d: %d restarts (%s)%s\n", v.Variant, v.Repetition, v.Restarts, strings.Join(mapped(v.ShardRestarts, strconv.Itoa), " + "),
			fmtBool(v.Complete, "", ", incomplete"))
	}
	for _, e := range s.Errors {
		fmt.Fprintf(w, "error: %s\n", e)
	}
	if len(s.Caveats) > 0 {
		fmt.Fprintln(w, "Caveats:")
		for _, n := range s.Caveats {
			fmt.Fprintf(w, "  %s\n", n)
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
	rules := registry.MergeRules()
	rules[watchers.Name] = watchers.MergeRule()
	return rules
}
