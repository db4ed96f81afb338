package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/stormbench/stormbench/bench/fleet"
	"github.com/stormbench/stormbench/bench/kubelet"
	"github.com/stormbench/stormbench/bench/measure/self"
	"github.com/stormbench/stormbench/profiles"
)

func newFleetCmd(env *cmdEnv) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "fleet",
		Short: "Provision or remove a fleet of KWOK nodes and workloads: up, down",
		Example: `  stormbench fleet up --run-id f1 --profile quick
  stormbench fleet snapshot save --run-id f1 --profile quick --file f1.snap
  stormbench fleet down --run-id f1`,
		RunE: needsSubcommand,
	}
	sub := func(name, short, long, example string) *cobra.Command {
		o := newFleetOptions(name)
		c := &cobra.Command{
			Use:     name + " [flags]",
			Short:   short,
			Long:    long,
			Example: example,
			Args:    noArgs,
			RunE: func(c *cobra.Command, _ []string) error {
				if err := o.validate(c.Flags()); err != nil {
					return err
				}
				currentRunID.Store(o.runID)
				return o.run(c.Context(), env)
			},
		}
		o.addFlags(c.Flags())
		return c
	}
	cmd.AddCommand(
		sub("up", "Create the profile's KWOK nodes and workloads and wait until all are Ready", `Creates the profile's KWOK nodes and workloads, labelled with the run id, and
waits until every node and pod is Ready; run again, it continues a partial
fleet.`, `  stormbench fleet up --run-id f1 --profile quick
  stormbench fleet up --run-id f1k --profile fleet-1k --nodes 1000 --pods-per-node 10`),
		sub("down", "Delete every object carrying the run label and wait until it is gone", `Deletes every object carrying the run id's label and waits until it is gone.`,
			`  stormbench fleet down --run-id f1
  stormbench fleet down --run-id f1k --kubeconfig ~/.kube/config --context big --yes`),
		newFleetSnapshotCmd(env),
	)
	return cmd
}

// fleetOptions are the flags of fleet up and fleet down.
type fleetOptions struct {
	// sub is up or down.
	sub     string
	cluster clusterOptions
	profile string
	runID   string
	// nodes and podsPerNode override the profile's (up; 0 keeps them).
	nodes, podsPerNode int
	// timeout bounds the wait for a deletion (down).
	timeout time.Duration
}

func newFleetOptions(sub string) *fleetOptions {
	return &fleetOptions{sub: sub, profile: "quick", runID: "fleet", timeout: 10 * time.Minute}
}

func (o *fleetOptions) addFlags(fs *pflag.FlagSet) {
	o.cluster.addFlags(fs, true)
	fs.StringVar(&o.runID, "run-id", o.runID, "Run id: the value of the stormbench.io/run label on every object")
	fs.StringVar(&o.runID, "run", o.runID, "Run id: the value of the stormbench.io/run label on every object")
	_ = fs.MarkDeprecated("run", "use --run-id")
	fs.StringVar(&o.profile, "profile", o.profile, "Profile whose fleet section to use (name or file)")
	if o.sub == "up" {
		fs.IntVar(&o.nodes, "nodes", 0, "Override the profile's node count")
		fs.IntVar(&o.podsPerNode, "pods-per-node", 0, "Override the profile's pods per node")
	} else {
		fs.DurationVar(&o.timeout, "timeout", o.timeout, "How long to wait for the deletion")
	}
}

func (o *fleetOptions) validate(fs *pflag.FlagSet) error {
	if err := validateRunID(o.runID); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"nodes", o.nodes}, {"pods-per-node", o.podsPerNode}} {
		if fs.Changed(f.name) && f.v < 1 {
			return usagef("--%s %d: must be at least 1 (leave it out for the profile's)", f.name, f.v)
		}
	}
	if o.sub == "down" && o.timeout <= 0 {
		return usagef("--timeout %s: give a duration above 0, such as 5m", o.timeout)
	}
	return nil
}

// loadProfile loads the profile with the flags' overrides.
func (o *fleetOptions) loadProfile() (*profiles.Profile, error) {
	p, err := profiles.Load(o.profile)
	if err != nil {
		return nil, err
	}
	if o.nodes == 0 && o.podsPerNode == 0 {
		return p, nil
	}
	if o.nodes > 0 {
		p.Fleet.Nodes = o.nodes
	}
	if o.podsPerNode > 0 {
		p.Fleet.PodsPerNode = o.podsPerNode
		p.Fleet.MaxPodsPerNode = 0
	}
	profiles.SetDefaults(p)
	if errs := profiles.Validate(p); len(errs) > 0 {
		return nil, &profiles.ValidationError{Source: o.profile + " (with flag overrides)", Errs: errs}
	}
	return p, nil
}

func (o *fleetOptions) run(ctx context.Context, env *cmdEnv) error {
	p, err := o.loadProfile()
	if err != nil {
		return err
	}
	t, _, err := o.cluster.connect(ctx, env, p.Fleet.QPS, p.Fleet.Burst)
	if err != nil {
		return apiError(ctx, "connecting", o.timeout, err)
	}
	if o.sub == "down" {
		return deleteRun(ctx, env, t.Client, o.runID, o.timeout, fmt.Sprintf("deleting fleet %q", o.runID), fmt.Sprintf("Fleet %q deleted.", o.runID))
	}
	f, err := fleet.New(t.Client, o.runID, p.Fleet, newProgress(env.stderr))
	if err != nil {
		return err
	}
	f.SetStaleReadinessFixer(kubelet.StaleReadinessFixer(t.Config, nil))
	return o.up(ctx, env, f, p)
}

// up provisions the fleet and says how long each part took.
func (o *fleetOptions) up(ctx context.Context, env *cmdEnv, f *fleet.Fleet, p *profiles.Profile) error {
	start := time.Now()
	if err := f.Up(ctx); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted: %w\nto remove what was created: stormbench fleet down --run-id %s", err, o.runID)
		}
		return fmt.Errorf("%w\nto continue: run the same command again; to remove: stormbench fleet down --run-id %s", err, o.runID)
	}
	el := time.Since(start)
	tm := f.Timings()
	fmt.Fprintf(env.stdout, "Fleet %q is Ready: %d nodes, %d pods, %d services in namespace %s (%s)\n",
		o.runID, p.Fleet.Nodes, f.Plan().ExpectedPods, f.Plan().Services, f.Plan().Namespace, el.Round(100*time.Millisecond))
	fmt.Fprintf(env.stdout, "  nodes created %s, workloads created %s, all nodes Ready %s (%.0f nodes/s), all pods Ready %s (%.0f pods/s)\n",
		tm.NodesCreated.Round(100*time.Millisecond), tm.ObjectsCreated.Round(100*time.Millisecond),
		tm.NodesReady.Round(100*time.Millisecond), float64(p.Fleet.Nodes)/tm.NodesReady.Seconds(),
		tm.PodsReady.Round(100*time.Millisecond), float64(f.Plan().ExpectedPods)/tm.PodsReady.Seconds())
	fmt.Fprintf(env.stdout, "  stormbench peak RSS %.1f MiB; pods set Ready again after the node-lifecycle controller marked them (kwok#1464): %d\n", float64(self.ProcSelf{}.PeakRSS())/(1<<20), f.StaleReadinessFixed())
	return nil
}

// validateRunID checks a run id can be a label value and a name prefix.
func validateRunID(id string) error {
	if id == "" || len(id) > 40 {
		return usagef("run id %q must be 1 to 40 characters", id)
	}
	for i, r := range id {
		ok := r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || (r == '-' && i > 0 && i < len(id)-1)
		if !ok {
			return usagef("run id %q must be lower-case letters, digits and inner dashes", id)
		}
	}
	return nil
}
