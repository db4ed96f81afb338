package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	"github.com/stormbench/stormbench/bench"
	"github.com/stormbench/stormbench/bench/cluster"
	"github.com/stormbench/stormbench/bench/fleet"
	"github.com/stormbench/stormbench/bench/kubeversion"
	"github.com/stormbench/stormbench/bench/measure"
	"github.com/stormbench/stormbench/bench/outfile"
	"github.com/stormbench/stormbench/bench/poll"
	"github.com/stormbench/stormbench/profiles"
)

// fleetDigest identifies a profile's fleet: the SHA-256 of its resolved
// fleet section.
func fleetDigest(p *profiles.Profile) string {
	b, _ := json.Marshal(p.Fleet)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// snapshotWant is what a snapshot must match to be restored for p.
func snapshotWant(p *profiles.Profile) cluster.SnapshotMeta {
	return cluster.SnapshotMeta{ToolVersion: bench.Version, Profile: p.Metadata.Name, FleetDigest: fleetDigest(p)}
}

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
	emb, err := o.cluster.embedded(p, nil)
	if err != nil {
		return err
	}
	if o.sub == "save" {
		return o.save(ctx, env, emb, p, dest)
	}
	meta, restore, settle, err := restoreSnapshot(ctx, env, &o.cluster, emb, p, o.file, kubeversion.Version{})
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "Restored fleet %q (%d nodes, %d pods) into %q: restore %s, settled (all Ready) %s later\n",
		meta.RunID, meta.Nodes, meta.Pods, o.cluster.name, restore.Round(100*time.Millisecond), settle.Round(100*time.Millisecond))
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
	meta := snapshotWant(p)
	meta.RunID, meta.Nodes, meta.Pods, meta.APF = o.runID, len(nodes.Items), len(pods.Items), emb.APFMode()
	// SaveSnapshot renames over dest.File: a link's target, never the link.
	if err := emb.SaveSnapshot(ctx, dest.File, meta); err != nil {
		return err
	}
	// The components were restarted with the copy taken.
	if _, err := waitServing(ctx, env, &o.cluster, p); err != nil {
		return fmt.Errorf("after the snapshot: %w", err)
	}
	st, _ := os.Stat(dest.File)
	fmt.Fprintf(env.stdout, "Saved fleet %q (%d nodes, %d pods) to %s: %.1f MiB in %s\n", o.runID, meta.Nodes, meta.Pods, o.file, float64(st.Size())/(1<<20), time.Since(start).Round(100*time.Millisecond))
	return nil
}

// checkSnapshot reads a snapshot's metadata and refuses one made by another
// version or for another fleet than p's (bad input).
func checkSnapshot(file string, p *profiles.Profile) (cluster.SnapshotMeta, error) {
	meta, err := cluster.ReadSnapshotMeta(file)
	if err != nil {
		return meta, usagef("%v", err)
	}
	want := snapshotWant(p)
	want.KubeVersion = p.KubeVersion().String()
	if err := meta.Check(want); err != nil {
		return meta, usagef("refusing snapshot %s: %v", file, err)
	}
	return meta, nil
}

// restoreSnapshot starts the embedded cluster if needed, restores file into
// it, with the control plane of Kubernetes version into (zero: the
// cluster's), and waits until the fleet the snapshot holds is Ready again.
func restoreSnapshot(ctx context.Context, env *cmdEnv, o *clusterOptions, emb *cluster.Embedded, p *profiles.Profile, file string, into kubeversion.Version) (meta cluster.SnapshotMeta, restore, settle time.Duration, err error) {
	// Refuse a mismatched snapshot before starting anything.
	if meta, err = checkSnapshot(file, p); err != nil {
		return meta, 0, 0, err
	}
	if !emb.Exists() {
		fmt.Fprintf(env.stderr, "Starting embedded cluster %q (Kubernetes %s, 127.0.0.1 only)...\n", o.name, emb.KubeVersion())
		if err := emb.Up(ctx); err != nil {
			return meta, 0, 0, err
		}
	}
	// The restore's waits and timings are the real clock's (the
	// components run on it).
	clk := clock.RealClock{}
	start := clk.Now()
	if meta, err = emb.RestoreSnapshot(ctx, file, snapshotWant(p), into); err != nil {
		return meta, 0, 0, err
	}
	restore = clk.Since(start)
	o.kubeconfig = emb.ClientKubeconfig()
	t, err := waitServing(ctx, env, o, p)
	if err != nil {
		return meta, restore, 0, fmt.Errorf("the restored cluster: %w", err)
	}
	if err := emb.KubeVersion().CheckServer(t.ServerVersion, true); err != nil {
		return meta, restore, 0, fmt.Errorf("the restored cluster: %w", err)
	}
	// Up on a fleet that exists creates nothing (every object is there)
	// and waits until its nodes and pods are Ready: KWOK renewing the
	// restored leases, the controllers catching up.
	f, err := fleet.New(t.Client, meta.RunID, p.Fleet, newProgress(env.stderr))
	if err != nil {
		return meta, restore, 0, err
	}
	start = clk.Now()
	if err := f.Up(ctx); err != nil {
		return meta, restore, 0, fmt.Errorf("waiting for the restored fleet: %w", err)
	}
	// A component that exited while the API server settled (the
	// controller manager gives it 10 s) is started again, and the fleet
	// waited for once more with it leading.
	restarted, err := emb.EnsureRunning(ctx)
	if err != nil {
		return meta, restore, 0, fmt.Errorf("the restored cluster: %w", err)
	}
	if len(restarted) > 0 {
		fmt.Fprintf(env.stderr, "Started %s again: exited while the restored API server settled\n", strings.Join(restarted, ", "))
		if err := waitLeaders(ctx, t, restarted, clk.Now(), 2*time.Minute); err != nil {
			return meta, restore, 0, fmt.Errorf("the restored cluster: %w", err)
		}
		if err := f.WaitReady(ctx, p.Fleet.ReadyTimeout.Duration); err != nil {
			return meta, restore, 0, fmt.Errorf("waiting for the restored fleet: %w", err)
		}
	}
	settle = clk.Since(start)
	// Ready is not settled: the controllers relist and resync the restored
	// objects for a while after the fleet is Ready, and a baseline taken
	// then makes every figure relative to it wrong (it showed as negative
	// excess requests per restart). Wait until the request rate is steady.
	if src, ok := apiserverSource(emb); ok {
		quiet, err := measure.WaitSettled(ctx, src, clk, restoreSettle(p))
		if err != nil {
			return meta, restore, settle, fmt.Errorf("the restored cluster: %w", err)
		}
		fmt.Fprintf(env.stderr, "Restored cluster: %s\n", quiet)
	}
	return meta, restore, settle, nil
}

// apiserverSource is the embedded cluster's kube-apiserver /metrics, as the
// run's measurements scrape it.
func apiserverSource(emb *cluster.Embedded) (measure.MetricsSource, bool) {
	eps, err := emb.MetricsEndpoints()
	if err != nil {
		return measure.MetricsSource{}, false
	}
	for _, ep := range eps {
		if ep.Component == measure.ComponentAPIServer {
			return measure.HTTPSource(ep.Component, ep.URL, ep.Client), true
		}
	}
	return measure.MetricsSource{}, false
}

// waitLeaders waits until the restarted kube-controller-manager and
// kube-scheduler renew their leader leases after since: a restarted one
// takes its lease over once the restored holder's expires.
func waitLeaders(ctx context.Context, t *cluster.Target, restarted []string, since time.Time, timeout time.Duration) error {
	for _, name := range restarted {
		if name != "kube-controller-manager" && name != "kube-scheduler" {
			continue
		}
		w := poll.Wait{Interval: 500 * time.Millisecond, Timeout: timeout, What: "waiting for " + name + " to renew its leader lease after the restart"}
		err := w.Until(ctx, func(ctx context.Context) (bool, string, error) {
			l, err := t.Client.CoordinationV1().Leases(metav1.NamespaceSystem).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error(), nil
			}
			return l.Spec.RenewTime != nil && l.Spec.RenewTime.After(since), "last renewed before the restart", nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// waitServing connects to the embedded cluster once its API server serves
// again after kwokctl restarted the components, for up to two minutes.
func waitServing(ctx context.Context, env *cmdEnv, o *clusterOptions, p *profiles.Profile) (*cluster.Target, error) {
	var t *cluster.Target
	w := poll.Wait{Interval: 500 * time.Millisecond, Timeout: 2 * time.Minute, What: "waiting for the API server to serve"}
	err := w.Until(ctx, func(ctx context.Context) (bool, string, error) {
		var err error
		t, _, err = o.connect(ctx, env, p.Fleet.QPS, p.Fleet.Burst)
		if err != nil {
			return false, err.Error(), nil
		}
		return true, "", nil
	})
	return t, err
}

// restoreSettle is the rule a restored cluster's request rate must meet
// before the next storm: the profile's measurements.apiserver.restoreSettle,
// or WaitSettled's default (4 windows of 10 s); WaitSettled chooses the
// scrape interval from the window.
func restoreSettle(p *profiles.Profile) measure.SettleOptions {
	var o measure.SettleOptions
	if m := p.Measurements.APIServer; m != nil && m.RestoreSettle != nil {
		o.Window = m.RestoreSettle.Window.Duration
		o.Windows = m.RestoreSettle.Windows
	}
	return o
}
