package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/stormbench/stormbench/bench/cluster"
	"github.com/stormbench/stormbench/profiles"
)

func newPreflightCmd(env *cmdEnv) *cobra.Command {
	o := &preflightOptions{profile: "quick", output: "text", timeout: 2 * time.Minute}
	cmd := &cobra.Command{
		Use:   "preflight [--kubeconfig F --context C] [--profile P] [flags]",
		Short: "Read-only checks of a cluster: permissions, KWOK label selector, heartbeat timing",
		Long: `Read-only checks of a cluster before a run: the permissions a run needs,
a KWOK controller that manages nodes by stormbench's label, and heartbeat
timing against the profile's. Exit 3 when a check fails, or when the API
server does not answer within --timeout.`,
		Example: `  stormbench preflight                                   # the embedded cluster
  stormbench preflight --kubeconfig ~/.kube/config --context staging --profile fleet-1k -o json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkFormat(o.output); err != nil {
				return err
			}
			if o.timeout <= 0 {
				return usagef("--timeout %s: give a duration above 0, such as 30s", o.timeout)
			}
			return o.run(cmd.Context(), env)
		},
	}
	o.addFlags(cmd.Flags())
	return cmd
}

// preflightOptions are the flags of preflight.
type preflightOptions struct {
	cluster         clusterOptions
	profile, output string
	timeout         time.Duration
}

func (o *preflightOptions) addFlags(fs *pflag.FlagSet) {
	o.cluster.addFlags(fs, true)
	fs.StringVar(&o.profile, "profile", o.profile, "Profile whose timing the cluster should match")
	fs.StringVarP(&o.output, "output", "o", o.output, "Output format: text, json or yaml")
	fs.DurationVar(&o.timeout, "timeout", o.timeout, "How long the checks may take in all, connecting included")
}

// run runs the checks and prints them; an error when one fails.
func (o *preflightOptions) run(ctx context.Context, env *cmdEnv) error {
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	p, err := profiles.Load(o.profile)
	if err != nil {
		return err
	}
	o.cluster.yes = true // read-only: nothing to confirm
	t, embedded, err := o.cluster.connect(ctx, env, 50, 100)
	if err != nil {
		return apiError(ctx, "connecting", o.timeout, err)
	}
	var e *cluster.Embedded
	if embedded {
		if e, err = o.cluster.embedded(p, true); err != nil {
			return err
		}
	}
	grace := time.Duration(float64(p.Timing.NodeMonitorGracePeriod.Duration) * p.Timing.HeartbeatFactor)
	lease := int(float64(p.Timing.NodeLeaseDurationSeconds) * p.Timing.HeartbeatFactor)
	checks, err := cluster.Preflight(ctx, t, e, grace, lease)
	if err != nil {
		// No table: a check that got no answer is not a finding.
		return apiError(ctx, "running the preflight checks", o.timeout, err)
	}
	if err := printAs(env.stdout, o.output, checks, func() error {
		fmt.Fprintf(env.stdout, "Target: %s (context %q, Kubernetes %s)\n", t.Host, t.Context, t.ServerVersion)
		return writeTable(env.stdout, "CHECK\tSTATUS\tDETAIL", checks, func(c cluster.Check) string { return fmt.Sprintf("%s\t%s\t%s", c.Name, c.Status, c.Detail) })
	}); err != nil {
		return err
	}
	for _, c := range checks {
		if c.Status == cluster.CheckFail {
			return fmt.Errorf("preflight failed: %s: %s", c.Name, c.Detail)
		}
	}
	return nil
}
