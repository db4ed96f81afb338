// Command reach finds the largest fleet this machine runs a restart storm on
// with the storm not host-bound (issue 50): the figures of a larger fleet
// describe the machine, not the control plane.
//
// It runs one profile's storm (results/host/host-300-budget.yaml: the
// 300-node host shape, nodes × 10 pods, every node restarted in 10 % waves every 10 s,
// kube-apiserver and etcd held to 0.85 of a core so the rest keeps
// headroom) at growing fleet sizes, each a `stormbench run` on an embedded
// cluster of its own: doubling from -min until a size fails or -max
// passes, then halving the gap between the largest size that passed and
// the smallest that failed until it is within -resolution. A size passes
// when the run exits 0 and every storm completed without errors and was not
// host-bound (result.VariantRun.HostBound: the host ≥ 90 % busy for more
// than 10 % of the storm). It prints a line per size and writes them, the
// machine and the answer to -out (JSON).
//
//	go run ./scripts/reach -bin bin -out results/host/reach.json   # make reach
//
// It is a program under scripts, not a stormbench subcommand: it measures
// stormbench on this machine and has no place in a user's command line.
//
// Exit codes: 0 the search ended (its answer may be 0: the smallest size
// failed), 2 bad usage or a run that could not start (a usage error of
// stormbench's, a missing binary).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/stormbench/stormbench/bench/compare"
	"github.com/stormbench/stormbench/bench/measure/host"
	"github.com/stormbench/stormbench/bench/result"
	"github.com/stormbench/stormbench/profiles"
	"github.com/stormbench/stormbench/scripts/reach/reachfile"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Stdout, os.Stderr, os.Args[1:]))
}

// figureIDs are the figures a trial keeps.
var figureIDs = []string{result.MetricFleetRecovered, result.MetricAPIServerCPUSeconds, result.MetricStandingCPU, result.MetricMarginalCPUPerRestart}

func run(ctx context.Context, stdout, stderr io.Writer, args []string) int {
	fs := flag.NewFlagSet("reach", flag.ContinueOnError)
	fs.SetOutput(stderr)
	profile := fs.String("profile", "results/host/host-300-budget.yaml", "the storm profile whose fleet.nodes the search varies")
	minNodes := fs.Int("min", 300, "the first size tried")
	maxNodes := fs.Int("max", 5000, "the largest size tried")
	resolution := fs.Float64("resolution", 0.1, "stop when the gap between the largest size that passed and the smallest that failed is within this share of the former")
	bin := fs.String("bin", "bin", "the directory of stormbench and the components")
	out := fs.String("out", "results/host/reach.json", "the file the trials and the answer are written to")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 || *minNodes < 1 || *maxNodes < *minNodes || *resolution <= 0 || *resolution >= 1 {
		fmt.Fprintln(stderr, "reach: want no arguments, 1 ≤ -min ≤ -max and 0 < -resolution < 1")
		return 2
	}
	p, err := profiles.Load(*profile)
	if err != nil {
		fmt.Fprintf(stderr, "reach: %v\n", err)
		return 2
	}
	work, err := os.MkdirTemp("", "stormbench-reach-")
	if err != nil {
		fmt.Fprintf(stderr, "reach: %v\n", err)
		return 2
	}
	defer os.RemoveAll(work)
	r := &runner{profile: p, bin: *bin, work: work, log: stderr}
	start := time.Now().UTC()
	fmt.Fprintf(stdout, "%8s %8s %-6s %10s %10s  %s\n", "nodes", "pods", "passed", "saturated", "seconds", "why")
	trials, err := search(ctx, func(ctx context.Context, nodes int) (reachfile.Trial, error) {
		t, err := r.trial(ctx, nodes)
		if err == nil {
			fmt.Fprintf(stdout, "%8d %8d %-6t %9.0f%% %10.0f  %s\n", t.Nodes, t.Pods, t.Passed, 100*t.HostSaturated, t.Seconds, t.Why)
		}
		return t, err
	}, *minNodes, *maxNodes, *resolution)
	if err != nil {
		fmt.Fprintf(stderr, "reach: %v\n", err)
		return 2
	}
	rep := reachfile.Reach{Kind: reachfile.Kind, Tool: r.tool, Start: start, Profile: *profile, Machine: r.machine,
		Min: *minNodes, Max: *maxNodes, Resolution: *resolution, Trials: trials}
	rep.Largest, rep.SmallestFailed = answer(trials)
	fmt.Fprintf(stdout, "largest fleet not host-bound: %d nodes", rep.Largest)
	if rep.SmallestFailed > 0 {
		fmt.Fprintf(stdout, " (%d failed)", rep.SmallestFailed)
	}
	fmt.Fprintln(stdout)
	b, err := json.MarshalIndent(rep, "", "  ")
	if err == nil {
		err = os.WriteFile(*out, append(b, '\n'), 0o644)
	}
	if err != nil {
		fmt.Fprintf(stderr, "reach: %v\n", err)
		return 2
	}
	return 0
}

// search tries sizes from lo, doubling until one fails or hi passes, then
// bisects between the largest that passed and the smallest that failed
// until their gap is within resolution of the former. It returns the
// trials in the order run; an error of try (a run that could not start)
// ends it.
func search(ctx context.Context, try func(context.Context, int) (reachfile.Trial, error), lo, hi int, resolution float64) ([]reachfile.Trial, error) {
	var trials []reachfile.Trial
	passed, failed := 0, 0
	for n := lo; ; {
		t, err := try(ctx, n)
		if err != nil {
			return trials, err
		}
		trials = append(trials, t)
		if t.Passed {
			passed = n
		} else {
			failed = n
		}
		switch {
		case failed == 0 && n == hi:
			return trials, nil
		case failed == 0: // doubling
			n = min(2*n, hi)
		case passed == 0 || float64(failed-passed) <= max(1, resolution*float64(passed)):
			return trials, nil
		default: // bisecting
			n = (passed + failed) / 2
		}
	}
}

// answer is the largest size that passed and the smallest that failed.
func answer(trials []reachfile.Trial) (largest, smallestFailed int) {
	for _, t := range trials {
		if t.Passed {
			largest = max(largest, t.Nodes)
		} else if smallestFailed == 0 || t.Nodes < smallestFailed {
			smallestFailed = t.Nodes
		}
	}
	return largest, smallestFailed
}

// runner runs one size as `stormbench run` on an embedded cluster of its
// own, under work.
type runner struct {
	profile   *profiles.Profile
	bin, work string
	log       io.Writer
	// machine and tool are the first result's.
	machine *result.Machine
	tool    string
}

func (r *runner) trial(ctx context.Context, nodes int) (reachfile.Trial, error) {
	p := *r.profile
	p.Fleet.Nodes = nodes
	doc, err := profiles.Marshal(&p)
	if err != nil {
		return reachfile.Trial{}, err
	}
	name := fmt.Sprintf("reach-%d", nodes)
	prof, res := filepath.Join(r.work, name+".yaml"), filepath.Join(r.work, name+".json")
	if err := os.WriteFile(prof, doc, 0o644); err != nil {
		return reachfile.Trial{}, err
	}
	logPath := filepath.Join(r.work, name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return reachfile.Trial{}, err
	}
	defer logFile.Close()
	fmt.Fprintf(r.log, "reach: %d nodes (log %s)\n", nodes, logPath)
	cmd := exec.CommandContext(ctx, filepath.Join(r.bin, "stormbench"), "run", "--profile", prof, "--result", res,
		"--bin-dir", r.bin, "--name", name, "--workdir", filepath.Join(r.work, "clusters"), "--run-id", name, "--force")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Ctrl-C reaches stormbench as an interrupt, so it brings its nodes
	// back and stops its cluster.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	start := time.Now()
	err = cmd.Run()
	t := reachfile.Trial{Nodes: nodes, Pods: nodes * p.Fleet.PodsPerNode, Seconds: time.Since(start).Seconds()}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit) && exit.ExitCode() == 2:
		return t, fmt.Errorf("%d nodes: stormbench refused the run (exit 2): %s", nodes, tail(logPath))
	case ctx.Err() != nil:
		return t, ctx.Err()
	case err != nil && !errors.As(err, &exit):
		return t, err
	}
	rs, rerr := result.ReadFile(res)
	if rerr != nil {
		t.Why = fmt.Sprintf("run exit %v, no result: %s", err, tail(logPath))
		return t, nil
	}
	if r.machine == nil {
		r.machine, r.tool = rs.Run.Machine, rs.Run.GitRevision
	}
	judge(&t, rs, err)
	return t, nil
}

// judge fills t from the run's result and exit error.
func judge(t *reachfile.Trial, rs *result.Result, exitErr error) {
	metrics, _ := compare.LookupMetrics(figureIDs...)
	var why []string
	if exitErr != nil {
		why = append(why, "run: "+exitErr.Error())
	}
	why = append(why, rs.Errors...)
	t.Figures = map[string]float64{} // empty is left out of the file
	for i := range rs.Variants {
		v := &rs.Variants[i]
		if f, ok := v.Measurement(host.Name).Value(host.SaturatedFraction, result.WindowStorm); ok {
			t.HostSaturated = max(t.HostSaturated, f)
		}
		for _, m := range metrics {
			if x, ok := m.Extract(v); ok {
				t.Figures[m.ID] = max(t.Figures[m.ID], x)
			}
		}
		// Both, when both: a storm that did not complete on a saturated
		// host says so.
		if !v.Complete {
			why = append(why, v.Variant+": storm incomplete")
		}
		if v.HostBound {
			why = append(why, v.Variant+": host-bound ("+host.BoundReason(v)+")")
		}
		why = append(why, v.Errors...)
	}
	if len(rs.Variants) == 0 {
		why = append(why, "no storm ran")
	}
	if !rs.Complete && len(why) == 0 {
		why = append(why, "the run stopped early")
	}
	t.Passed = len(why) == 0
	t.Why = strings.Join(why, "; ")
}

// tail is the last lines of a log, for a message.
func tail(path string) string {
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(0, len(lines)-3):], " | ")
}
