package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/stormbench/stormbench/bench"
	"github.com/stormbench/stormbench/bench/calibrate"
	"github.com/stormbench/stormbench/bench/cluster"
	"github.com/stormbench/stormbench/bench/kubeversion"
	"github.com/stormbench/stormbench/bench/realnode"
	"github.com/stormbench/stormbench/bench/result"
	"github.com/stormbench/stormbench/profiles"
)

// calibrateOptions are the calibrate command's flags.
type calibrateOptions struct {
	cluster                            clusterOptions
	nodes, pods                        int
	probePeriod, initDuration, stagger time.Duration
	cases, podFeatures                 []string
	resultPath, markdown, htmlPath     string
	output, backend                    string
	seed                               int64
	kubeAPIQPS, kubeAPIBurst           int
	tol                                calibrate.Tolerance
	keepCluster, force, dryRun, list   bool
}

// newCalibrateOptions returns the defaults: 2 nodes of 5 pods, 10 s
// probes, the hollow backend, seed 42, the default tolerance.
func newCalibrateOptions() *calibrateOptions {
	return &calibrateOptions{nodes: 2, pods: 5, probePeriod: 10 * time.Second, output: "text", backend: calibrate.BackendHollow, seed: 42, tol: calibrate.DefaultTolerance(), stagger: calibrate.DefaultStagger}
}

func (o *calibrateOptions) addFlags(fs *pflag.FlagSet) {
	names := mapped(calibrate.Cases(), caseName)
	fs.IntVar(&o.nodes, "nodes", o.nodes, "Real nodes (hollow kubelets, about 100 MiB each) and as many simulated ones")
	fs.IntVar(&o.pods, "pods-per-node", o.pods, "Pods per node: one Deployment and one Service per node, with exec readiness and liveness probes (HTTP or TCP in the +http and +tcp cases)")
	fs.DurationVar(&o.probePeriod, "probe-period", o.probePeriod, "Period of the pods' readiness and liveness probes")
	fs.DurationVar(&o.stagger, "stagger", o.stagger, "Time between the restarts of successive pairs of nodes (the i-th real and the i-th simulated node restart together), so the real kubelets do not all start in the same instant on one machine; 0 restarts every node at once")
	fs.DurationVar(&o.initDuration, "init-duration", 0, "The simulated kubelet's NotReady flash after start (a profile's storm.initDuration; 0, the default, keeps the node Ready)")
	fs.StringSliceVar(&o.podFeatures, "pod-features", nil, "Add to the calibration pods: "+strings.Join(calibrate.PodFeatures(), ", ")+" (startup probe; env, envFrom, projected and immutable ConfigMap/Secret references; the service-account token and kube-root-ca.crt)")
	fs.IntVar(&o.kubeAPIQPS, "kube-api-qps", 0, "Both sides' kubelet kubeAPIQPS (0: the kubelet default, 50); a low limit keeps the status manager busy")
	fs.IntVar(&o.kubeAPIBurst, "kube-api-burst", 0, "Both sides' kubelet kubeAPIBurst (0: the kubelet default, 100)")
	fs.StringSliceVar(&o.cases, "cases", nil, "Cases to run, in order: "+strings.Join(names, ", ")+" (default: every case the backend can run; the +http and +tcp cases and kubelet/exited need --backend containerd)")
	fs.BoolVar(&o.list, "list-cases", false, "List the cases with their downtimes and exit")
	fs.StringVar(&o.backend, "backend", o.backend, "Real nodes: hollow (the kubelet code with a fake runtime) or containerd (the kubelet on a containerd of its own, real containers; needs root and make real-node-deps)")
	o.addTableOutputs(fs, "result")
	fs.Int64Var(&o.seed, "seed", o.seed, "Seed of the simulated kubelets' probe jitter")
	fs.Float64Var(&o.tol.RequestsAbsolute, "tolerance-requests", o.tol.RequestsAbsolute, "Absolute tolerance of request and write counts, per restart")
	fs.Float64Var(&o.tol.RequestsRelative, "tolerance-requests-relative", o.tol.RequestsRelative, "Relative tolerance of request and write counts (0.2 = 20 %)")
	fs.Float64Var(&o.tol.SecondsAbsolute, "tolerance-seconds", o.tol.SecondsAbsolute, "Absolute tolerance of timings, seconds")
	fs.Float64Var(&o.tol.SecondsRelative, "tolerance-seconds-relative", o.tol.SecondsRelative, "Relative tolerance of timings (0.5 = 50 %)")
	fs.BoolVar(&o.keepCluster, "keep-cluster", false, "Leave the embedded cluster running at the end")
	fs.BoolVar(&o.dryRun, "dry-run", false, "Validate the flags and the machine (binaries, memory), print the plan, start nothing")
	o.cluster.addFlags(fs, false)
	o.cluster.addKubeVersionFlag(fs, false)
}

const calibrateHelp = `Runs the same storm on K real kubelets (hollow kubelets: the kubelet code of
--kube-version, default 1.36.3, with a fake CRI runtime in a process of its
own) and K simulated ones carrying identical pods, on an embedded cluster of
that version with an audit log, and prints a fidelity table per case: what
each side sent to the API server per restart, by verb and resource, what the
controllers wrote in reply, pod not-ready time per flip, node Ready
transitions and the cost of a restart.
Exit 0 when every row is within tolerance, 1 when one is not, 2 for bad input,
3 when the run failed.

  stormbench calibrate combine HOLLOW.json CONTAINERD.json

puts a hollow and a containerd calibration into one table (see its --help).`

const calibrateExamples = `  stormbench calibrate --list-cases
  stormbench calibrate --cases kubelet/legacy,kubelet/preserve --result cal.json --markdown cal.md
  stormbench calibrate --backend containerd --cases kubelet/legacy,reboot --result ctd.json
  stormbench calibrate combine cal.json ctd.json --markdown combined.md`

// calibratePlan is what validate resolved: the cases, the calibration's
// options (without its cluster) and the component binaries.
type calibratePlan struct {
	selected []calibrate.Case
	opts     calibrate.Options
	comps    cluster.Components
	total    time.Duration
}

// validate checks the flags and the machine before anything starts; a nil
// plan with a nil error means there is nothing to run (--list-cases).
func (o *calibrateOptions) validate(env *cmdEnv, fs *pflag.FlagSet) (*calibratePlan, error) {
	if fs.NArg() > 0 {
		return nil, usagef("calibrate takes no arguments, got %q", fs.Args())
	}
	if err := checkFormat(o.output); err != nil {
		return nil, err
	}
	if len(o.cases) == 0 {
		o.cases = mapped(calibrate.DefaultCases(o.backend), caseName)
	}
	selected, err := calibrate.SelectCases(o.cases)
	if err != nil {
		return nil, usageError{err}
	}
	if o.list {
		for _, c := range calibrate.Cases() {
			fmt.Fprintf(env.stdout, "%-22s %-8s down %-4s watched %s after%s\n", c.Name, c.Kind, c.Downtime, c.Observe, caseDetail(c))
		}
		return nil, nil
	}
	opts := calibrate.Options{Nodes: o.nodes, PodsPerNode: o.pods, ProbePeriod: o.probePeriod, InitDuration: o.initDuration, Cases: selected, Tolerance: o.tol, Seed: o.seed, Backend: o.backend, PodFeatures: o.podFeatures, KubeAPIQPS: o.kubeAPIQPS, KubeAPIBurst: o.kubeAPIBurst, Stagger: o.stagger}
	if err := opts.Validate(realnode.MemAvailable()); err != nil {
		return nil, usageError{err}
	}
	if err := o.checkTableOutputs(); err != nil {
		return nil, err
	}
	if err := o.cluster.resolveKubeVersion(nil, ""); err != nil {
		return nil, err
	}
	comps, err := cluster.FindComponentsFor(o.cluster.binDir, o.cluster.version)
	if err == nil {
		err = calibrate.CheckHost(comps, o.backend)
	}
	if err != nil {
		return nil, usageError{err}
	}
	plan := &calibratePlan{selected: selected, opts: opts, comps: comps}
	for _, c := range selected {
		plan.total += time.Duration(o.nodes-1)*o.stagger + c.Downtime + c.Observe
	}
	return plan, nil
}

// newCalibrateCmd measures the simulated kubelet against real ones (hollow
// kubelets) on an embedded cluster of its own, and exits 1 when a row of
// the fidelity table is outside its tolerance.
func newCalibrateCmd(env *cmdEnv) *cobra.Command {
	o := newCalibrateOptions()
	cmd := &cobra.Command{
		Use:     "calibrate [flags]",
		Short:   "Measure the simulated kubelet against real kubelets (hollow, or on containerd): a fidelity table; exit 1 when a row disagrees",
		Long:    calibrateHelp,
		Example: calibrateExamples,
		RunE: func(cmd *cobra.Command, _ []string) error {
			plan, err := o.validate(env, cmd.Flags())
			if err != nil || plan == nil {
				return err
			}
			if o.dryRun {
				fmt.Fprintf(env.stdout, "Would calibrate %d real and %d simulated nodes on Kubernetes %s, %d pods each, cases %s (storm time about %s, plus start-up and settling).\n",
					o.nodes, o.nodes, plan.comps.KubeVersion().Short(), o.pods, strings.Join(o.cases, ", "), plan.total)
				return nil
			}
			return o.run(cmd.Context(), env, plan, env.args)
		},
	}
	o.addFlags(cmd.Flags())
	completeValues(cmd, "backend", calibrate.BackendHollow, calibrate.BackendContainerd)
	cmd.AddCommand(newCalibrateCombineCmd(env), newCalibrateRejudgeCmd(env), newCalibratePoolCmd(env))
	return cmd
}

// run starts the calibration's embedded cluster, calibrates, writes the
// outputs and stops the cluster (unless --keep-cluster).
func (o *calibrateOptions) run(ctx context.Context, env *cmdEnv, plan *calibratePlan, args []string) error {
	logf := stderrLogf(env)
	runID := "cal-" + time.Now().UTC().Format("150405")
	name := o.cluster.name
	if name == "stormbench" {
		name = "sb-" + runID
	}
	def := &profiles.Profile{}
	profiles.SetDefaults(def)
	def.Timing.NodeEvictionRate = calibrate.NodeEvictionRate
	emb, err := cluster.NewEmbedded(cluster.EmbeddedOptions{Name: name, WorkDir: o.cluster.workDir, Components: plan.comps, Timing: def.Timing, ControlPlane: def.ControlPlane, AuditLog: true})
	if err != nil {
		return err
	}
	logf("Starting embedded cluster %s with an audit log (Kubernetes %s, 127.0.0.1 only)", name, emb.KubeVersion())
	stop, err := emb.UpFor(ctx, o.keepCluster, env.stderr, logf)
	if err != nil {
		return err
	}
	defer stop()
	target, err := cluster.Connect(ctx, cluster.ConnectOptions{Kubeconfig: emb.ClientKubeconfig()})
	if err != nil {
		return err
	}
	if err := checkServerVersion(emb.KubeVersion(), target.ServerVersion, true, true); err != nil {
		return err
	}
	opts := plan.opts
	opts.Target, opts.Embedded, opts.RunID, opts.Logf = target, emb, runID, logf
	opts.KeepObjects = !o.keepCluster
	opts.Model = bench.CalibrationModel(opts)
	fingerprint, err := modelFingerprint(emb.KubeVersion())
	if err != nil {
		logf("warning: the result will carry no model fingerprint: %v", err)
	}
	logf("Calibrating: %d real and %d simulated nodes, %d pods each; cases %s (about %s of storms)", o.nodes, o.nodes, o.pods, strings.Join(o.cases, ", "), plan.total)
	res, runErr := calibrate.Run(ctx, opts)
	if res == nil {
		return runErr
	}
	res.Tool = bench.GitRevision
	// The real kubelets' version is the embedded cluster's, from the same
	// folder (bin/ or bin/VERSION/).
	res.KubeVersion = emb.KubeVersion().String()
	res.Command = strings.TrimSpace("stormbench " + strings.Join(args, " "))
	res.ModelFingerprint = fingerprint
	res.Machine = result.LocalMachine()
	if runErr != nil {
		res.Errors = append(res.Errors, runErr.Error())
	}
	return o.report(env, res, runErr)
}

// report writes the calibration result's files and summary and says how it
// ended: the run's error, or a gate error when a row is outside tolerance.
func (o *calibrateOptions) report(env *cmdEnv, res *calibrate.Result, runErr error) error {
	return writeTables(o, env, res, calibrate.WriteText, calibrate.WriteMarkdown, calibrate.WriteHTML, runErr, "")
}

// writeTables writes a calibration document (a result or a combination) to
// --result (JSON), --markdown and --html, each by the rules of
// bench/outfile, then its summary in -o's format, and says how it ended:
// runErr, or a gate error naming the rows outside tolerance (of what
// outside says).
func writeTables[T interface{ Disagreements() []string }](o *calibrateOptions, env *cmdEnv, doc T, text, markdown, html func(io.Writer, T) error, runErr error, outside string) error {
	write := func(path string, render func(io.Writer, T) error) error {
		if path == "" {
			return nil
		}
		return writeOutput(env, path, o.force, func(w io.Writer) error { return render(w, doc) })
	}
	if err := errors.Join(write(o.resultPath, writeIndentedJSON), write(o.markdown, markdown), write(o.htmlPath, html)); err != nil {
		return errors.Join(runErr, err)
	}
	err := printAs(env.stdout, o.output, doc, func() error { return text(env.stdout, doc) })
	switch d := doc.Disagreements(); {
	case err != nil:
		return err
	case runErr != nil:
		return runErr
	case len(d) > 0:
		return gateError{fmt.Errorf("calibration: %d rows outside tolerance%s: %s", len(d), outside, strings.Join(d, "; "))}
	}
	return nil
}

// writeIndentedJSON writes a calibration document: a few hundred rows,
// whose indented JSON stays small and diffs well.
func writeIndentedJSON[T any](w io.Writer, doc T) error {
	out, err := json.MarshalIndent(doc, "", " ")
	if err == nil {
		_, err = w.Write(append(out, '\n'))
	}
	return err
}

func caseName(c calibrate.Case) string { return c.Name }

func caseDetail(c calibrate.Case) string {
	var parts []string
	for k, v := range c.Gates {
		parts = append(parts, fmt.Sprintf("%s=%t", k, v))
	}
	if c.RuntimeMode != "" {
		parts = append(parts, "runtime "+c.RuntimeMode)
	}
	if c.Probe != "" {
		parts = append(parts, c.Probe+" probes")
	}
	if c.DeletePods > 0 {
		parts = append(parts, fmt.Sprintf("%d pods per node deleted while down", c.DeletePods))
	}
	if c.ExitContainers > 0 {
		parts = append(parts, fmt.Sprintf("%d container per node killed while down", c.ExitContainers))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// newCalibrateCombineCmd puts a hollow and a containerd calibration into
// one fidelity table per case.
func newCalibrateCombineCmd(env *cmdEnv) *cobra.Command {
	return tableCmd(&cobra.Command{
		Use:   "combine HOLLOW.json CONTAINERD.json [flags]",
		Short: "Put a hollow and a containerd calibration into one fidelity table",
		Long: `Puts two calibration results (stormbench calibrate --result), one against
hollow kubelets and one against kubelets on containerd, into one fidelity
table per case: the simulated figure beside both real ones. Runtime restarts
and reboots are judged against containerd, which keeps or kills real
containers; everything else against hollow, the cheap reference. Rows where
the two real backends disagree are marked hollow≠containerd.
Exit 0 when every row is within tolerance of its reference, 1 when one is
not, 2 for bad input.`,
	}, "combined", func(o *calibrateOptions, args []string) error {
		if len(args) != 2 {
			return usagef("calibrate combine takes two result files, hollow then containerd; got %d arguments", len(args))
		}
		rs, err := readAll(args, calibrate.ReadFile)
		if err != nil {
			return err
		}
		c, err := calibrate.Combine(rs[0], rs[1])
		if err != nil {
			return usageError{err}
		}
		return writeTables(o, env, c, calibrate.WriteCombinedText, calibrate.WriteCombinedMarkdown, calibrate.WriteCombinedHTML, nil, " of their reference")
	})
}

// modelFingerprint is calibrate.ModelFingerprintAt of version v, of the
// model's goldens in the source tree stormbench runs from: the first
// directory, from the working directory up and then from the executable's
// up, that holds go.mod and calibrate.ModelGoldens (make calibrate runs
// bin/stormbench from the checkout's root).
func modelFingerprint(v kubeversion.Version) (string, error) {
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if exe, err := os.Executable(); err == nil {
		starts = append(starts, filepath.Dir(exe))
	}
	for _, dir := range starts {
		for {
			goldens := filepath.Join(dir, filepath.FromSlash(calibrate.ModelGoldens))
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				if st, err := os.Stat(goldens); err == nil && st.IsDir() {
					return calibrate.ModelFingerprintAt(os.DirFS(goldens), v)
				}
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return "", fmt.Errorf("no source tree with %s above the working directory or the executable", calibrate.ModelGoldens)
}

// newCalibrateRejudgeCmd judges a calibration result's rows again by the
// rules of this stormbench (calibrate.Pool of one round), with the file's
// tolerance or the one given, and writes it anew.
func newCalibrateRejudgeCmd(env *cmdEnv) *cobra.Command {
	var tol calibrate.Tolerance
	var fs *pflag.FlagSet
	cmd := tableCmd(&cobra.Command{
		Use:   "rejudge RESULT.json [flags]",
		Short: "Judge a calibration result's rows again by this stormbench's rules",
		Long: `Judges the rows of a calibration result (stormbench calibrate --result)
again, by this stormbench's rules and the file's tolerance (or the one
given), without running anything: for a table made before its rules
changed. Rows keep their figures. A timing row written before its rule
existed is judged by its intervals' gap.
Exit 0 when every row is within tolerance, 1 when one is not, 2 for bad
input.`,
	}, "rejudged result", func(o *calibrateOptions, args []string) error {
		if len(args) != 1 {
			return usagef("calibrate rejudge takes one result file, got %d arguments", len(args))
		}
		res, err := calibrate.ReadFile(args[0])
		if err != nil {
			return usageError{err}
		}
		if fs.Changed("tolerance-seconds") {
			res.Tolerance.SecondsAbsolute = tol.SecondsAbsolute
		}
		if fs.Changed("tolerance-seconds-relative") {
			res.Tolerance.SecondsRelative = tol.SecondsRelative
		}
		if res, err = calibrate.Pool(res); err != nil {
			return err
		}
		return o.report(env, res, nil)
	})
	fs = cmd.Flags()
	fs.Float64Var(&tol.SecondsAbsolute, "tolerance-seconds", 0, "Cap of the timings' absolute tolerance, seconds (default: the file's)")
	fs.Float64Var(&tol.SecondsRelative, "tolerance-seconds-relative", 0, "Relative tolerance of timings (default: the file's)")
	return cmd
}

// newCalibratePoolCmd puts calibration rounds of one set-up into one
// result (calibrate.Pool).
func newCalibratePoolCmd(env *cmdEnv) *cobra.Command {
	return tableCmd(&cobra.Command{
		Use:   "pool ROUND.json ROUND.json... [flags]",
		Short: "Pool calibration rounds of fewer nodes into one table",
		Long: `Puts calibration results of the same set-up (stormbench calibrate
--result: version, backend, nodes, pods, probes, cases, tolerance, model and
machine alike), each a round of K real and K simulated nodes, into one
result of every round's restarts: each row's per-restart values and
not-ready periods together, its figures computed again and judged again.
For a machine that cannot hold the nodes a table needs at once: ten
kubelets on containerd running exec probes saturate two cores, five do
not, and two rounds of five give every row ten restarts a side. Give each
round its own --seed, so the simulated sides' probe jitter is drawn anew.
Exit 0 when every row is within tolerance, 1 when one is not, 2 for bad
input.`,
		Example: `  stormbench calibrate --backend containerd --nodes 5 --seed 1 --result r1.json
  stormbench calibrate --backend containerd --nodes 5 --seed 2 --result r2.json
  stormbench calibrate pool r1.json r2.json --result containerd.json --markdown containerd.md`,
	}, "pooled result", func(o *calibrateOptions, args []string) error {
		if len(args) < 2 {
			return usagef("calibrate pool takes two result files or more, got %d", len(args))
		}
		rounds, err := readAll(args, calibrate.ReadFile)
		if err != nil {
			return err
		}
		res, err := calibrate.Pool(rounds...)
		if err != nil {
			return usageError{err}
		}
		res.Tool = bench.GitRevision
		res.Command = strings.TrimSpace("stormbench calibrate pool " + strings.Join(args, " "))
		return o.report(env, res, nil)
	})
}

// tableCmd gives cmd the flags of a command that writes a calibration's
// tables (combine, rejudge, pool; what names its document) and runs run
// once they check.
func tableCmd(cmd *cobra.Command, what string, run func(o *calibrateOptions, args []string) error) *cobra.Command {
	o := &calibrateOptions{}
	o.addTableOutputs(cmd.Flags(), what)
	cmd.RunE = func(_ *cobra.Command, args []string) error {
		if err := o.checkTableOutputs(); err != nil {
			return err
		}
		return run(o, args)
	}
	return cmd
}

// addTableOutputs adds the flags of a command that writes a calibration's
// tables (calibrate, combine, rejudge, pool): what names its document.
func (o *calibrateOptions) addTableOutputs(fs *pflag.FlagSet, what string) {
	fs.StringVar(&o.resultPath, "result", "", "Write the "+what+" document (JSON) here")
	fs.StringVar(&o.markdown, "markdown", "", "Write the fidelity tables as markdown here")
	fs.StringVar(&o.htmlPath, "html", "", "Write the fidelity tables as a self-contained HTML page here")
	fs.StringVarP(&o.output, "output", "o", "text", "Summary on stdout: text, json or yaml")
	fs.BoolVar(&o.force, "force", false, "Overwrite existing output files")
}

// checkTableOutputs checks the flags addTableOutputs added, before
// anything is read.
func (o *calibrateOptions) checkTableOutputs() error {
	if err := checkFormat(o.output); err != nil {
		return err
	}
	for _, p := range []string{o.resultPath, o.markdown, o.htmlPath} {
		if err := checkWritable(p, o.force); err != nil {
			return usageError{err}
		}
	}
	return nil
}
