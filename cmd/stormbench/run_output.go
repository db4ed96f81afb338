package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/stormbench/stormbench/bench/outfile"
	"github.com/stormbench/stormbench/bench/report"
	"github.com/stormbench/stormbench/bench/result"
	"github.com/stormbench/stormbench/profiles"
)

// Where a run's result goes: the result file, the sweep table, and the output checks.

// checkResult is the one check of --result, run --dry-run's and the run's:
// the rules of every output (bench/outfile), a new file's directories made
// as needed. It writes nothing that stays.
func checkResult(path string, force bool) error {
	err := outfile.Check(path, outfile.Options{Force: force, MakeDirs: true})
	switch {
	case err == nil:
		return nil
	case errors.Is(err, os.ErrExist):
		return usagef("--result %s exists; use --force to overwrite it or choose another --run-id", path)
	default:
		return usagef("--result: %v", err)
	}
}

// checkProfileOutput is the one check of --cpuprofile and --memprofile,
// run --dry-run's and the run's: the rules of every output, in a directory
// that exists.
func checkProfileOutput(flag, path string, force bool) error {
	if err := outfile.Check(path, outfile.Options{Force: force}); err != nil {
		return usagef("%s: %v", flag, err)
	}
	return nil
}

// resultFile is the run's result file, rewritten at every checkpoint. A
// device or FIFO (/dev/stdout, a pipe) takes one document, the last: the
// checkpoints are kept in memory and flush writes it.
type resultFile struct {
	path           string
	force, written bool
	into           bool
	last           *result.Result
}

// newResultFile refuses, before the run, a result path the writer would
// refuse (an existing file without --force, a directory, a dangling link;
// see bench/outfile); the file's directory is created when written.
func newResultFile(path string, force bool) (*resultFile, error) {
	if err := checkResult(path, force); err != nil {
		return nil, err
	}
	t, err := outfile.Resolve(path, outfile.Options{Force: force, MakeDirs: true})
	if err != nil {
		return nil, usagef("--result: %v", err)
	}
	return &resultFile{path: path, force: force, into: t.Kind == outfile.Into}, nil
}

// write is the run's checkpoint: the result so far replaces the file.
func (f *resultFile) write(r *result.Result) error {
	if f.into {
		f.last, f.written = r, true
		return nil
	}
	err := result.WriteFile(f.path, r, result.WriteOptions{Force: f.force || f.written, MakeDirs: true})
	if err == nil {
		f.written = true
	}
	return err
}

// flush writes the last checkpoint into a device or FIFO.
func (f *resultFile) flush() error {
	if !f.into || f.last == nil {
		return nil
	}
	return result.WriteFile(f.path, f.last, result.WriteOptions{Force: true})
}

// runError says what a failed run left behind; timedOut says the run's
// --timeout stopped it (runPlan names it).
func (f *resultFile) runError(runErr error, timedOut bool) error {
	switch {
	case runErr == nil:
		return nil
	case timedOut && !f.written:
		return fmt.Errorf("no variant finished, no result written: %w", runErr)
	case timedOut:
		return fmt.Errorf("partial result in %s: %w", f.path, runErr)
	case errors.Is(runErr, context.Canceled) && !f.written:
		// Interrupted before any variant finished (provisioning, for
		// example): there is no file to point at.
		return fmt.Errorf("run interrupted before any variant finished; no result written: %w", runErr)
	case errors.Is(runErr, context.Canceled):
		return fmt.Errorf("run interrupted; partial result in %s: %w", f.path, runErr)
	default:
		return fmt.Errorf("run failed: %w", runErr)
	}
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
