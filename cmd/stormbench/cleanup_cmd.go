package main

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/stormbench/stormbench/bench/fleet"
)

func runCleanup(ctx context.Context, env *cmdEnv, args []string) error {
	var o clusterOptions
	var runID, output string
	var all, list bool
	var timeout time.Duration
	fs := newFlagSet(env, "cleanup", `cleanup (--run-id ID | --all | --list) [flags]

Removes what runs left behind: nodes, namespaces and workloads carrying a
run's label. --all removes every run's, including other users' on a shared
cluster.

Examples:
  stormbench cleanup --list
  stormbench cleanup --run-id quick-1201-120000
  stormbench cleanup --run-id big-storm --kubeconfig ~/.kube/config --context staging --yes`)
	o.addFlags(fs, true)
	fs.StringVar(&runID, "run-id", "", "Remove the leftovers of this run id")
	fs.StringVar(&runID, "run", "", "Remove the leftovers of this run id")
	_ = fs.MarkDeprecated("run", "use --run-id")
	fs.BoolVar(&all, "all", false, "Remove the leftovers of every run (objects carrying stormbench.io/run)")
	fs.BoolVar(&list, "list", false, "Only list runs with leftovers")
	fs.StringVarP(&output, "output", "o", "text", "Output format for --list: text, json or yaml")
	fs.DurationVar(&timeout, "timeout", 10*time.Minute, "How long the cleanup may take in all: connecting, listing, deleting and waiting until it is gone")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := checkFormat(output); err != nil {
		return err
	}
	n := 0
	for _, b := range []bool{runID != "", all, list} {
		if b {
			n++
		}
	}
	if n != 1 {
		return usagef("give exactly one of --run-id ID, --all and --list")
	}
	if runID != "" {
		if err := validateRunID(runID); err != nil {
			return err
		}
	}
	if timeout <= 0 {
		return usagef("--timeout %s: give a duration above 0, such as 5m", timeout)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if list {
		o.yes = true // read-only: nothing to confirm
	}
	t, _, err := o.connect(ctx, env, 500, 1000)
	if err != nil {
		return apiError(ctx, "connecting", timeout, err)
	}
	runs, err := fleet.ListRuns(ctx, t.Client)
	if err != nil {
		return apiError(ctx, "listing what runs left behind", timeout, err)
	}
	if list {
		if output == "json" || output == "yaml" {
			return printStructured(env.stdout, output, runs)
		}
		tw := tabwriter.NewWriter(env.stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "RUN\tNODES\tDOWN NODES\tNAMESPACES")
		for _, r := range runs {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\n", r.RunID, r.Nodes, r.DownNodes, r.Namespaces)
		}
		return tw.Flush()
	}
	var targets []string
	for _, r := range runs {
		if all || r.RunID == runID {
			targets = append(targets, r.RunID)
		}
	}
	if len(targets) == 0 {
		fmt.Fprintln(env.stdout, "Nothing to clean up.")
		return nil
	}
	for _, id := range targets {
		if err := fleet.Delete(ctx, t.Client, id, timeout, newProgress(env.stderr)); err != nil {
			return apiError(ctx, "cleaning up run "+id, timeout, err)
		}
		fmt.Fprintf(env.stdout, "Run %s cleaned up.\n", id)
	}
	return nil
}
