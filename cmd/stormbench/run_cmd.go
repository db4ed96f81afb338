package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/stormbench/stormbench/bench"
	"github.com/stormbench/stormbench/bench/cluster"
	"github.com/stormbench/stormbench/bench/decodeerror"
	"github.com/stormbench/stormbench/bench/kubeversion"
	"github.com/stormbench/stormbench/bench/measure/self"
	"github.com/stormbench/stormbench/bench/outfile"
	"github.com/stormbench/stormbench/bench/report"
	"github.com/stormbench/stormbench/bench/result"
	"github.com/stormbench/stormbench/profiles"
)

func newRunCmd(env *cmdEnv) *cobra.Command {
	return newStormCmd(env, &runOptions{}, "run [--profile NAME|FILE] [flags]",
		"Provision a fleet, run a storm profile, print the summary and write the result", `Provisions the profile's fleet (what exists is kept), runs every variant and
repetition of its storm, prints the summary and writes the result file.
Without --kubeconfig it uses the embedded cluster, starting it if needed.`, `  stormbench run --profile quick
  stormbench run --profile quick --dry-run                  # the plan, nothing started
  stormbench run --profile fleet-1k --result results/f1k.json --cpuprofile cpu.pprof
  stormbench run --profile my-storm.yaml --kubeconfig ~/.kube/config --context staging --yes
  stormbench run --profile big.yaml --shard 0/4 --start-at 2026-12-01T12:00:00Z --keep-fleet ...
  stormbench run --profile fleet-1k --from-snapshot f1k.snap --restore-each   # every variant from the same fleet`)
}

// newSweepCmd runs a capacity sweep: the profile's storm, all at once, at
// growing wave sizes on one fleet, and reports the largest wave that keeps
// mutating API p99 ≤ 1s, zero 429s and zero service-outage seconds.
func newSweepCmd(env *cmdEnv) *cobra.Command {
	return newStormCmd(env, &runOptions{sweep: true}, "sweep --profile NAME|FILE --wave-sizes 50,100,200 [flags]",
		"Capacity sweep: the storm at growing wave sizes; the max safe restart wave", `Runs the profile's storm all at once at each wave size, on one fleet, and
prints per size the mutating p99, 429s, outage seconds and peak request
rate, and the largest size for which every SLO held.`, `  stormbench sweep --profile fleet-1k --wave-sizes 50,100,200,400
  stormbench sweep --profile quick --wave-sizes 5,10,20 --dry-run`)
}

func newStormCmd(env *cmdEnv, o *runOptions, use, short, long, example string) *cobra.Command {
	cmd := &cobra.Command{
		Use:     use,
		Short:   short,
		Long:    long,
		Example: example,
		Args:    noArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return o.run(cmd.Context(), env, cmd.Flags()) },
	}
	o.addFlags(cmd.Flags())
	completeValues(cmd, "seeds", "fixed", "vary")
	return cmd
}

// run runs the storm (or sweep) the parsed flags fs describe.
func (o *runOptions) run(ctx context.Context, env *cmdEnv, fs *pflag.FlagSet) error {
	rp, err := o.resolve(fs.Changed("seed"))
	if err != nil {
		return err
	}
	if o.dryRun {
		return o.printDryRun(env, rp)
	}
	if o.timeout <= 0 {
		return o.runPlan(ctx, env, rp, nil)
	}
	// The run stops at the deadline as it does on Ctrl-C: nodes brought
	// back, the fleet deleted, what was measured written.
	timedOut := fmt.Errorf("not done within --timeout %s: %w", o.timeout, context.DeadlineExceeded)
	ctx, cancel := context.WithTimeoutCause(ctx, o.timeout, timedOut)
	defer cancel()
	return o.runPlan(ctx, env, rp, timedOut)
}

// runPlan runs rp; timedOut is the cause of ctx's end when --timeout
// passes, which the error then names.
func (o *runOptions) runPlan(ctx context.Context, env *cmdEnv, rp *runPlan, timedOut error) (err error) {
	defer func() {
		if err != nil && timedOut != nil && context.Cause(ctx) == timedOut {
			err = fmt.Errorf("run stopped at --timeout %s: %w", o.timeout, err)
		}
	}()
	currentRunID.Store(rp.runID)
	file, err := newResultFile(rp.path, o.force)
	if err != nil {
		return err
	}
	heapProfile, stopProfiling, err := o.startProfiling(env)
	if err != nil {
		return err
	}
	defer stopProfiling()
	logf := stderrLogf(env)
	emb, stopCluster, err := o.startEmbedded(ctx, env, rp, logf)
	if err != nil {
		return err
	}
	defer stopCluster()
	target, _, err := o.cluster.connect(ctx, env, rp.p.Fleet.QPS, rp.p.Fleet.Burst)
	if err != nil {
		return err
	}
	logf("Target %s (Kubernetes %s), run %s, result %s", target.Host, target.ServerVersion, rp.runID, rp.path)
	if err := checkServerVersion(rp.p.KubeVersion(), target.ServerVersion, emb != nil, rp.p.Kubernetes.Version != ""); err != nil {
		return err
	}
	res, runErr := bench.Run(ctx, bench.Options{
		Profile: rp.p, RunID: rp.runID, Target: target, Embedded: emb,
		Progress: newProgress(env.stderr), Logf: logf, Checkpoint: file.write,
		KeepFleet: o.skipFleetDelete(emb, logf), ShardIndex: rp.shardI, ShardCount: rp.shardN, StartAt: rp.at,
		SweepWaveSizes: rp.sizes, HeapProfile: heapProfile,
		RestoreEach: !o.noRestore, FromSnapshot: o.fromSnapshot,
	})
	if err := file.flush(); err != nil {
		runErr = errors.Join(runErr, err)
	}
	if err := o.printResult(env, res, rp.path); err != nil {
		return err
	}
	return file.runError(runErr, context.Cause(ctx) == timedOut && timedOut != nil)
}

// runOptions are the flags of run and sweep.
type runOptions struct {
	// sweep is set for the sweep command (--wave-sizes).
	sweep   bool
	cluster clusterOptions

	profile, runID, outDir, outFile, output string
	shard, startAt, waveSizes, fromSnapshot string
	restoreEach, noRestore                  bool
	repetitions                             int
	seeds                                   string
	cpuProfile, memProfile                  string
	keepCluster, keepFleet, dryRun, force   bool
	seed                                    int64
	timeout                                 time.Duration
}

// skipFleetDelete says the fleet is left in place at the end: with
// --keep-fleet, and in an ephemeral embedded cluster, which takes its fleet
// with it (deleting tens of thousands of pods one namespace at a time first
// would only add minutes: 1.5 minutes for 3,000 pods here).
func (o *runOptions) skipFleetDelete(emb *cluster.Embedded, logf func(string, ...any)) bool {
	if o.keepFleet {
		return true
	}
	if emb != nil && !o.keepCluster {
		logf("The fleet is not deleted object by object: it goes with the embedded cluster")
		return true
	}
	return false
}

// runPlan is what a run's flags resolve to.
type runPlan struct {
	p              *profiles.Profile
	runID, path    string
	sizes          []int
	shardI, shardN int
	at             time.Time
	snapshot       cluster.SnapshotMeta
}

// addFlags declares run's (and sweep's) flags on fs.
func (o *runOptions) addFlags(fs *pflag.FlagSet) {
	if o.sweep {
		fs.StringVar(&o.waveSizes, "wave-sizes", "", "Comma-separated wave sizes (nodes restarted at once), smallest first")
	}
	fs.StringVar(&o.profile, "profile", "quick", "Storm profile: a built-in name (see: stormbench profiles list) or a YAML file")
	o.cluster.addFlags(fs, true)
	o.cluster.addKubeVersionFlag(fs, true)
	fs.StringVar(&o.runID, "run-id", "", "Run id, the stormbench.io/run label value (default: <profile>-<timestamp>)")
	fs.Int64Var(&o.seed, "seed", 0, "Override the profile's seed")
	fs.StringVar(&o.outDir, "output-dir", "results", "Directory for the result file <run-id>.json")
	fs.StringVar(&o.outFile, "result", "", "Result file path (overrides --output-dir)")
	fs.BoolVar(&o.force, "force", false, "Overwrite an existing result file (and --cpuprofile, --memprofile files)")
	fs.StringVarP(&o.output, "output", "o", "text", "Summary format on stdout: text, or json/yaml for the whole result document")
	fs.BoolVar(&o.keepCluster, "keep-cluster", false, "Leave the embedded cluster running at the end")
	fs.BoolVar(&o.keepFleet, "keep-fleet", false, "Leave the fleet (nodes, workloads) in place at the end")
	fs.BoolVar(&o.dryRun, "dry-run", false, "Check what the run would check before touching a cluster (flags, profile, kubeconfig and context, outputs, binaries, --start-at), print every problem, or the plan and start time (stderr) and the resolved profile (stdout), and exit")
	fs.DurationVar(&o.timeout, "timeout", 0, "Stop the run after this long, as Ctrl-C does (nodes brought back, the fleet deleted, a partial result written), and exit 3 naming what failed (0: no limit)")
	fs.StringVar(&o.shard, "shard", "", "Run only shard i of n (\"i/n\") of the restarts; the schedule is computed from the whole fleet")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "Write a pprof CPU profile of stormbench itself to this file")
	fs.StringVar(&o.memProfile, "memprofile", "", "Write a pprof heap profile of stormbench itself, taken at its peak RSS during the storms, to this file")
	fs.StringVar(&o.startAt, "start-at", "", "RFC 3339 time at which the storm starts (to coordinate shards)")
	fs.StringVar(&o.fromSnapshot, "from-snapshot", "", "Start the embedded cluster from this fleet snapshot (stormbench fleet snapshot save) instead of provisioning; the run id is the snapshot's")
	fs.BoolVar(&o.restoreEach, "restore-each", false, "With --from-snapshot: restore the snapshot again before every variant and repetition after the first, so each starts from the identical fleet (the result records each restore's time); the default with more than one storm")
	fs.BoolVar(&o.noRestore, "no-restore", false, "Embedded cluster: run every storm on the state the previous one left, instead of restoring the fleet snapshot taken after provisioning before each")
	fs.IntVar(&o.repetitions, "repetitions", 0, "Run every variant this many times (1 to 100; overrides the profile's repetitions), in blocks of one storm per variant, shuffled per block from the seed (a sweep keeps its wave sizes growing in every block)")
	fs.StringVar(&o.seeds, "seeds", "", "Which schedule the blocks of repetitions play (overrides the profile's repetitions.seeds): fixed, the seed's in every block (the intervals cover run-to-run noise only), or vary, each block its own seed derived from the seed (the intervals cover the schedule too)")
}

// resolve checks the flags and loads the profile, everything a run checks
// before it starts anything, and returns every problem found at once (a
// usage error, exit 2); seedSet says --seed was given. With --dry-run it
// also checks the component binaries an embedded cluster would need.
func (o *runOptions) resolve(seedSet bool) (*runPlan, error) {
	var problems []error
	add := func(err error) {
		if err != nil {
			problems = append(problems, err)
		}
	}
	add(checkFormat(o.output))
	p, err := profiles.Load(o.profile)
	add(err)
	// --kube-version is checked whether or not the profile loaded.
	add(o.cluster.resolveKubeVersion(p, o.profile))
	rp := &runPlan{p: p, runID: o.runID}
	if p != nil && o.repetitions != 0 {
		if o.repetitions < 1 || o.repetitions > 100 {
			add(usagef("--repetitions %d: must be between 1 and 100", o.repetitions))
		} else {
			p.Repetitions.Count = o.repetitions
		}
	}
	if p != nil && o.seeds != "" {
		switch o.seeds {
		case profiles.SeedsFixed, profiles.SeedsVary:
			p.Repetitions.Seeds = o.seeds
		default:
			add(usagef("--seeds %q: one of %s (every block replays the seed's schedule) or %s (each block draws its own)", decodeerror.Shorten(o.seeds, 40), profiles.SeedsFixed, profiles.SeedsVary))
		}
	}
	if o.timeout < 0 {
		add(usagef("--timeout %s: give a duration, such as 30m, or 0 for no limit", o.timeout))
	}
	if o.restoreEach && o.noRestore {
		add(usagef("--restore-each and --no-restore: give one"))
	}
	if o.shard != "" {
		var err error
		rp.shardI, rp.shardN, err = parseShard(o.shard)
		add(err)
	}
	if o.startAt != "" {
		if at, err := time.Parse(time.RFC3339, o.startAt); err != nil {
			add(usagef("--start-at: %q is not a time in RFC 3339, e.g. 2026-12-03T18:00:00Z", decodeerror.Shorten(o.startAt, 60)))
		} else {
			rp.at = at
		}
	}
	if o.restoreEach && o.fromSnapshot == "" {
		add(usagef("--restore-each restores the --from-snapshot fleet: give --from-snapshot"))
	}
	if p != nil {
		o.resolveProfile(rp, seedSet, add)
	}
	if rp.runID != "" {
		add(validateRunID(rp.runID))
	}
	rp.path = o.outFile
	if rp.path == "" {
		rp.path = filepath.Join(o.outDir, rp.runID+".json")
	}
	problems = append(problems, o.checkEnvironment(rp, time.Now())...)
	if err := joinProblems(problems); err != nil {
		return nil, err
	}
	return rp, nil
}

// resolveProfile applies the flags that change the loaded profile rp.p
// (the sweep's wave sizes, --seed, the snapshot, the shard count, a
// generated run id, the control plane's CPU budget), passing each problem
// to add.
func (o *runOptions) resolveProfile(rp *runPlan, seedSet bool, add func(error)) {
	p := rp.p
	if o.sweep {
		var err error
		rp.sizes, err = parseWaveSizes(o.waveSizes, p)
		add(err)
	}
	if seedSet {
		p.Seed = o.seed
	}
	if o.fromSnapshot != "" {
		add(o.checkSnapshot(rp))
	}
	if o.restoreEach && p.Fleet.RealKubelets > 0 {
		add(usagef("--restore-each: the profile's %d real kubelets keep their own state outside the snapshot; not with fleet.realKubelets", p.Fleet.RealKubelets))
	}
	if p.ComparesVersions() {
		switch {
		case o.cluster.kubeconfig != "":
			add(usagef("the profile's variants run on other Kubernetes versions, each restored into its own control plane: the embedded cluster only, not --kubeconfig"))
		case o.noRestore, rp.shardN > 1:
			add(usagef("the profile's variants run on other Kubernetes versions, each restored into its own control plane: not with --no-restore or --shard"))
		}
		for _, v := range p.ResolvedVariants() {
			if _, err := cluster.FindComponentsFor(o.cluster.binDir, p.VariantVersion(&v)); cluster.IsVersionNotBuilt(err) {
				add(usagef("variant %s: %v", v.Name, err))
			}
		}
	}
	if rp.shardN > p.Fleet.Nodes {
		add(usagef("--shard %s: %d shards of a fleet of %d nodes; give at most one shard per node", o.shard, rp.shardN, p.Fleet.Nodes))
	}
	if rp.runID == "" {
		rp.runID = fmt.Sprintf("%s-%s", p.Metadata.Name, time.Now().UTC().Format("0102-150405"))
	}
	if cpus := p.ControlPlane.CPUs; cpus > 0 {
		if o.cluster.kubeconfig != "" {
			add(usagef("controlPlane.cpus %g budgets the embedded control plane: not with --kubeconfig (that cluster is not stormbench's to limit)", cpus))
		} else if err := cluster.CheckCPUBudget(cpus); err != nil {
			add(usageError{err})
		}
	}
}

// joinProblems is nil for none, the problem for one, and a usage error
// listing them for more.
func joinProblems(problems []error) error {
	switch len(problems) {
	case 0:
		return nil
	case 1:
		return problems[0]
	}
	msgs := make([]string, len(problems))
	for i, e := range problems {
		msgs[i] = "  - " + e.Error()
	}
	return usagef("%d problems:\n%s", len(problems), strings.Join(msgs, "\n"))
}

// checkEnvironment checks what the run would touch before it touches a
// cluster: --start-at not in the past, the kubeconfig and its context, the
// outputs writable (by the checks the run's writers make, which leave
// nothing behind), the component binaries of
// an embedded cluster of a version other than the default (a version that
// is not built names the make command that builds it) and, with
// --dry-run, of any version. It returns every problem.
func (o *runOptions) checkEnvironment(rp *runPlan, now time.Time) []error {
	var problems []error
	if !rp.at.IsZero() && !rp.at.After(now) {
		problems = append(problems, usagef("--start-at %s is in the past (now %s): the storm would start at once (a shard out of step with the others); give a time after provisioning ends",
			rp.at.Format(time.RFC3339), now.UTC().Format(time.RFC3339)))
	}
	if kc := o.cluster.kubeconfig; kc != "" {
		if !o.cluster.isEmbeddedKubeconfig(kc) && o.cluster.context == "" {
			problems = append(problems, usagef("--context is required for a cluster other than the embedded one (kubeconfig %s)", kc))
		} else if _, _, err := cluster.LoadKubeconfig(kc, o.cluster.context); err != nil {
			problems = append(problems, usageError{err})
		}
	} else if _, err := cluster.FindComponentsFor(o.cluster.binDir, o.cluster.versionFor(rp.p)); err != nil {
		switch {
		case cluster.IsVersionNotBuilt(err):
			problems = append(problems, err)
		case o.dryRun:
			problems = append(problems, usagef("the embedded cluster needs the component binaries: %v", err))
		}
	}
	if rp.runID != "" {
		if err := checkResult(rp.path, o.force); err != nil {
			problems = append(problems, err)
		}
	}
	for _, f := range []struct{ flag, path string }{{"--cpuprofile", o.cpuProfile}, {"--memprofile", o.memProfile}} {
		if f.path != "" {
			if err := checkProfileOutput(f.flag, f.path, o.force); err != nil {
				problems = append(problems, err)
			}
		}
	}
	return problems
}

// checkSnapshot refuses a mismatched snapshot before anything starts; the
// run id is the snapshot's.
func (o *runOptions) checkSnapshot(rp *runPlan) error {
	if o.cluster.kubeconfig != "" || o.shard != "" {
		return usagef("--from-snapshot restores into the embedded cluster: not with --kubeconfig or --shard")
	}
	meta, err := cluster.ReadSnapshotMeta(o.fromSnapshot)
	if err != nil {
		return usagef("--from-snapshot: %v", err)
	}
	if err := meta.Check(bench.SnapshotWant(rp.p)); err != nil {
		return usagef("--from-snapshot %s: %v", o.fromSnapshot, err)
	}
	if rp.runID != "" && rp.runID != meta.RunID {
		return usagef("--run-id %q: the snapshot's fleet is run %q", rp.runID, meta.RunID)
	}
	rp.runID, rp.snapshot = meta.RunID, meta
	return nil
}

// printDryRun prints the plan to stderr and the resolved profile to stdout
// (-o json prints JSON): everything a run would check has been checked.
func (o *runOptions) printDryRun(env *cmdEnv, rp *runPlan) error {
	if err := writePlan(env.stderr, rp.p, rp.runID, rp.sizes, rp.shardI, rp.shardN); err != nil {
		return err
	}
	writeStart(env.stderr, rp.at, time.Now())
	fmt.Fprintf(env.stderr, "Result: %s\n", rp.path)
	format := "yaml"
	if o.output == "json" {
		format = "json"
	}
	return printStructured(env.stdout, format, rp.p)
}

// startProfiling starts the --cpuprofile and --memprofile profiles; stop
// ends them (a heap profile is written if no storm ran).
func (o *runOptions) startProfiling(env *cmdEnv) (heap *self.PeakHeapProfile, stop func(), err error) {
	var stops []func()
	stop = func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	if o.cpuProfile != "" {
		// Written by the rules of every output: renamed into place when
		// profiling stops, or written into a device or FIFO.
		f, err := outfile.Create(o.cpuProfile, outfile.Options{Force: o.force})
		if err != nil {
			return nil, nil, usagef("--cpuprofile: %v", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Abort()
			stop()
			return nil, nil, fmt.Errorf("--cpuprofile: %w", err)
		}
		stops = append(stops, func() {
			pprof.StopCPUProfile()
			if err := f.Close(); err != nil {
				fmt.Fprintf(env.stderr, "warning: --cpuprofile: %v\n", err)
			}
		})
	}
	if o.memProfile != "" {
		if err := checkProfileOutput("--memprofile", o.memProfile, o.force); err != nil {
			stop()
			return nil, nil, err
		}
		heap = &self.PeakHeapProfile{Path: o.memProfile}
		stops = append(stops, func() {
			if err := heap.Finish(); err != nil {
				fmt.Fprintf(env.stderr, "warning: --memprofile: %v\n", err)
			}
		})
	}
	return heap, stop, nil
}

// stderrLogf prints one time-stamped progress line to stderr.
func stderrLogf(env *cmdEnv) func(format string, a ...any) {
	return func(format string, a ...any) {
		fmt.Fprintf(env.stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, a...)...)
	}
}

// startEmbedded starts an ephemeral embedded cluster for the run when no
// --kubeconfig is given, restoring the --from-snapshot fleet, and points
// the cluster options at it; stop stops it unless --keep-cluster. Without
// an embedded cluster emb is nil and stop does nothing.
func (o *runOptions) startEmbedded(ctx context.Context, env *cmdEnv, rp *runPlan, logf func(string, ...any)) (emb *cluster.Embedded, stop func(), err error) {
	stop = func() {}
	if o.cluster.kubeconfig != "" {
		return nil, stop, nil
	}
	o.cluster.name = "sb-" + rp.runID
	if emb, err = o.cluster.embedded(rp.p, false); err != nil {
		return nil, stop, err
	}
	logf("Starting embedded cluster %s (Kubernetes %s, 127.0.0.1 only)", o.cluster.name, emb.KubeVersion())
	if stop, err = emb.UpFor(ctx, o.keepCluster, env.stderr, logf); err != nil {
		return nil, stop, err
	}
	o.cluster.kubeconfig = emb.ClientKubeconfig()
	if o.fromSnapshot != "" {
		meta := rp.snapshot
		logf("Restoring fleet %q (%d nodes, %d pods) from %s", meta.RunID, meta.Nodes, meta.Pods, o.fromSnapshot)
		r, err := bench.RestoreFleet(ctx, emb, rp.p, o.fromSnapshot, kubeversion.Version{}, newProgress(env.stderr), logf)
		if err != nil {
			stop()
			return nil, func() {}, err
		}
		logf("Snapshot restored in %s; fleet settled (all Ready) %s later", r.Restore.Round(100*time.Millisecond), r.Settle.Round(100*time.Millisecond))
	}
	return emb, stop, nil
}

// printResult prints the sweep table and the summary, or the whole result
// document with -o json|yaml.
func (o *runOptions) printResult(env *cmdEnv, res *result.Result, path string) error {
	if o.sweep && res != nil && o.output != "json" && o.output != "yaml" {
		fmt.Fprintln(env.stdout)
		if err := writeSweep(env.stdout, res); err != nil {
			return err
		}
	}
	if res == nil || len(res.Variants) == 0 {
		return nil
	}
	if o.output == "json" || o.output == "yaml" {
		return printStructured(env.stdout, o.output, res)
	}
	if err := report.WriteSummary(env.stdout, res); err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "\nResult: %s%s\n", path, fmtBool(res.Complete, "", " (incomplete)"))
	return nil
}
