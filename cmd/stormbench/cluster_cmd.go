package main

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/stormbench/stormbench/bench/cluster"
	"github.com/stormbench/stormbench/profiles"
)

func newClusterCmd(env *cmdEnv) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Manage the embedded control plane: up, down, status",
		Example: `  stormbench cluster up
  stormbench cluster up --name big --profile fleet-5k   # timing and tuning from the profile
  stormbench cluster up --wait 5m                       # a slow machine
  stormbench cluster up --kube-version 1.37             # make components KUBE_VERSION=v1.37.2 first
  stormbench cluster status --name big
  stormbench cluster down --name big`,
		RunE: needsSubcommand,
	}
	sub := func(name, short, long string) *cobra.Command {
		o := &clusterCmdOptions{sub: name, wait: 2 * time.Minute, output: "text"}
		c := &cobra.Command{
			Use:   name + " [flags]",
			Short: short,
			Long:  long,
			Args:  noArgs,
			RunE: func(c *cobra.Command, _ []string) error {
				if err := o.validate(); err != nil {
					return err
				}
				return o.run(c.Context(), env)
			},
		}
		o.addFlags(c.Flags())
		return c
	}
	cmd.AddCommand(
		sub("up", "Start the embedded control plane and wait until it serves", `Starts the embedded control plane (kwokctl binary runtime, 127.0.0.1 only) and
waits until it serves (--wait, default 2m; 0 does not wait): kube-apiserver
/readyz, kube-controller-manager and kube-scheduler /healthz and leader leases,
kwok-controller /healthz, and every component's /metrics as status checks them.`),
		sub("down", "Stop the embedded control plane and delete its files", ""),
		sub("status", "Show each component's health, version and the kubeconfig path", `Shows each component's health, version and the kubeconfig path; exit 0
when every component serves, 3 when the cluster is not running ("not
running") or a component is unhealthy. Needs no binaries (-o json|yaml).`),
	)
	return cmd
}

// clusterCmdOptions are the flags of cluster up, down and status.
type clusterCmdOptions struct {
	// sub is up, down or status.
	sub     string
	cluster clusterOptions
	// profile gives up its timing and tuning.
	profile string
	// wait bounds up's wait until every component serves; 0 does not wait.
	wait time.Duration
	// output is status's format.
	output string
}

func (o *clusterCmdOptions) addFlags(fs *pflag.FlagSet) {
	o.cluster.addFlags(fs, false)
	if o.sub == "up" {
		fs.StringVar(&o.profile, "profile", "", "Take timing, control-plane tuning and the Kubernetes version from this profile (name or file)")
		o.cluster.addKubeVersionFlag(fs, true)
		fs.DurationVar(&o.wait, "wait", o.wait, "Wait up to this long until every component serves (see cluster up --help); 0 returns once kwokctl has created the cluster")
	}
	if o.sub == "status" {
		fs.StringVarP(&o.output, "output", "o", o.output, "Output format: text, json or yaml")
	}
}

func (o *clusterCmdOptions) validate() error {
	if err := checkFormat(o.output); err != nil {
		return err
	}
	if o.wait < 0 {
		return usagef("--wait %s: give a duration of 0 or more (0 does not wait)", o.wait)
	}
	return nil
}

func (o *clusterCmdOptions) run(ctx context.Context, env *cmdEnv) error {
	var p *profiles.Profile
	if o.profile != "" {
		var err error
		if p, err = profiles.Load(o.profile); err != nil {
			return err
		}
	}
	if o.sub == "up" {
		if err := o.cluster.resolveKubeVersion(p, o.profile); err != nil {
			return err
		}
	}
	// kwokctl's own log lines are shown only when it fails. Status only
	// reads: it works without the control-plane binaries.
	e, err := o.cluster.embedded(p, o.sub == "status")
	if err != nil {
		return err
	}
	switch o.sub {
	case "up":
		return o.up(ctx, env, e)
	case "down":
		if err := e.Down(ctx); err != nil {
			return err
		}
		fmt.Fprintf(env.stdout, "Embedded cluster %q is down.\n", e.Name())
		return nil
	default:
		return o.status(ctx, env, e)
	}
}

func (o *clusterCmdOptions) up(ctx context.Context, env *cmdEnv, e *cluster.Embedded) error {
	if e.Exists() {
		// Bad input, not a failed start: nothing was tried.
		return usagef("embedded cluster %q already exists in %s: see `%s`, or remove it with `%s`", e.Name(), o.cluster.workDir, e.Command("status"), e.Command("down"))
	}
	fmt.Fprintf(env.stderr, "Starting embedded cluster %q (Kubernetes %s, 127.0.0.1 only)...\n", e.Name(), e.KubeVersion())
	if err := e.Up(ctx); err != nil {
		return err
	}
	if o.wait > 0 {
		if err := e.WaitHealthy(ctx, cluster.WaitOptions{Timeout: o.wait, Progress: waitProgress(env)}); err != nil {
			return err
		}
		// What the components report, once they serve: binaries of
		// another version in the version's directory are bad input.
		if err := e.CheckVersions(ctx); err != nil {
			return usagef("embedded cluster %q is up, but %v; remove it with `%s`", e.Name(), err, e.Command("down"))
		}
	}
	fmt.Fprintf(env.stdout, "Embedded cluster %q is up.\nkubeconfig: %s\nAPF:        %s%s\n", e.Name(), e.Kubeconfig(), e.APFMode(), apfNote(e))
	return nil
}

// status shows each component's health; an error when one is not healthy.
func (o *clusterCmdOptions) status(ctx context.Context, env *cmdEnv, e *cluster.Embedded) error {
	if !e.Exists() {
		return notRunning(env, e, o.output, o.cluster.workDir)
	}
	st, err := e.Status(ctx)
	if err != nil {
		return err
	}
	if o.output == "json" || o.output == "yaml" {
		return printStructured(env.stdout, o.output, map[string]any{"name": e.Name(), "kubeconfig": e.Kubeconfig(), "harnessKubeconfig": e.ClientKubeconfig(), "apf": e.APFMode(), "components": st})
	}
	fmt.Fprintf(env.stdout, "Cluster:    %s\nKubeconfig: %s\nAPF:        %s%s\n\n", e.Name(), e.Kubeconfig(), e.APFMode(), apfNote(e))
	if err := writeTable(env.stdout, "COMPONENT\tPID\tPROCESS\tHEALTH\tVERSION\tLOG", st, func(c cluster.ComponentStatus) string {
		return fmt.Sprintf("%s\t%d\t%s\t%s\t%s\t%s", c.Name, c.PID, fmtBool(c.Running, "running", "stopped"), fmtBool(c.Healthy, "ok", "unhealthy: "+c.Error), c.Version, c.Log)
	}); err != nil {
		return err
	}
	if slices.ContainsFunc(st, func(c cluster.ComponentStatus) bool { return !c.Healthy || !c.Running }) {
		return fmt.Errorf("embedded cluster %q is not healthy", e.Name())
	}
	return nil
}

// notRunning says that the embedded cluster does not run, in the format of
// -o, and exits 3 (as an unhealthy cluster does; LSB's "program is not
// running" too).
func notRunning(env *cmdEnv, e *cluster.Embedded, output, workDir string) error {
	existing := cluster.ExistingClusters(workDir)
	if existing == nil {
		existing = []string{}
	}
	if output == "json" || output == "yaml" {
		if err := printStructured(env.stdout, output, map[string]any{"name": e.Name(), "running": false, "existingClusters": existing}); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(env.stdout, "Embedded cluster %q is not running (work directory %s; existing clusters: %s). Start it with `stormbench cluster up --name %s`.\n", e.Name(), workDir, cmp.Or(strings.Join(existing, ", "), "none"), e.Name())
	}
	return fmt.Errorf("embedded cluster %q is not running", e.Name())
}

// waitProgress prints what cluster up still waits for, each time that
// changes.
func waitProgress(env *cmdEnv) func([]cluster.HealthCheck) {
	return func(waiting []cluster.HealthCheck) {
		fmt.Fprintf(env.stderr, "Waiting for %s...\n", strings.Join(mapped(waiting, cluster.HealthCheck.String), ", "))
	}
}

// apfNote says which identity stormbench's own requests use.
func apfNote(e *cluster.Embedded) string {
	if e.APFMode() == profiles.APFRealistic {
		return " (components under identities of their own; stormbench calls as " + cluster.UserHarness + " with " + e.ClientKubeconfig() + ")"
	}
	return " (every component is system:masters)"
}
