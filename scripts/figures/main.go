// Command figures regenerates the figures quoted in stormbench's markdown
// documents from the committed results they name (issue 47: every quoted
// figure generated from a committed result).
//
// A figure block is an HTML comment naming a result file and a kind, the
// generated lines, and a closing comment (see block). `go run
// ./scripts/figures` (make figures) rewrites every block of every markdown
// file in the repository; with -check it writes nothing, and lists the
// blocks that differ from what their file gives or name a missing file.
//
// It is a program under scripts, not a stormbench subcommand, because it
// works on this repository's documents, not on a user's cluster or results:
// it has no place in the command reference or the completion, and its test
// (TestFiguresCurrent) runs in make test's engine lane, not the CLI's.
//
// Exit codes: 0 every block is current (or was rewritten), 1 -check found
// blocks that differ, 2 bad usage or a block that cannot be made (a missing
// file, an unknown kind).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

func main() { os.Exit(run(os.Stdout, os.Stderr, os.Args[1:])) }

func run(stdout, stderr io.Writer, args []string) int {
	fs := flag.NewFlagSet("figures", flag.ContinueOnError)
	fs.SetOutput(stderr)
	check := fs.Bool("check", false, "write nothing; exit 1 if a block differs from what its file gives")
	root := fs.String("root", ".", "the repository's root")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "figures: unexpected arguments %q\n", fs.Args())
		return 2
	}
	docs, err := listFiles(*root, ".", ".md")
	if err != nil {
		fmt.Fprintf(stderr, "figures: %v\n", err)
		return 2
	}
	stale, made := 0, 0
	var errs []error
	for _, d := range docs {
		s, n, err := regenerate(*root, d, !*check)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, b := range s {
			fmt.Fprintf(stdout, "%s:%d: %s %s differs from what its file gives\n", d, b.Line, b.Source, b.Kind)
		}
		stale += len(s)
		made += n
	}
	if err := errors.Join(errs...); err != nil {
		fmt.Fprintf(stderr, "figures: %v\n", err)
		return 2
	}
	switch {
	case *check && stale > 0:
		fmt.Fprintf(stderr, "figures: %d of %d blocks differ: run make figures\n", stale, made)
		return 1
	case *check:
		fmt.Fprintf(stdout, "%d blocks current\n", made)
	default:
		fmt.Fprintf(stdout, "%d blocks made, %d of them changed\n", made, stale)
	}
	return 0
}

// regenerate makes every block of the document at doc (from root) and
// returns the blocks whose body differed and how many blocks it has; with
// write, it rewrites the document when one differed.
func regenerate(root, doc string, write bool) (stale []block, n int, err error) {
	path := filepath.Join(root, filepath.FromSlash(doc))
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, err
	}
	text := string(data)
	blocks, err := parseBlocks(text)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", doc, err)
	}
	bodies := make([]string, len(blocks))
	var errs []error
	for i, b := range blocks {
		body, err := render(root, doc, b)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s:%d: %s block: %w", doc, b.Line, b.Kind, err))
			continue
		}
		bodies[i] = body
		if body != b.Body {
			stale = append(stale, b)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, len(blocks), err
	}
	if write && len(stale) > 0 {
		if err := os.WriteFile(path, []byte(replaceBodies(text, blocks, bodies)), 0o644); err != nil {
			return nil, len(blocks), err
		}
	}
	return stale, len(blocks), nil
}
