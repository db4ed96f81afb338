package main

import (
	"io"

	"github.com/stormbench/stormbench/bench/outfile"
)

// outputRules is what every output file flag's help and the README say
// about where an output can go (see bench/outfile).
const outputRules = `Output files (--output-file, --result, --junit, ...): "-" and /dev/stdout are
standard output. A regular file is written whole or not at all (a temporary
file renamed into place) and an existing one is replaced only with --force. A
character device (/dev/null) or a FIFO is written into, never replaced, and
needs no --force. A symbolic link is followed: its target is what is written
(replaced with --force when a regular file); the link stays, and a link to
nothing is refused. Directories, block devices and sockets are refused.`

// checkWritable refuses, before any work, an output path that the writer
// would refuse: an existing regular file without force, a missing
// directory, a directory, a dangling link (see bench/outfile). "" and "-"
// pass.
func checkWritable(path string, force bool) error {
	if path == "" {
		return nil
	}
	return outfile.Check(path, outfile.Options{Force: force, Stdout: io.Discard})
}

// writeOutput writes what render writes to path by the rules of
// bench/outfile, "-" being env's stdout.
func writeOutput(env *cmdEnv, path string, force bool, render func(io.Writer) error) error {
	return outfile.WriteFunc(path, outfile.Options{Force: force, Stdout: env.stdout}, render)
}

// mapped is f of every element of s.
func mapped[T, U any](s []T, f func(T) U) []U {
	out := make([]U, len(s))
	for i, v := range s {
		out[i] = f(v)
	}
	return out
}

// toStdout says the output path is standard output, where a command's own
// messages must then not go.
func toStdout(path string) bool {
	t, err := outfile.Resolve(path, outfile.Options{Force: true, Stdout: io.Discard})
	return err == nil && t.Kind == outfile.Stdout
}

// writesInto says path is standard output, a device or a FIFO: written
// into, so that a name's extension cannot tell its format.
func writesInto(path string) bool {
	t, err := outfile.Resolve(path, outfile.Options{Force: true, Stdout: io.Discard})
	return err == nil && (t.Kind == outfile.Stdout || t.Kind == outfile.Into)
}
