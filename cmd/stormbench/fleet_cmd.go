package main

import (
	"context"
	"fmt"
	"time"

	"github.com/stormbench/stormbench/bench/fleet"
	"github.com/stormbench/stormbench/bench/kubelet"
	"github.com/stormbench/stormbench/bench/measure"
	"github.com/stormbench/stormbench/profiles"
)

func runFleet(ctx context.Context, env *cmdEnv, args []string) error {
	sub, rest, err := subcommand(args, "up", "down", "snapshot")
	if err != nil {
		return err
	}
	if sub == "help" {
		fmt.Fprint(env.stdout, "Usage: stormbench fleet up|down|snapshot [flags]\n\n  up        create the profile's KWOK nodes and workloads (continues a previous partial run) and wait until all are Ready\n  down      delete every object carrying the run label and wait until it is gone\n  snapshot  save or restore the embedded cluster's etcd with a provisioned fleet (stormbench fleet snapshot --help)\n\nExamples:\n  stormbench fleet up --run-id f1 --profile quick\n  stormbench fleet snapshot save --run-id f1 --profile quick --file f1.snap\n  stormbench fleet down --run-id f1\n")
		return nil
	}
	if sub == "snapshot" {
		return runFleetSnapshot(ctx, env, rest)
	}
	var o clusterOptions
	var profile, runID string
	var nodes, podsPerNode int
	var timeout time.Duration
	usage := map[string]string{
		"up": `fleet up [flags]

Creates the profile's KWOK nodes and workloads, labelled with the run id, and
waits until every node and pod is Ready; run again, it continues a partial
fleet.

Examples:
  stormbench fleet up --run-id f1 --profile quick
  stormbench fleet up --run-id f1k --profile fleet-1k --nodes 1000 --pods-per-node 10`,
		"down": `fleet down [flags]

Deletes every object carrying the run id's label and waits until it is gone.

Examples:
  stormbench fleet down --run-id f1
  stormbench fleet down --run-id f1k --kubeconfig ~/.kube/config --context big --yes`,
	}[sub]
	fs := newFlagSet(env, "fleet "+sub, usage)
	o.addFlags(fs, true)
	fs.StringVar(&runID, "run-id", "fleet", "Run id: the value of the stormbench.io/run label on every object")
	fs.StringVar(&runID, "run", "fleet", "Run id: the value of the stormbench.io/run label on every object")
	_ = fs.MarkDeprecated("run", "use --run-id")
	fs.StringVar(&profile, "profile", "quick", "Profile whose fleet section to use (name or file)")
	if sub == "up" {
		fs.IntVar(&nodes, "nodes", 0, "Override the profile's node count")
		fs.IntVar(&podsPerNode, "pods-per-node", 0, "Override the profile's pods per node")
	} else {
		fs.DurationVar(&timeout, "timeout", 10*time.Minute, "How long to wait for the deletion")
	}
	if err := parse(fs, rest); err != nil {
		return err
	}
	if err := validateRunID(runID); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"nodes", nodes}, {"pods-per-node", podsPerNode}} {
		if fs.Changed(f.name) && f.v < 1 {
			return usagef("--%s %d: must be at least 1 (leave it out for the profile's)", f.name, f.v)
		}
	}
	currentRunID.Store(runID)
	p, err := profiles.Load(profile)
	if err != nil {
		return err
	}
	if nodes > 0 || podsPerNode > 0 {
		if nodes > 0 {
			p.Fleet.Nodes = nodes
		}
		if podsPerNode > 0 {
			p.Fleet.PodsPerNode = podsPerNode
			p.Fleet.MaxPodsPerNode = 0
		}
		profiles.SetDefaults(p)
		if errs := profiles.Validate(p); len(errs) > 0 {
			return &profiles.ValidationError{Source: profile + " (with flag overrides)", Errs: errs}
		}
	}
	if sub == "down" && timeout <= 0 {
		return usagef("--timeout %s: give a duration above 0, such as 5m", timeout)
	}
	t, _, err := o.connect(ctx, env, p.Fleet.QPS, p.Fleet.Burst)
	if err != nil {
		return apiError(ctx, "connecting", timeout, err)
	}
	prog := newProgress(env.stderr)
	f, err := fleet.New(t.Client, runID, p.Fleet, prog)
	if err != nil {
		return err
	}
	f.SetStaleReadinessFixer(kubelet.StaleReadinessFixer(t.Config, nil))
	switch sub {
	case "up":
		start := time.Now()
		if err := f.Up(ctx); err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("interrupted: %w\nto remove what was created: stormbench fleet down --run-id %s", err, runID)
			}
			return fmt.Errorf("%w\nto continue: run the same command again; to remove: stormbench fleet down --run-id %s", err, runID)
		}
		el := time.Since(start)
		tm := f.Timings()
		fmt.Fprintf(env.stdout, "Fleet %q is Ready: %d nodes, %d pods, %d services in namespace %s (%s)\n",
			runID, p.Fleet.Nodes, f.Plan().ExpectedPods, f.Plan().Services, f.Plan().Namespace, el.Round(100*time.Millisecond))
		fmt.Fprintf(env.stdout, "  nodes created %s, workloads created %s, all nodes Ready %s (%.0f nodes/s), all pods Ready %s (%.0f pods/s)\n",
			tm.NodesCreated.Round(100*time.Millisecond), tm.ObjectsCreated.Round(100*time.Millisecond),
			tm.NodesReady.Round(100*time.Millisecond), float64(p.Fleet.Nodes)/tm.NodesReady.Seconds(),
			tm.PodsReady.Round(100*time.Millisecond), float64(f.Plan().ExpectedPods)/tm.PodsReady.Seconds())
		fmt.Fprintf(env.stdout, "  stormbench peak RSS %.1f MiB; pods set Ready again after the node-lifecycle controller marked them (kwok#1464): %d\n", float64(measure.PeakRSS())/(1<<20), f.StaleReadinessFixed())
		return nil
	default:
		if err := f.Down(ctx, timeout); err != nil {
			return apiError(ctx, fmt.Sprintf("deleting fleet %q", runID), timeout, err)
		}
		fmt.Fprintf(env.stdout, "Fleet %q deleted.\n", runID)
		return nil
	}
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
