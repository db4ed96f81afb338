package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/stormbench/stormbench/bench"
	"github.com/stormbench/stormbench/bench/cluster"
	"github.com/stormbench/stormbench/bench/fleet"
	"github.com/stormbench/stormbench/bench/report"
	"github.com/stormbench/stormbench/bench/result"
	"github.com/stormbench/stormbench/profiles"
)

func runRun(ctx context.Context, env *cmdEnv, args []string) error {
	return runStorm(ctx, env, args, false)
}

// runSweep runs a capacity sweep: the profile's storm, all at once, at
// growing wave sizes on one fleet, and reports the largest wave that keeps
// mutating API p99 ≤ 1s, zero 429s and zero service-outage seconds.
func runSweep(ctx context.Context, env *cmdEnv, args []string) error {
	return runStorm(ctx, env, args, true)
}

func runStorm(ctx context.Context, env *cmdEnv, args []string, sweep bool) error {
	var o clusterOptions
	var profile, runID, outDir, outFile, output, shard, startAt, waveSizes, fromSnapshot string
	var keepCluster, keepFleet, dryRun, force bool
	var seed int64
	var cpuProfile, memProfile string
	name, usage := "run", `run [--profile NAME|FILE] [flags]

Provisions the profile's fleet (what exists is kept), runs every variant and
repetition of its storm, prints the summary and writes the result file.
Without --kubeconfig it uses the embedded cluster, starting it if needed.

Examples:
  stormbench run --profile quick
  stormbench run --profile quick --dry-run                  # the plan, nothing started
  stormbench run --profile fleet-1k --result results/f1k.json --cpuprofile cpu.pprof
  stormbench run --profile my-storm.yaml --kubeconfig ~/.kube/config --context staging --yes
  stormbench run --profile big.yaml --shard 0/4 --start-at 2026-12-01T12:00:00Z --keep-fleet ...`
	if sweep {
		name, usage = "sweep", `sweep --profile NAME|FILE --wave-sizes 50,100,200 [flags]

Runs the profile's storm all at once at each wave size, on one fleet, and
prints per size the mutating p99, 429s, outage seconds and peak request
rate, and the largest size for which every SLO held.

Examples:
  stormbench sweep --profile fleet-1k --wave-sizes 50,100,200,400
  stormbench sweep --profile quick --wave-sizes 5,10,20 --dry-run`
	}
	fs := newFlagSet(env, name, usage)
	if sweep {
		fs.StringVar(&waveSizes, "wave-sizes", "", "Comma-separated wave sizes (nodes restarted at once), smallest first")
	}
	fs.StringVar(&profile, "profile", "quick", "Storm profile: a built-in name (see: stormbench profiles list) or a YAML file")
	o.addFlags(fs, true)
	fs.StringVar(&runID, "run-id", "", "Run id, the stormbench.io/run label value (default: <profile>-<timestamp>)")
	fs.Int64Var(&seed, "seed", 0, "Override the profile's seed")
	fs.StringVar(&outDir, "output-dir", "results", "Directory for the result file <run-id>.json")
	fs.StringVar(&outFile, "result", "", "Result file path (overrides --output-dir)")
	fs.BoolVar(&force, "force", false, "Overwrite an existing result file")
	fs.StringVarP(&output, "output", "o", "text", "Summary format on stdout: text, or json/yaml for the whole result document")
	fs.BoolVar(&keepCluster, "keep-cluster", false, "Leave the embedded cluster running at the end")
	fs.BoolVar(&keepFleet, "keep-fleet", false, "Leave the fleet (nodes, workloads) in place at the end")
	fs.BoolVar(&dryRun, "dry-run", false, "Check everything, print the plan (stderr) and the resolved profile (stdout), and exit")
	fs.StringVar(&shard, "shard", "", "Run only shard i of n (\"i/n\") of the restarts; the schedule is computed from the whole fleet")
	fs.StringVar(&cpuProfile, "cpuprofile", "", "Write a pprof CPU profile of stormbench itself to this file")
	fs.StringVar(&memProfile, "memprofile", "", "Write a pprof heap profile of stormbench itself, taken at its peak RSS during the storms, to this file")
	fs.StringVar(&startAt, "start-at", "", "RFC 3339 time at which the storm starts (to coordinate shards)")
	fs.StringVar(&fromSnapshot, "from-snapshot", "", "Start the embedded cluster from this fleet snapshot (stormbench fleet snapshot save) instead of provisioning; the run id is the snapshot's")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("run takes no arguments (got %q)", fs.Args())
	}
	if err := checkFormat(output); err != nil {
		return err
	}
	p, err := profiles.Load(profile)
	if err != nil {
		return err
	}
	var sizes []int
	if sweep {
		if sizes, err = parseWaveSizes(waveSizes, p); err != nil {
			return err
		}
	}
	if fs.Changed("seed") {
		p.Seed = seed
	}
	var shardI, shardN int
	if shard != "" {
		if shardI, shardN, err = parseShard(shard); err != nil {
			return err
		}
	}
	var at time.Time
	if startAt != "" {
		if at, err = time.Parse(time.RFC3339, startAt); err != nil {
			return usagef("--start-at: %v", err)
		}
	}
	var snapMeta cluster.SnapshotMeta
	if fromSnapshot != "" {
		if o.kubeconfig != "" || shard != "" {
			return usagef("--from-snapshot restores into the embedded cluster: not with --kubeconfig or --shard")
		}
		// Refuse a mismatched snapshot before anything starts.
		if snapMeta, err = cluster.ReadSnapshotMeta(fromSnapshot); err != nil {
			return usagef("--from-snapshot: %v", err)
		}
		want := snapshotWant(p)
		want.KubeVersion = cluster.KubeVersion
		if err := snapMeta.Check(want); err != nil {
			return usagef("--from-snapshot %s: %v", fromSnapshot, err)
		}
		if runID != "" && runID != snapMeta.RunID {
			return usagef("--run-id %q: the snapshot's fleet is run %q", runID, snapMeta.RunID)
		}
		runID = snapMeta.RunID
	}
	if runID == "" {
		runID = fmt.Sprintf("%s-%s", p.Metadata.Name, time.Now().UTC().Format("0102-150405"))
	}
	if err := validateRunID(runID); err != nil {
		return err
	}
	if dryRun {
		// Everything a run would check is checked (shard, start time,
		// snapshot, run id); the plan goes to stderr, the resolved profile
		// to stdout (-o json prints JSON).
		if err := writePlan(env.stderr, p, runID, sizes, shardI, shardN); err != nil {
			return err
		}
		format := "yaml"
		if output == "json" {
			format = "json"
		}
		return printStructured(env.stdout, format, p)
	}
	currentRunID.Store(runID)
	path := outFile
	if path == "" {
		path = filepath.Join(outDir, runID+".json")
	}
	if _, err := os.Stat(path); err == nil && !force {
		return usagef("result file %s exists; use --force to overwrite or choose another --run-id", path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("creating result directory: %w", err)
	}

	if cpuProfile != "" {
		f, err := os.Create(cpuProfile)
		if err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	var heapProfile *bench.PeakHeapProfile
	if memProfile != "" {
		heapProfile = &bench.PeakHeapProfile{Path: memProfile}
		defer func() {
			if err := heapProfile.Finish(); err != nil {
				fmt.Fprintf(env.stderr, "warning: --memprofile: %v\n", err)
			}
		}()
	}
	logf := func(format string, a ...any) {
		fmt.Fprintf(env.stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, a...)...)
	}
	var emb *cluster.Embedded
	if o.kubeconfig == "" {
		// An ephemeral embedded cluster for this run.
		o.name = "sb-" + runID
		if emb, err = o.embedded(p, nil); err != nil {
			return err
		}
		logf("Starting embedded cluster %s (Kubernetes %s, 127.0.0.1 only)", o.name, cluster.KubeVersion)
		if err := emb.Up(ctx); err != nil {
			return err
		}
		defer func() {
			if keepCluster {
				fmt.Fprintf(env.stderr, "Embedded cluster %s kept: kubeconfig %s; stop it with `stormbench cluster down --name %s`\n", o.name, emb.Kubeconfig(), o.name)
				return
			}
			logf("Stopping embedded cluster %s", o.name)
			if err := emb.Down(context.WithoutCancel(ctx)); err != nil {
				fmt.Fprintf(env.stderr, "stormbench: %v\n", err)
			}
		}()
		o.kubeconfig = emb.ClientKubeconfig()
		if fromSnapshot != "" {
			logf("Restoring fleet %q (%d nodes, %d pods) from %s", snapMeta.RunID, snapMeta.Nodes, snapMeta.Pods, fromSnapshot)
			_, restore, settle, err := restoreSnapshot(ctx, env, &o, emb, p, fromSnapshot)
			if err != nil {
				return err
			}
			logf("Snapshot restored in %s; fleet settled (all Ready) %s later", restore.Round(100*time.Millisecond), settle.Round(100*time.Millisecond))
		}
	}
	target, _, err := o.connect(ctx, env, p.Fleet.QPS, p.Fleet.Burst)
	if err != nil {
		return err
	}
	logf("Target %s (Kubernetes %s), run %s, result %s", target.Host, target.ServerVersion, runID, path)
	if runs, err := fleet.ListRuns(ctx, target.Client); err == nil {
		for _, r := range runs {
			if r.RunID != runID {
				logf("Leftovers of run %s: %d nodes (%d not handed back to KWOK), %d namespaces; remove them with `stormbench cleanup --run-id %s`", r.RunID, r.Nodes, r.DownNodes, r.Namespaces, r.RunID)
			}
		}
	}
	written := false
	checkpoint := func(r *result.Result) error {
		err := result.WriteFile(path, r, result.WriteOptions{Force: force || written})
		if err == nil {
			written = true
		}
		return err
	}
	// An ephemeral embedded cluster takes its fleet with it: deleting tens
	// of thousands of pods one namespace at a time first would only add
	// minutes (1.5 minutes for 3,000 pods here).
	skipFleetDelete := keepFleet || (emb != nil && !keepCluster)
	if skipFleetDelete && !keepFleet {
		logf("The fleet is not deleted object by object: it goes with the embedded cluster")
	}
	res, runErr := bench.Run(ctx, bench.Options{
		Profile: p, RunID: runID, Target: target, Embedded: emb,
		Progress: newProgress(env.stderr), Logf: logf, Checkpoint: checkpoint,
		KeepFleet: skipFleetDelete, ShardIndex: shardI, ShardCount: shardN, StartAt: at,
		SweepWaveSizes: sizes, HeapProfile: heapProfile,
	})
	if sweep && res != nil && output != "json" && output != "yaml" {
		fmt.Fprintln(env.stdout)
		if err := writeSweep(env.stdout, res); err != nil {
			return err
		}
	}
	if res != nil && len(res.Variants) > 0 {
		switch output {
		case "json", "yaml":
			if err := printStructured(env.stdout, output, res); err != nil {
				return err
			}
		default:
			if err := report.WriteSummary(env.stdout, res); err != nil {
				return err
			}
			fmt.Fprintf(env.stdout, "\nResult: %s%s\n", path, map[bool]string{true: "", false: " (incomplete)"}[res.Complete])
		}
	}
	if runErr != nil {
		if errors.Is(runErr, context.Canceled) {
			if !written {
				// Interrupted before any variant finished (provisioning,
				// for example): there is no file to point at.
				return fmt.Errorf("run interrupted before any variant finished; no result written: %w", runErr)
			}
			return fmt.Errorf("run interrupted; partial result in %s: %w", path, runErr)
		}
		return fmt.Errorf("run failed: %w", runErr)
	}
	return nil
}

func parseWaveSizes(s string, p *profiles.Profile) ([]int, error) {
	if p.Storm == nil {
		return nil, usagef("profile %s has no storm to sweep", p.Metadata.Name)
	}
	if s == "" {
		return nil, usagef("--wave-sizes is required")
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > p.Fleet.Nodes {
			return nil, usagef("--wave-sizes: %q is not a size between 1 and the fleet's %d nodes", f, p.Fleet.Nodes)
		}
		if len(out) > 0 && n <= out[len(out)-1] {
			return nil, usagef("--wave-sizes must grow: %d after %d", n, out[len(out)-1])
		}
		out = append(out, n)
	}
	return out, nil
}

// writeSweep prints, per wave size, the figures a capacity planner checks,
// and the largest wave size for which they (and all smaller ones) hold; the
// analysis is report.Sweep's (the result's variant names carry the sizes).
func writeSweep(w io.Writer, res *result.Result) error {
	series := report.Sweep(res)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "VARIANT\tWAVE\tMUTATING P99\t429s\tOUTAGE s\tPEAK req/s\tSAFE")
	figure := func(format string, x float64) string {
		if math.IsNaN(x) {
			return "-"
		}
		return fmt.Sprintf(format, x)
	}
	for _, s := range series {
		for _, r := range s.Rows {
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\n", s.Variant, r.WaveSize, figure("%.3fs", r.MutatingP99),
				figure("%.0f", r.Throttled), figure("%.1f", r.OutageSeconds), figure("%.1f", r.PeakRate), fmtBool(r.Safe, "yes", "NO"))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, s := range series {
		if _, err := fmt.Fprintln(w, s.Verdict()); err != nil {
			return err
		}
	}
	return nil
}

// parseShard parses --shard "i/n" strictly: two decimal integers and
// nothing else, 0 <= i < n.
func parseShard(s string) (i, n int, err error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || strings.ContainsAny(a+b, "+- ") || n < 1 || i < 0 || i >= n {
		return 0, 0, usagef("--shard %q: want i/n, two integers with 0 <= i < n (such as 0/4)", s)
	}
	return i, n, nil
}
