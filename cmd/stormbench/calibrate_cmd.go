package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/stormbench/stormbench/bench"
	"github.com/stormbench/stormbench/bench/calibrate"
	"github.com/stormbench/stormbench/bench/cluster"
	"github.com/stormbench/stormbench/bench/realnode"
	"github.com/stormbench/stormbench/profiles"
)

// runCalibrate measures the simulated kubelet against real ones (hollow
// kubelets) on an embedded cluster of its own, and exits 1 when a row of
// the fidelity table is outside its tolerance.
func runCalibrate(ctx context.Context, env *cmdEnv, args []string) error {
	if len(args) > 0 && args[0] == "combine" {
		return runCalibrateCombine(env, args[1:])
	}
	var (
		o                                clusterOptions
		nodes, pods                      int
		probePeriod, initDuration        time.Duration
		cases, podFeatures               []string
		resultPath, markdown, htmlPath   string
		output, backend                  string
		seed                             int64
		kubeAPIQPS, kubeAPIBurst         int
		tol                              = calibrate.DefaultTolerance()
		keepCluster, force, dryRun, list bool
	)
	fs := newFlagSet(env, "calibrate", "calibrate [flags]")
	var names []string
	for _, c := range calibrate.Cases() {
		names = append(names, c.Name)
	}
	fs.IntVar(&nodes, "nodes", 2, "Real nodes (hollow kubelets, about 100 MiB each) and as many simulated ones")
	fs.IntVar(&pods, "pods-per-node", 5, "Pods per node: one Deployment and one Service per node, with exec readiness and liveness probes (HTTP or TCP in the +http and +tcp cases)")
	fs.DurationVar(&probePeriod, "probe-period", 10*time.Second, "Period of the pods' readiness and liveness probes")
	fs.DurationVar(&initDuration, "init-duration", 0, "The simulated kubelet's NotReady flash after start (a profile's storm.initDuration; 0, the default, keeps the node Ready)")
	fs.StringSliceVar(&podFeatures, "pod-features", nil, "Add to the calibration pods: "+strings.Join(calibrate.PodFeatures(), ", ")+" (startup probe; env, envFrom, projected and immutable ConfigMap/Secret references; the service-account token and kube-root-ca.crt)")
	fs.IntVar(&kubeAPIQPS, "kube-api-qps", 0, "Both sides' kubelet kubeAPIQPS (0: the kubelet default, 50); a low limit keeps the status manager busy")
	fs.IntVar(&kubeAPIBurst, "kube-api-burst", 0, "Both sides' kubelet kubeAPIBurst (0: the kubelet default, 100)")
	fs.StringSliceVar(&cases, "cases", nil, "Cases to run, in order: "+strings.Join(names, ", ")+" (default: every case the backend can run; the +http and +tcp cases and kubelet/exited need --backend containerd)")
	fs.BoolVar(&list, "list-cases", false, "List the cases with their downtimes and exit")
	fs.StringVar(&backend, "backend", calibrate.BackendHollow, "Real nodes: hollow (the kubelet code with a fake runtime) or containerd (the kubelet on a containerd of its own, real containers; needs root and make real-node-deps)")
	fs.StringVar(&resultPath, "result", "", "Write the result document (JSON) here")
	fs.StringVar(&markdown, "markdown", "", "Write the fidelity tables as markdown here")
	fs.StringVar(&htmlPath, "html", "", "Write the fidelity tables as a self-contained HTML page here")
	fs.StringVarP(&output, "output", "o", "text", "Summary on stdout: text, json or yaml")
	fs.Int64Var(&seed, "seed", 42, "Seed of the simulated kubelets' probe jitter")
	fs.Float64Var(&tol.RequestsAbsolute, "tolerance-requests", tol.RequestsAbsolute, "Absolute tolerance of request and write counts, per restart")
	fs.Float64Var(&tol.RequestsRelative, "tolerance-requests-relative", tol.RequestsRelative, "Relative tolerance of request and write counts (0.2 = 20 %)")
	fs.Float64Var(&tol.SecondsAbsolute, "tolerance-seconds", tol.SecondsAbsolute, "Absolute tolerance of timings, seconds")
	fs.Float64Var(&tol.SecondsRelative, "tolerance-seconds-relative", tol.SecondsRelative, "Relative tolerance of timings (0.5 = 50 %)")
	fs.BoolVar(&force, "force", false, "Overwrite existing output files")
	fs.BoolVar(&keepCluster, "keep-cluster", false, "Leave the embedded cluster running at the end")
	fs.BoolVar(&dryRun, "dry-run", false, "Validate the flags and the machine (binaries, memory), print the plan, start nothing")
	o.addFlags(fs, false)
	fs.Usage = func() {
		fmt.Fprintf(env.stdout, `Usage: stormbench calibrate [flags]

Runs the same storm on K real kubelets (hollow kubelets: the v1.36.3 kubelet
code with a fake CRI runtime in a process of its own) and K simulated ones
carrying identical pods, on an embedded cluster of its own with an audit log,
and prints a fidelity table per case: what each side sent to the API server
per restart, by verb and resource, what the controllers wrote in reply, pod
not-ready time per flip, node Ready transitions and the cost of a restart.
Exit 0 when every row is within tolerance, 1 when one is not, 2 for bad input,
3 when the run failed.

  stormbench calibrate combine HOLLOW.json CONTAINERD.json

puts a hollow and a containerd calibration into one table (see its --help).

Examples:
  stormbench calibrate --list-cases
  stormbench calibrate --cases kubelet/legacy,kubelet/preserve --result cal.json --markdown cal.md
  stormbench calibrate --backend containerd --cases kubelet/legacy,reboot --result ctd.json
  stormbench calibrate combine cal.json ctd.json --markdown combined.md

Flags:
%s`, flagUsages(fs))
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("calibrate takes no arguments, got %q", fs.Args())
	}
	if err := checkFormat(output); err != nil {
		return err
	}
	if len(cases) == 0 {
		for _, c := range calibrate.DefaultCases(backend) {
			cases = append(cases, c.Name)
		}
	}
	selected, err := calibrate.SelectCases(cases)
	if err != nil {
		return usageError{err}
	}
	if list {
		for _, c := range calibrate.Cases() {
			fmt.Fprintf(env.stdout, "%-22s %-8s down %-4s watched %s after%s\n", c.Name, c.Kind, c.Downtime, c.Observe, caseDetail(c))
		}
		return nil
	}
	opts := calibrate.Options{Nodes: nodes, PodsPerNode: pods, ProbePeriod: probePeriod, InitDuration: initDuration, Cases: selected, Tolerance: tol, Seed: seed, Backend: backend, PodFeatures: podFeatures, KubeAPIQPS: kubeAPIQPS, KubeAPIBurst: kubeAPIBurst}
	if err := opts.Validate(realnode.MemAvailable()); err != nil {
		return usageError{err}
	}
	for _, p := range []string{resultPath, markdown, htmlPath} {
		if err := checkWritable(p, force); err != nil {
			return usageError{err}
		}
	}
	comps, err := cluster.FindComponents(o.binDir)
	if err != nil {
		return usageError{err}
	}
	if err := comps.CheckRealNodes(); err != nil {
		return usageError{err}
	}
	if backend == calibrate.BackendContainerd {
		if err := realnode.CheckContainerdHost(comps); err != nil {
			return usageError{err}
		}
	}
	var total time.Duration
	for _, c := range selected {
		total += c.Downtime + c.Observe
	}
	if dryRun {
		fmt.Fprintf(env.stdout, "Would calibrate %d real and %d simulated nodes, %d pods each, cases %s (storm time about %s, plus start-up and settling).\n",
			nodes, nodes, pods, strings.Join(cases, ", "), total)
		return nil
	}
	logf := func(format string, a ...any) {
		fmt.Fprintf(env.stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, a...)...)
	}
	runID := "cal-" + time.Now().UTC().Format("150405")
	name := o.name
	if name == "stormbench" {
		name = "sb-" + runID
	}
	def := &profiles.Profile{}
	profiles.SetDefaults(def)
	def.Timing.NodeEvictionRate = calibrate.NodeEvictionRate
	emb, err := cluster.NewEmbedded(cluster.EmbeddedOptions{Name: name, WorkDir: o.workDir, Components: comps, Timing: def.Timing, ControlPlane: def.ControlPlane, AuditLog: true})
	if err != nil {
		return err
	}
	logf("Starting embedded cluster %s with an audit log (Kubernetes %s, 127.0.0.1 only)", name, cluster.KubeVersion)
	if err := emb.Up(ctx); err != nil {
		return err
	}
	defer func() {
		if keepCluster {
			fmt.Fprintf(env.stderr, "Embedded cluster %s kept: kubeconfig %s; stop it with `stormbench cluster down --name %s --workdir %s`\n", name, emb.Kubeconfig(), name, o.workDir)
			return
		}
		logf("Stopping embedded cluster %s", name)
		if err := emb.Down(context.WithoutCancel(ctx)); err != nil {
			fmt.Fprintf(env.stderr, "stormbench: %v\n", err)
		}
	}()
	target, err := cluster.Connect(ctx, cluster.ConnectOptions{Kubeconfig: emb.ClientKubeconfig()})
	if err != nil {
		return err
	}
	opts.Target, opts.Embedded, opts.RunID, opts.Logf = target, emb, runID, logf
	opts.KeepObjects = !keepCluster
	logf("Calibrating: %d real and %d simulated nodes, %d pods each; cases %s (about %s of storms)", nodes, nodes, pods, strings.Join(cases, ", "), total)
	res, runErr := calibrate.Run(ctx, opts)
	if res == nil {
		return runErr
	}
	res.Tool = bench.GitRevision
	res.Command = strings.TrimSpace("stormbench calibrate " + strings.Join(args, " "))
	if runErr != nil {
		res.Errors = append(res.Errors, runErr.Error())
	}
	if err := writeCalibration(env, force, res, resultPath, markdown, htmlPath); err != nil {
		return errors.Join(runErr, err)
	}
	switch output {
	case "json", "yaml":
		if err := printStructured(env.stdout, output, res); err != nil {
			return err
		}
	default:
		if err := calibrate.WriteText(env.stdout, res); err != nil {
			return err
		}
	}
	if runErr != nil {
		return runErr
	}
	if d := res.Disagreements(); len(d) > 0 {
		return gateError{fmt.Errorf("calibration: %d rows outside tolerance: %s", len(d), strings.Join(d, "; "))}
	}
	return nil
}

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

// writeCalibration writes the result document and its renderings, each by
// the rules of bench/outfile.
func writeCalibration(env *cmdEnv, force bool, res *calibrate.Result, resultPath, markdown, htmlPath string) error {
	o := &outputs{env: env, force: force}
	o.write(resultPath, func(w io.Writer) error {
		// A few hundred rows: indented JSON stays small and diffs well.
		out, err := json.MarshalIndent(res, "", " ")
		if err == nil {
			_, err = w.Write(append(out, '\n'))
		}
		return err
	})
	o.write(markdown, func(w io.Writer) error { return calibrate.WriteMarkdown(w, res) })
	o.write(htmlPath, func(w io.Writer) error { return calibrate.WriteHTML(w, res) })
	return errors.Join(o.errs...)
}

// outputs writes rendered files and collects the errors.
type outputs struct {
	env   *cmdEnv
	force bool
	errs  []error
}

// write renders into path (nothing when path is empty).
func (o *outputs) write(path string, render func(io.Writer) error) {
	if path == "" {
		return
	}
	if err := writeOutput(o.env, path, o.force, render); err != nil {
		o.errs = append(o.errs, err)
	}
}

// runCalibrateCombine puts a hollow and a containerd calibration into one
// table: containerd is the reference for runtime restarts and reboots,
// hollow for the rest, and rows where the two real backends disagree are
// marked.
func runCalibrateCombine(env *cmdEnv, args []string) error {
	var (
		markdown, htmlPath, resultPath, output string
		force                                  bool
	)
	fs := newFlagSet(env, "calibrate combine", "calibrate combine HOLLOW.json CONTAINERD.json [flags]")
	fs.StringVar(&resultPath, "result", "", "Write the combined document (JSON: both results and the combined rows) here")
	fs.StringVar(&markdown, "markdown", "", "Write the combined table as markdown here")
	fs.StringVar(&htmlPath, "html", "", "Write the combined table as a self-contained HTML page here")
	fs.StringVarP(&output, "output", "o", "text", "Table on stdout: text, json or yaml")
	fs.BoolVar(&force, "force", false, "Overwrite existing output files")
	fs.Usage = func() {
		fmt.Fprintf(env.stdout, `Usage: stormbench calibrate combine HOLLOW.json CONTAINERD.json [flags]

Puts two calibration results (stormbench calibrate --result), one against
hollow kubelets and one against kubelets on containerd, into one fidelity
table per case: the simulated figure beside both real ones. Runtime restarts
and reboots are judged against containerd, which keeps or kills real
containers; everything else against hollow, the cheap reference. Rows where
the two real backends disagree are marked hollow≠containerd.
Exit 0 when every row is within tolerance of its reference, 1 when one is
not, 2 for bad input.

Flags:
%s`, flagUsages(fs))
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := checkFormat(output); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return usagef("calibrate combine takes two result files, hollow then containerd; got %d arguments", fs.NArg())
	}
	for _, p := range []string{resultPath, markdown, htmlPath} {
		if err := checkWritable(p, force); err != nil {
			return usageError{err}
		}
	}
	var rs [2]*calibrate.Result
	for i, path := range fs.Args() {
		r, err := calibrate.ReadFile(path)
		if err != nil {
			return usageError{err}
		}
		rs[i] = r
	}
	c, err := calibrate.Combine(rs[0], rs[1])
	if err != nil {
		return usageError{err}
	}
	errs := &outputs{env: env, force: force}
	write := errs.write
	write(resultPath, func(w io.Writer) error {
		out, err := json.MarshalIndent(c, "", " ")
		if err == nil {
			_, err = w.Write(append(out, '\n'))
		}
		return err
	})
	write(markdown, func(w io.Writer) error { return calibrate.WriteCombinedMarkdown(w, c) })
	write(htmlPath, func(w io.Writer) error { return calibrate.WriteCombinedHTML(w, c) })
	if err := errors.Join(errs.errs...); err != nil {
		return err
	}
	switch output {
	case "json", "yaml":
		if err := printStructured(env.stdout, output, c); err != nil {
			return err
		}
	default:
		if err := calibrate.WriteCombinedText(env.stdout, c); err != nil {
			return err
		}
	}
	if d := c.Disagreements(); len(d) > 0 {
		return gateError{fmt.Errorf("calibration: %d rows outside tolerance of their reference: %s", len(d), strings.Join(d, "; "))}
	}
	return nil
}
