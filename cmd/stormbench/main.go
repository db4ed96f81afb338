package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/go-logr/logr"
	"github.com/spf13/pflag"
	"k8s.io/klog/v2"

	"github.com/stormbench/stormbench/bench"
	"github.com/stormbench/stormbench/bench/cluster"
	"github.com/stormbench/stormbench/profiles"
)

// Exit codes; each means one thing.
const (
	exitOK       = 0
	exitGateFail = 1
	exitUsage    = 2
	exitFailed   = 3
)

func main() {
	// client-go logs through klog; stormbench reports errors itself.
	klog.SetLogger(logr.Discard())
	// A load generator's GC settings, unless GOGC or GOMEMLIMIT are set;
	// every result records them (run.goRuntime).
	bench.TuneGC()
	ctx, stop := signalContext()
	defer stop()
	os.Exit(run(ctx, os.Stdout, os.Stderr, os.Args[1:]))
}

// signalContext is cancelled on the first SIGINT/SIGTERM, so the run stops
// starting restarts, brings nodes back and writes what it has. A second
// signal exits at once.
func signalContext() (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ch
		fmt.Fprintln(os.Stderr, "\nstormbench: interrupted: stopping, bringing nodes back and cleaning up (interrupt again to exit now)")
		cancel()
		<-ch
		// Never --all: on a shared cluster it removes other runs' leftovers.
		if id, _ := currentRunID.Load().(string); id != "" {
			fmt.Fprintf(os.Stderr, "stormbench: exiting now; this run's leftovers can be removed with `stormbench cleanup --run-id %s`\n", id)
		} else {
			fmt.Fprintln(os.Stderr, "stormbench: exiting now; `stormbench cleanup --list` lists what runs left behind")
		}
		os.Exit(130)
	}()
	return ctx, func() { signal.Stop(ch); cancel() }
}

// currentRunID is the run id of the command in progress, once known, for
// the message of a second interrupt.
var currentRunID atomic.Value

// usageError marks bad usage or input (exit 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// gateError marks a failed gate or regression (exit 1).
type gateError struct{ err error }

func (e gateError) Error() string { return e.err.Error() }
func (e gateError) Unwrap() error { return e.err }

type command struct {
	name  string
	short string
	run   func(ctx context.Context, env *cmdEnv, args []string) error
}

// cmdEnv carries the writers a command prints to.
type cmdEnv struct {
	stdout, stderr io.Writer
	// flagSet, when set, receives each flag set the command builds
	// (newFlagSet): the completion scripts list the flags from them.
	flagSet func(*pflag.FlagSet)
}

func commands() []command {
	return []command{
		{"run", "Provision a fleet, run a storm profile, print the summary and write the result", runRun},
		{"sweep", "Capacity sweep: the storm at growing wave sizes; the max safe restart wave", runSweep},
		{"cluster", "Manage the embedded control plane: up, down, status", runCluster},
		{"fleet", "Provision or remove a fleet of KWOK nodes and workloads: up, down", runFleet},
		{"profiles", "List, show or validate storm profiles: list, show NAME, validate FILE...", runProfiles},
		{"preflight", "Read-only checks of a cluster: permissions, KWOK label selector, heartbeat timing", runPreflight},
		{"cleanup", "Remove what runs left behind: --run-id ID, --all, or --list", runCleanup},
		{"version", "Print the stormbench version", runVersion},
		{"completion", "Print a shell completion script: bash, zsh or fish", runCompletion},
		{"compare", "Compare result files or the variants of one: medians, deltas, significance", runCompare},
		{"report", "Write a self-contained HTML report (charts) or a markdown summary of a result", runReport},
		{"gate", "Check a result against SLOs and a baseline for CI: exit 1 when a gate fails", runGate},
		{"calibrate", "Measure the simulated kubelet against real kubelets (hollow, or on containerd): a fidelity table; exit 1 when a row disagrees", runCalibrate},
		{"export", "Write results in another tool's format: --format benchfmt (for benchstat)", runExport},
		{"merge", "Combine the result files of a sharded run (run --shard i/n) into one result", runMerge},
	}
}

// globalFlags takes the flags every command accepts out of args, before a
// "--": -v/--v N (klog verbosity for client-go and the apimachinery
// libraries, logged to stderr; 0, the default, discards klog) and
// -q/--quiet (no progress or warnings on stderr; errors still print).
func globalFlags(args []string) (rest []string, verbosity int, quiet bool, err error) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(rest, args[i:]...), verbosity, quiet, nil
		}
		switch {
		case a == "-q" || a == "--quiet":
			quiet = true
		case a == "-v" || a == "--v":
			if i+1 >= len(args) {
				return nil, 0, false, usagef("%s needs a verbosity level (0 to 10)", a)
			}
			i++
			a = "-v=" + args[i]
			fallthrough
		case strings.HasPrefix(a, "-v=") || strings.HasPrefix(a, "--v="):
			n, perr := strconv.Atoi(a[strings.IndexByte(a, '=')+1:])
			if perr != nil || n < 0 || n > 10 {
				return nil, 0, false, usagef("%s: the verbosity level is a number from 0 to 10", a)
			}
			verbosity = n
		default:
			rest = append(rest, a)
		}
	}
	return rest, verbosity, quiet, nil
}

// setVerbosity sends klog to stderr at level v (0 discards it).
func setVerbosity(stderr io.Writer, v int) {
	if v == 0 {
		klog.SetLogger(logr.Discard())
		return
	}
	klog.ClearLogger()
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("v", strconv.Itoa(v))
	_ = fs.Set("logtostderr", "false")
	klog.SetOutput(stderr)
}

func run(ctx context.Context, stdout, stderr io.Writer, args []string) int {
	args, verbosity, quiet, err := globalFlags(args)
	if err != nil {
		return exitCode(stderr, err)
	}
	if verbosity > 0 {
		setVerbosity(stderr, verbosity)
		defer setVerbosity(stderr, 0)
	}
	env := &cmdEnv{stdout: stdout, stderr: stderr}
	if quiet {
		// Errors are printed by exitCode, to the real stderr.
		env.stderr = io.Discard
	}
	if len(args) > 0 && args[0] == "--version" {
		args = []string{"version"}
	}
	// "help CMD" is "CMD --help".
	if len(args) > 1 && args[0] == "help" {
		args = []string{args[1], "--help"}
	}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		printUsage(stdout)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	var names []string
	for _, c := range commands() {
		if c.name == args[0] {
			err := c.run(ctx, env, args[1:])
			return exitCode(stderr, err)
		}
		names = append(names, c.name)
	}
	fmt.Fprintf(stderr, "stormbench: unknown command %q%s\n\n", args[0], didYouMean(args[0], names))
	printUsage(stderr)
	return exitUsage
}

// didYouMean suggests the closest of names to what was typed, when it is
// close enough to be a typo: ` (did you mean "run"?)`, or "".
func didYouMean(typed string, names []string) string {
	best, bestD := "", max(2, len(typed)/3)+1
	for _, n := range names {
		if d := editDistance(typed, n); d < bestD {
			best, bestD = n, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// maxMessageLen is the most characters an error message printed by
// stormbench holds, whatever the input that caused it.
const maxMessageLen = 500

// maxMessageLines is the most lines of a list of problems printed at once
// (run --dry-run's "N problems:"); the rest are counted.
const maxMessageLines = 10

// boundMessages bounds an error message as printed: a one-line message to
// maxMessageLen characters; a list of problems (one per line, as run
// --dry-run reports them all at once) to maxMessageLen characters per
// problem and maxMessageLines problems, so one huge input cannot hide the
// others.
func boundMessages(msg string) string {
	lines := strings.Split(msg, "\n")
	if len(lines) == 1 {
		return boundMessage(msg, maxMessageLen)
	}
	more := 0
	if len(lines) > maxMessageLines+1 {
		more = len(lines) - maxMessageLines - 1
		lines = lines[:maxMessageLines+1]
	}
	for i, l := range lines {
		lines[i] = boundMessage(l, maxMessageLen)
	}
	if more > 0 {
		lines = append(lines, fmt.Sprintf("  - and %d more", more))
	}
	return strings.Join(lines, "\n")
}

// boundMessage shortens msg to at most max characters (runes), keeping its
// start (what was being done, the first field paths) and its end (the
// innermost cause), and saying how much was left out between them.
func boundMessage(msg string, max int) string {
	r := []rune(msg)
	if len(r) <= max {
		return msg
	}
	if max < 80 {
		return string(r[:max])
	}
	tail := max / 5
	head := max - tail
	for {
		marker := fmt.Sprintf(" … (%d characters left out) … ", len(r)-head-tail)
		if n := head + len([]rune(marker)) + tail; n > max {
			head -= n - max
			continue
		}
		return string(r[:head]) + marker + string(r[len(r)-tail:])
	}
}

func exitCode(stderr io.Writer, err error) int {
	if err == nil || errors.Is(err, pflag.ErrHelp) {
		return exitOK
	}
	fmt.Fprintf(stderr, "stormbench: %s\n", boundMessages(err.Error()))
	var ue usageError
	var ge gateError
	switch {
	case errors.As(err, &ue), profiles.IsValidation(err), profiles.IsLoadError(err), cluster.IsConfigError(err):
		return exitUsage
	case errors.As(err, &ge):
		return exitGateFail
	default:
		return exitFailed
	}
}

func printUsage(w io.Writer) {
	fmt.Fprint(w, `stormbench drives thousands of KWOK-simulated nodes through coordinated kubelet
restarts, container-runtime restarts and node reboots against a real
kube-apiserver, etcd and kube-controller-manager, and measures API-server
request bursts, EndpointSlice churn and recovery latency.

Usage:
  stormbench <command> [flags]

Commands:
`)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.short)
	}
	fmt.Fprint(w, `
Run 'stormbench <command> --help' (or 'stormbench help <command>') for a
command's flags; 'stormbench --version' prints the version.

Every command takes -v N (klog verbosity of client-go, to stderr) and
-q/--quiet (no progress or warnings; errors still print).

Exit codes: 0 ok, 1 a gate failed, 2 bad usage or input, 3 the run failed,
130 a second interrupt (exit at once; the message names the cleanup).
`)
}

// newFlagSet returns a pflag set that reports errors instead of exiting.
func newFlagSet(env *cmdEnv, name, usage string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(env.stderr)
	fs.SortFlags = false
	fs.Usage = func() {
		fmt.Fprintf(env.stdout, "Usage: stormbench %s\n\nFlags:\n%s", usage, flagUsages(fs))
	}
	if env.flagSet != nil {
		env.flagSet(fs)
	}
	return fs
}

// parse parses flags, turning errors into usage errors; an unknown flag
// close to a known one is suggested.
func parse(fs *pflag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return err
		}
		if name, ok := strings.CutPrefix(err.Error(), "unknown flag: --"); ok {
			var names []string
			fs.VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
			if hint := didYouMean(name, names); hint != "" {
				return usageError{fmt.Errorf("%w%s", err, strings.Replace(hint, `"`, `"--`, 1))}
			}
		}
		return usageError{err}
	}
	return nil
}

func subcommand(args []string, allowed ...string) (string, []string, error) {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			return "help", nil, nil
		}
		return "", nil, usagef("missing subcommand: one of %s", strings.Join(allowed, ", "))
	}
	for _, a := range allowed {
		if a == args[0] {
			return a, args[1:], nil
		}
	}
	return "", nil, usagef("unknown subcommand %q: one of %s", args[0], strings.Join(allowed, ", "))
}

// flagUsages is pflag's flag table with bool flags written as kubectl
// writes them, "--yes", not "--yes[=true|false]" (pflag 1.1 adds the
// suffix; blanks of its width keep the columns aligned).
func flagUsages(fs *pflag.FlagSet) string {
	return strings.ReplaceAll(fs.FlagUsages(), "[=true|false]", strings.Repeat(" ", len("[=true|false]")))
}
