// Command testtimes reads `go test -json` on its standard input, prints what
// `go test` would (package results, and the output of failed tests; with -v
// everything), and ends with tables of the slowest packages and tests and of
// the embedded clusters each package booted, so that a test that got slow
// shows up in the log. It exits 1 when a test, a package or a build failed,
// and 0 otherwise, so that
//
//	set -o pipefail; go test -json ./... | go run ./scripts/testtimes
//
// keeps go test's verdict.
//
// With -lane, it runs the commands itself, side by side, and reads their
// events as they come (a line at a time, so two lanes' lines never mix):
//
//	go run ./scripts/testtimes -lane "go test -json ./a" -lane "go test -json -p 1 ./b ./c"
//
// `go test` runs one test binary at a time when -bench is given, so lanes are
// the way to run packages side by side. `make test` uses two lanes (the
// CLI and the calibration; the engine and the rest; README, "Tests"). A
// package split between lanes with -run and -skip of one regexp has its
// times added up here. A lane's command is split at spaces (no shell); it inherits the
// environment. The exit code is 1 when a lane's command failed, as well.
package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// event is one line of `go test -json` (cmd/test2json), the fields read.
type event struct {
	Action, Package, Test, Output string
	Elapsed                       float64
}

type testKey struct{ pkg, test string }

type pkgStat struct {
	name    string
	elapsed float64
	result  string
	boots   int
	bootSec float64
}

type testStat struct {
	key     testKey
	elapsed float64
	result  string
}

// bootLine is what bench/cluster/clustertest logs for every cluster it starts.
var bootLine = regexp.MustCompile(`cluster boot: ([0-9.]+)s`)

func main() {
	verbose := flag.Bool("v", false, "print every test's output, as go test -v does")
	top := flag.Int("top", 15, "how many of the slowest tests to list")
	var ls [][]string
	flag.Func("lane", "a `command` printing go test -json to run beside the other lanes (repeatable); without it, read standard input", func(v string) error {
		if len(strings.Fields(v)) == 0 {
			return errors.New("an empty command")
		}
		ls = append(ls, strings.Fields(v))
		return nil
	})
	flag.Parse()
	if len(ls) == 0 {
		os.Exit(summarize(os.Stdin, os.Stdout, *verbose, *top))
	}
	start := time.Now()
	r, wait := runLanes(ls, os.Stderr)
	code := summarize(r, os.Stdout, *verbose, *top)
	if err := wait(); err != nil {
		fmt.Fprintf(os.Stdout, "testtimes: %v\n", err)
		code = 1
	}
	fmt.Fprintf(os.Stdout, "\nWall time: %.0fs in %d lanes\n", time.Since(start).Seconds(), len(ls))
	os.Exit(code)
}

// runLanes starts every lane's command and returns their standard outputs
// merged a whole line at a time, and a wait that returns when all have
// exited, with an error naming each lane that failed. Their standard
// errors go to stderr as they are.
func runLanes(ls [][]string, stderr io.Writer) (io.Reader, func() error) {
	// An io.Pipe passes each Write whole, one at a time: a lane writes
	// whole lines, so lanes never mix within one.
	pr, pw := io.Pipe()
	var wg sync.WaitGroup
	errs := make([]error, len(ls))
	for i, args := range ls {
		wg.Go(func() {
			cmd := exec.Command(args[0], args[1:]...)
			cmd.Stderr = stderr
			out, err := cmd.StdoutPipe()
			if err == nil {
				err = cmd.Start()
			}
			if err == nil {
				sc := bufio.NewScanner(out)
				sc.Buffer(make([]byte, 1<<20), 64<<20)
				for sc.Scan() {
					_, _ = pw.Write(append(sc.Bytes(), '\n'))
				}
				// Drain what a too-long line left, so the command can exit.
				_, _ = io.Copy(io.Discard, out)
				err = cmd.Wait()
			}
			if err != nil {
				errs[i] = fmt.Errorf("lane %q: %w", strings.Join(args, " "), err)
			}
		})
	}
	go func() {
		wg.Wait()
		pw.Close()
	}()
	return pr, func() error {
		wg.Wait()
		return errors.Join(errs...)
	}
}

// summarize reads the events from r and writes output and tables to w; it
// returns the exit code.
func summarize(r io.Reader, w io.Writer, verbose bool, top int) int {
	sm := &summary{w: w, verbose: verbose, pkgs: map[string]*pkgStat{}, buffered: map[testKey][]string{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if err := json.Unmarshal(line, &e); err != nil || e.Action == "" {
			// Not an event (go vet's or the linker's messages): as is.
			fmt.Fprintln(w, string(line))
			continue
		}
		switch e.Action {
		case "build-output":
			fmt.Fprint(w, e.Output)
		case "build-fail":
			sm.failed = true
		case "output":
			sm.output(e)
		case "pass", "fail", "skip":
			sm.end(e)
		}
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintf(w, "testtimes: reading go test -json: %v\n", err)
		sm.failed = true
	}
	// A test still running when its package failed (a panic, a timeout)
	// never got its own fail event: show what it printed.
	for k, out := range sm.buffered {
		if p := sm.pkgs[k.pkg]; p != nil && p.result == "fail" && !verbose {
			fmt.Fprintf(w, "--- unfinished: %s %s\n%s", k.pkg, k.test, strings.Join(out, ""))
		}
	}
	writeTables(w, sm.pkgs, sm.tests, top)
	if sm.failed {
		return 1
	}
	return 0
}

// summary is what summarize has read so far.
type summary struct {
	w        io.Writer
	verbose  bool
	failed   bool
	pkgs     map[string]*pkgStat
	tests    []testStat
	buffered map[testKey][]string
}

// pkg returns the package's figures, new if need be.
func (sm *summary) pkg(name string) *pkgStat {
	if p, ok := sm.pkgs[name]; ok {
		return p
	}
	p := &pkgStat{name: name}
	sm.pkgs[name] = p
	return p
}

// output handles an output event: a cluster boot line is counted; a
// test's output is held until it ends (shown if it fails), a benchmark's
// and the package's go out as they come.
func (sm *summary) output(e event) {
	w := sm.w
	if m := bootLine.FindStringSubmatch(e.Output); m != nil {
		p := sm.pkg(e.Package)
		p.boots++
		s, _ := strconv.ParseFloat(m[1], 64)
		p.bootSec += s
	}
	switch {
	case sm.verbose:
		fmt.Fprint(w, e.Output)
	case strings.HasPrefix(e.Test, "Benchmark"):
		// A benchmark has no pass event: its results and logs go out as
		// they come, as go test prints them.
		if !strings.HasPrefix(e.Output, "=== ") && strings.TrimSpace(e.Output) != e.Test {
			fmt.Fprint(w, e.Output)
		}
	case e.Test != "":
		k := testKey{e.Package, e.Test}
		sm.buffered[k] = append(sm.buffered[k], e.Output)
	case !strings.HasPrefix(e.Output, "=== ") && !strings.HasPrefix(e.Output, "--- ") &&
		strings.TrimSpace(e.Output) != "PASS":
		// Package-level lines: ok, FAIL, no test files, and what TestMain
		// prints.
		fmt.Fprint(w, e.Output)
	}
}

// end handles a pass, fail or skip event of a test or a package.
func (sm *summary) end(e event) {
	if e.Action == "fail" {
		sm.failed = true
	}
	if e.Test == "" {
		// A package split between lanes (make test's -run and -skip of
		// one regexp) ends once in each: its time is the sum, and a
		// failure in either is its verdict.
		p := sm.pkg(e.Package)
		p.elapsed += e.Elapsed
		if p.result != "fail" && (p.result != "pass" || e.Action == "fail") {
			p.result = e.Action
		}
		return
	}
	k := testKey{e.Package, e.Test}
	if e.Action == "fail" && !sm.verbose {
		fmt.Fprint(sm.w, strings.Join(sm.buffered[k], ""))
	}
	delete(sm.buffered, k)
	sm.tests = append(sm.tests, testStat{k, e.Elapsed, e.Action})
}

func writeTables(w io.Writer, pkgs map[string]*pkgStat, tests []testStat, top int) {
	var ps []*pkgStat
	var total float64
	boots := 0
	for _, p := range pkgs {
		if p.result == "" && p.boots == 0 {
			continue
		}
		ps = append(ps, p)
		total += p.elapsed
		boots += p.boots
	}
	slices.SortFunc(ps, func(a, b *pkgStat) int { return cmp.Or(cmp.Compare(b.elapsed, a.elapsed), cmp.Compare(a.name, b.name)) })
	fmt.Fprintf(w, "\nSlowest packages (%d, %.0fs in all, %d cluster boots):\n", len(ps), total, boots)
	fmt.Fprintf(w, "  %8s  %-5s  %-14s  %s\n", "seconds", "", "cluster boots", "package")
	for _, p := range ps {
		if p.elapsed < 1 && p.boots == 0 {
			continue
		}
		b := ""
		if p.boots > 0 {
			b = fmt.Sprintf("%d (%.0fs)", p.boots, p.bootSec)
		}
		fmt.Fprintf(w, "  %8.1f  %-5s  %-14s  %s\n", p.elapsed, p.result, b, p.name)
	}
	// Top-level tests only: a subtest's time is in its parent's.
	ts := slices.DeleteFunc(slices.Clone(tests), func(t testStat) bool { return strings.Contains(t.key.test, "/") })
	slices.SortFunc(ts, func(a, b testStat) int {
		return cmp.Or(cmp.Compare(b.elapsed, a.elapsed), cmp.Compare(a.key.pkg, b.key.pkg), cmp.Compare(a.key.test, b.key.test))
	})
	fmt.Fprintf(w, "\nSlowest tests:\n")
	for _, t := range ts[:min(top, len(ts))] {
		fmt.Fprintf(w, "  %8.1f  %-5s  %s %s\n", t.elapsed, t.result, t.key.test, t.key.pkg)
	}
}
