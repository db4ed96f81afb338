package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
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
		id, _ := currentRunID.Load().(string)
		fmt.Fprintln(os.Stderr, "\n"+interruptNote(id))
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

// interruptNote is what the first interrupt prints: a command that has a
// run (its id known: run, sweep, fleet) brings nodes back and cleans up;
// any other only stops.
func interruptNote(runID string) string {
	if runID == "" {
		return "stormbench: interrupted: stopping (interrupt again to exit now)"
	}
	return "stormbench: interrupted: stopping, bringing nodes back and cleaning up (interrupt again to exit now)"
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

// cmdEnv carries the writers a command prints to.
type cmdEnv struct {
	stdout, stderr io.Writer
	// args is the command line after "stormbench", as given (a
	// calibration records it).
	args []string
	// flagNotes holds what the flag parser says while parsing (a
	// deprecated flag's note), printed once -q/--quiet is known.
	flagNotes bytes.Buffer
}

// globalOptions are the flags every command accepts: -v/--v N (klog
// verbosity for client-go and the apimachinery libraries, logged to
// stderr; 0, the default, discards klog) and -q/--quiet (no progress or
// warnings on stderr; errors still print), and the root's --version.
type globalOptions struct {
	verbosity int
	quiet     bool
	version   bool
}

// apply takes effect once the flags are parsed, before a command runs.
func (g *globalOptions) apply(env *cmdEnv) error {
	if g.verbosity < 0 || g.verbosity > 10 {
		return usagef("-v %d: the verbosity level is a number from 0 to 10", g.verbosity)
	}
	if g.quiet {
		// Errors are printed by exitCode, to the real stderr.
		env.stderr = io.Discard
	}
	_, _ = env.flagNotes.WriteTo(env.stderr)
	if g.verbosity > 0 {
		setVerbosity(env.stderr, g.verbosity)
	}
	return nil
}

// newRootCmd builds stormbench's command tree, every command printing to
// env.
func newRootCmd(env *cmdEnv) *cobra.Command {
	g := &globalOptions{}
	root := &cobra.Command{
		Use:   "stormbench",
		Short: "Restart storms of simulated nodes against a real control plane, measured",
		Long: `stormbench drives thousands of KWOK-simulated nodes through coordinated kubelet
restarts, container-runtime restarts and node reboots against a real
kube-apiserver, etcd and kube-controller-manager, and measures API-server
request bursts, EndpointSlice churn and recovery latency.

Exit codes: 0 ok, 1 a gate failed, 2 bad usage or input, 3 the run failed,
130 a second interrupt (exit at once; the message names the cleanup).`,
		Example: `  stormbench run --profile quick
  stormbench help run
  stormbench --version`,
		Args:              cobra.ArbitraryArgs,
		SilenceErrors:     true,
		SilenceUsage:      true,
		DisableAutoGenTag: true,
		PersistentPreRunE: func(*cobra.Command, []string) error { return g.apply(env) },
		RunE: func(cmd *cobra.Command, args []string) error {
			if g.version {
				return printVersion(env, "")
			}
			if len(args) == 0 {
				_ = cmd.Help()
			}
			return needsSubcommand(cmd, args)
		},
	}
	root.PersistentFlags().IntVarP(&g.verbosity, "v", "v", 0, "klog verbosity of client-go and the apimachinery libraries, on stderr (0 to 10; 0 discards it)")
	root.PersistentFlags().BoolVarP(&g.quiet, "quiet", "q", false, "No progress or warnings on stderr; errors still print")
	root.Flags().BoolVar(&g.version, "version", false, "Print the version (as stormbench version does)")
	root.AddCommand(
		newRunCmd(env), newSweepCmd(env), newClusterCmd(env), newFleetCmd(env),
		newProfilesCmd(env), newPreflightCmd(env), newCleanupCmd(env), newVersionCmd(env),
		newCompletionCmd(env), newCompareCmd(env), newReportCmd(env), newGateCmd(env),
		newCalibrateCmd(env), newExportCmd(env), newMergeCmd(env),
	)
	root.SetHelpCommand(newHelpCmd())
	root.CompletionOptions.DisableDefaultCmd = true
	root.SetOut(env.stdout)
	root.SetErr(env.stderr)
	root.SetFlagErrorFunc(flagError)
	// Bool flags read as kubectl writes them, "--yes", not pflag 1.1's
	// "--yes[=true|false]".
	templateFuncs.Do(func() { cobra.AddTemplateFunc("flagUsages", flagUsages) })
	root.SetUsageTemplate(strings.NewReplacer(
		".LocalFlags.FlagUsages", "flagUsages .LocalFlags",
		".InheritedFlags.FlagUsages", "flagUsages .InheritedFlags",
	).Replace(root.UsageTemplate()))
	completeFlagValues(root)
	walk(root, func(c *cobra.Command) {
		c.Flags().SortFlags = false
		c.SuggestionsMinimumDistance = 2
		c.Flags().SetOutput(&env.flagNotes)
	})
	return root
}

// newHelpCmd is "stormbench help [command]": the command's --help, and bad
// usage for a command that does not exist (cobra's own help command shows
// stormbench's help for it and exits 0).
func newHelpCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		ValidArgsFunction: func(c *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
			if cmd, rest, err := c.Root().Find(args); err == nil && len(rest) == 0 {
				return subcommands(cmd), cobra.ShellCompDirectiveNoFileComp
			}
			return nil, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(c *cobra.Command, args []string) error {
			cmd, rest, err := c.Root().Find(args)
			if err != nil || len(rest) > 0 {
				return usagef("no help for %q: no such command (stormbench --help lists them)", strings.Join(args, " "))
			}
			return cmd.Help()
		},
	}
}

// templateFuncs adds flagUsages to cobra's template functions, a map of
// cobra's own, once.
var templateFuncs sync.Once

// walk calls f on c and every command below it.
func walk(c *cobra.Command, f func(*cobra.Command)) {
	f(c)
	for _, sub := range c.Commands() {
		walk(sub, f)
	}
}

// needsSubcommand is the run of a command that only holds subcommands:
// bad usage, naming them, or the nearest to an unknown one (cobra's
// suggestions).
func needsSubcommand(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		hint := ""
		if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
			hint = fmt.Sprintf(" (did you mean %q?)", s[0])
		}
		return usagef("unknown command %q for %q%s", args[0], cmd.CommandPath(), hint)
	}
	return usagef("%s needs a command: one of %s", cmd.CommandPath(), strings.Join(subcommands(cmd), ", "))
}

// subcommands names the commands below cmd that help lists.
func subcommands(cmd *cobra.Command) []string {
	var names []string
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
		}
	}
	return names
}

// noArgs is the Args of a command that takes no arguments: bad usage.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usagef("%s takes no arguments (got %q)", cmd.CommandPath(), args)
	}
	return nil
}

// flagError makes a flag parse error bad usage (exit 2); an unknown flag
// close to a known one is suggested, by cobra's rule for commands.
func flagError(cmd *cobra.Command, err error) error {
	if name, ok := strings.CutPrefix(err.Error(), "unknown flag: --"); ok {
		flags := &cobra.Command{SuggestionsMinimumDistance: 2}
		cmd.Flags().VisitAll(func(f *pflag.Flag) {
			flags.AddCommand(&cobra.Command{Use: f.Name, Hidden: f.Hidden || f.Deprecated != "", Run: func(*cobra.Command, []string) {}})
		})
		if s := flags.SuggestionsFor(name); len(s) > 0 {
			return usageError{fmt.Errorf("%w (did you mean \"--%s\"?)", err, s[0])}
		}
	}
	return usageError{err}
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
	root := newRootCmd(&cmdEnv{stdout: stdout, stderr: stderr, args: args})
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	setVerbosity(stderr, 0)
	return exitCode(stderr, err)
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
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(stderr, "stormbench: %s\n", boundMessages(err.Error()))
	var ue usageError
	var ge gateError
	switch {
	case errors.As(err, &ue), profiles.IsValidation(err), profiles.IsLoadError(err), cluster.IsConfigError(err), cluster.IsVersionNotBuilt(err):
		return exitUsage
	case errors.As(err, &ge):
		return exitGateFail
	default:
		return exitFailed
	}
}

// flagUsages is pflag's flag table with bool flags written as kubectl
// writes them, "--yes", not "--yes[=true|false]" (pflag 1.1 adds the
// suffix), the usage column aligned again without it.
func flagUsages(fs *pflag.FlagSet) string {
	lines := strings.Split(strings.ReplaceAll(fs.FlagUsages(), "[=true|false]", ""), "\n")
	width := 0
	for _, l := range lines {
		if m := flagRow.FindStringSubmatch(l); m != nil {
			width = max(width, len(m[1]))
		}
	}
	for i, l := range lines {
		if m := flagRow.FindStringSubmatch(l); m != nil {
			lines[i] = fmt.Sprintf("%-*s   %s", width, m[1], m[2])
		}
	}
	return strings.Join(lines, "\n")
}

// flagRow splits a line of pflag's flag table into the flag and its usage,
// at the first run of two or more blanks after the flag.
var flagRow = regexp.MustCompile(`^(\s*\S.*?)\s{2,}(\S.*)$`)
