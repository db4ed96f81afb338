package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/client-go/kubernetes"

	"github.com/stormbench/stormbench/bench/fleet"
)

func newCleanupCmd(env *cmdEnv) *cobra.Command {
	o := &cleanupOptions{output: "text", timeout: 10 * time.Minute}
	cmd := &cobra.Command{
		Use:   "cleanup (--run-id ID | --all | --list) [flags]",
		Short: "Remove what runs left behind: --run-id ID, --all, or --list",
		Long: `Removes what runs left behind: nodes, namespaces and workloads carrying a
run's label. --all removes every run's, including other users' on a shared
cluster.`,
		Example: `  stormbench cleanup --list
  stormbench cleanup --run-id quick-1201-120000
  stormbench cleanup --run-id big-storm --kubeconfig ~/.kube/config --context staging --yes`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			return o.run(cmd.Context(), env)
		},
	}
	o.addFlags(cmd.Flags())
	return cmd
}

// cleanupOptions are the flags of cleanup.
type cleanupOptions struct {
	cluster clusterOptions
	// Exactly one of runID, all and list.
	runID     string
	all, list bool
	// output is --list's format.
	output  string
	timeout time.Duration
}

func (o *cleanupOptions) addFlags(fs *pflag.FlagSet) {
	o.cluster.addFlags(fs, true)
	fs.StringVar(&o.runID, "run-id", "", "Remove the leftovers of this run id")
	fs.StringVar(&o.runID, "run", "", "Remove the leftovers of this run id")
	_ = fs.MarkDeprecated("run", "use --run-id")
	fs.BoolVar(&o.all, "all", false, "Remove the leftovers of every run (objects carrying stormbench.io/run)")
	fs.BoolVar(&o.list, "list", false, "Only list runs with leftovers")
	fs.StringVarP(&o.output, "output", "o", o.output, "Output format for --list: text, json or yaml")
	fs.DurationVar(&o.timeout, "timeout", o.timeout, "How long the cleanup may take in all: connecting, listing, deleting and waiting until it is gone")
}

func (o *cleanupOptions) validate() error {
	if err := checkFormat(o.output); err != nil {
		return err
	}
	n := 0
	for _, b := range []bool{o.runID != "", o.all, o.list} {
		if b {
			n++
		}
	}
	if n != 1 {
		return usagef("give exactly one of --run-id ID, --all and --list")
	}
	if o.runID != "" {
		if err := validateRunID(o.runID); err != nil {
			return err
		}
	}
	if o.timeout <= 0 {
		return usagef("--timeout %s: give a duration above 0, such as 5m", o.timeout)
	}
	return nil
}

func (o *cleanupOptions) run(ctx context.Context, env *cmdEnv) error {
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	if o.list {
		o.cluster.yes = true // read-only: nothing to confirm
	}
	t, _, err := o.cluster.connect(ctx, env, 500, 1000)
	if err != nil {
		return apiError(ctx, "connecting", o.timeout, err)
	}
	runs, err := fleet.ListRuns(ctx, t.Client)
	if err != nil {
		return apiError(ctx, "listing what runs left behind", o.timeout, err)
	}
	if o.list {
		return printAs(env.stdout, o.output, runs, func() error {
			return writeTable(env.stdout, "RUN\tNODES\tDOWN NODES\tNAMESPACES", runs, func(r fleet.RunObjects) string {
				return fmt.Sprintf("%s\t%d\t%d\t%d", r.RunID, r.Nodes, r.DownNodes, r.Namespaces)
			})
		})
	}
	var targets []string
	for _, r := range runs {
		if o.all || r.RunID == o.runID {
			targets = append(targets, r.RunID)
		}
	}
	if len(targets) == 0 {
		fmt.Fprintln(env.stdout, "Nothing to clean up.")
		return nil
	}
	for _, id := range targets {
		if err := deleteRun(ctx, env, t.Client, id, o.timeout, "cleaning up run "+id, "Run "+id+" cleaned up."); err != nil {
			return err
		}
	}
	return nil
}

// deleteRun deletes a run's objects (fleet.Delete) for cleanup and fleet
// down, then prints done; what names the job in an error.
func deleteRun(ctx context.Context, env *cmdEnv, client kubernetes.Interface, id string, timeout time.Duration, what, done string) error {
	if err := fleet.Delete(ctx, client, id, timeout, newProgress(env.stderr)); err != nil {
		return apiError(ctx, what, timeout, err)
	}
	fmt.Fprintln(env.stdout, done)
	return nil
}
