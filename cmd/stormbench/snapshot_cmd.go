package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stormbench/stormbench/bench"
	"github.com/stormbench/stormbench/bench/cluster"
	"github.com/stormbench/stormbench/bench/fleet"
	"github.com/stormbench/stormbench/bench/kubeversion"
	"github.com/stormbench/stormbench/bench/outfile"
	"github.com/stormbench/stormbench/profiles"
)

func newFleetSnapshotCmd(env *cmdEnv) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "snapshot",
		Short: "Save or restore the embedded cluster's etcd with a provisioned fleet",
		Long: `Saves or restores the embedded cluster's etcd with a provisioned fleet.

A snapshot records the stormbench and Kubernetes versions, the profile and a
digest of its fleet section; restore (and run --from-snapshot) refuse one made
by another version or for another fleet. Provisioning a large fleet is bounded
by the control plane, and is most of a large run's time; restoring skips it.
Embedded cluster only.`,
		Example: `  stormbench fleet snapshot save --run-id f1 --profile quick --file f1.snap
  stormbench fleet snapshot restore --profile quick --file f1.snap`,
		RunE: needsSubcommand,
	}
	sub := func(name, short string) *cobra.Command {
		o := &snapshotOptions{sub: name, profile: "quick", runID: "fleet"}
		c := &cobra.Command{
			Use:   name + " --file FILE [flags]",
			Short: short,
			Args:  noArgs,
			RunE:  func(c *cobra.Command, _ []string) error { return o.run(c.Context(), env) },
		}
		o.addFlags(c.Flags())
		return c
	}
	cmd.AddCommand(
		sub("save", "Write the embedded cluster's etcd, holding a provisioned fleet, to --file"),
		sub("restore", "Start the embedded cluster --name if it is not running, replace its etcd with --file and wait until the fleet is Ready again"),
	)
	return cmd
}

// run saves or restores a snapshot.
func (o *snapshotOptions) run(ctx context.Context, env *cmdEnv) error {
	if o.file == "" {
		return usagef("--file is required")
	}
	p, err := profiles.Load(o.profile)
	if err != nil {
		return err
	}
	// --file is checked before the binaries are looked for: where a save
	// goes, what a restore holds.
	var dest outfile.Target
	if o.sub == "save" {
		if err := validateRunID(o.runID); err != nil {
			return err
		}
		if dest, err = o.saveDest(); err != nil {
			return err
		}
	} else if _, err := checkSnapshot(o.file, p); err != nil {
		return err
	}
	emb, err := o.cluster.embedded(p, false)
	if err != nil {
		return err
	}
	if o.sub == "save" {
		return o.save(ctx, env, emb, p, dest)
	}
	r, err := bench.RestoreFleet(ctx, emb, p, o.file, kubeversion.Version{}, newProgress(env.stderr), stderrLogf(env))
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "Restored fleet %q (%d nodes, %d pods) into %q: restore %s, settled (all Ready) %s later\n",
		r.Meta.RunID, r.Meta.Nodes, r.Meta.Pods, o.cluster.name, r.Restore.Round(100*time.Millisecond), r.Settle.Round(100*time.Millisecond))
	return nil
}

// snapshotOptions are the flags of fleet snapshot save and restore.
type snapshotOptions struct {
	// sub is save or restore.
	sub     string
	cluster clusterOptions
	file    string
	profile string
	// runID and force are save's.
	runID string
	force bool
}

func (o *snapshotOptions) addFlags(fs *pflag.FlagSet) {
	o.cluster.addFlags(fs, false)
	fs.StringVar(&o.file, "file", "", "Snapshot file (required)")
	fs.StringVar(&o.profile, "profile", o.profile, "Profile whose fleet the snapshot holds (name or file)")
	if o.sub == "save" {
		fs.StringVar(&o.runID, "run-id", o.runID, "Run id of the fleet to save (the stormbench.io/run label)")
		fs.StringVar(&o.runID, "run", o.runID, "Run id of the fleet to save (the stormbench.io/run label)")
		_ = fs.MarkDeprecated("run", "use --run-id")
		fs.BoolVar(&o.force, "force", false, "Overwrite an existing snapshot file")
	}
}

// saveDest checks the snapshot file can be written: a regular file,
// replaced atomically; a device or FIFO is refused (the cluster would be
// stopped for nothing), and a link is followed, its target replaced.
func (o *snapshotOptions) saveDest() (outfile.Target, error) {
	dest, err := outfile.Resolve(o.file, outfile.Options{Force: o.force})
	if err != nil {
		return dest, usagef("--file: %v", err)
	}
	if dest.Kind != outfile.New && dest.Kind != outfile.Replace {
		return dest, usagef("--file %s: a snapshot is written to a regular file, not a device, FIFO or stdout", o.file)
	}
	if err := outfile.Check(o.file, outfile.Options{Force: o.force}); err != nil {
		return dest, usagef("--file: %v", err)
	}
	return dest, nil
}

// save saves the running embedded cluster's etcd with the fleet of runID
// to dest (saveDest).
func (o *snapshotOptions) save(ctx context.Context, env *cmdEnv, emb *cluster.Embedded, p *profiles.Profile, dest outfile.Target) error {
	if !emb.Exists() {
		return usagef("the embedded cluster %q is not running (start it with `stormbench cluster up`, provision with `stormbench fleet up`)", o.cluster.name)
	}
	t, _, err := o.cluster.connect(ctx, env, p.Fleet.QPS, p.Fleet.Burst)
	if err != nil {
		return err
	}
	sel := metav1.ListOptions{LabelSelector: fleet.RunLabel + "=" + o.runID}
	nodes, err := t.Client.CoreV1().Nodes().List(ctx, sel)
	if err != nil {
		return fmt.Errorf("listing the fleet's nodes: %w", err)
	}
	if len(nodes.Items) == 0 {
		return usagef("no nodes of run %q in the embedded cluster %q: provision it with `stormbench fleet up --run-id %s --profile %s`", o.runID, o.cluster.name, o.runID, o.profile)
	}
	pods, err := t.Client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, sel)
	if err != nil {
		return fmt.Errorf("listing the fleet's pods: %w", err)
	}
	start := time.Now()
	if _, err := bench.SaveFleet(ctx, emb, p, dest.File, o.runID, len(nodes.Items), len(pods.Items)); err != nil {
		return err
	}
	st, _ := os.Stat(dest.File)
	fmt.Fprintf(env.stdout, "Saved fleet %q (%d nodes, %d pods) to %s: %.1f MiB in %s\n", o.runID, len(nodes.Items), len(pods.Items), o.file, float64(st.Size())/(1<<20), time.Since(start).Round(100*time.Millisecond))
	return nil
}

// checkSnapshot reads a snapshot's metadata and refuses one made by another
// version or for another fleet than p's (bad input).
func checkSnapshot(file string, p *profiles.Profile) (cluster.SnapshotMeta, error) {
	meta, err := cluster.ReadSnapshotMeta(file)
	if err != nil {
		return meta, usagef("%v", err)
	}
	if err := meta.Check(bench.SnapshotWant(p)); err != nil {
		return meta, usagef("refusing snapshot %s: %v", file, err)
	}
	return meta, nil
}
