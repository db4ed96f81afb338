// Package outfile writes the files a user names for output: a report, a
// result, JUnit XML, a profile. Every output of stormbench goes through it,
// so that every one follows the same rules:
//
//   - "-" is standard output.
//   - A new path, or an existing regular file: a temporary file in the same
//     directory, renamed into place (github.com/google/renameio), so that a
//     reader or a crash never sees half a document. An existing file is
//     replaced only with Force.
//   - A character device (/dev/null, a terminal) or a FIFO: opened and
//     written into, never replaced; no Force needed, as nothing is replaced.
//   - /dev/stdout (and /dev/fd/1, /proc/self/fd/1): standard output, as "-".
//     Another open descriptor (/dev/stderr, /dev/fd/N): written into, and
//     appended to when it is a regular file, as the shell's >> does.
//   - A symbolic link: followed, and the rules apply to its target; the link
//     itself is never replaced. A link to a regular file needs Force and the
//     target is replaced in its own directory. A link to nothing (dangling)
//     is refused: stormbench does not create files where a link points.
//   - Anything else (a directory, a block device, a socket) is refused.
//
// Nothing that is not a regular file is ever replaced or removed.
package outfile

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"syscall"

	"github.com/google/renameio/v2"
)

// Options say how a path may be written.
type Options struct {
	// Force allows replacing an existing regular file. Without it, writing
	// over one fails with an *ExistsError.
	Force bool
	// MakeDirs creates a new file's missing parent directories.
	MakeDirs bool
	// Stdout receives what is written to "-" and /dev/stdout. Without it
	// "-" is refused and /dev/stdout is written as an open descriptor.
	Stdout io.Writer
	// Perm is a new file's permission bits (before the umask); 0 means 0644.
	Perm os.FileMode
	// NoWait refuses a FIFO that has no reader when it is opened, rather
	// than waiting for one as the shell's > does: a command that opens its
	// outputs before its work, and writes them after, must not run to the
	// end and then block for ever.
	NoWait bool
}

// Kind is how a path is written.
type Kind int

const (
	// New is a path that does not exist: created by a rename.
	New Kind = iota
	// Replace is an existing regular file: replaced by a rename (Force).
	Replace
	// Into is a character device, a FIFO or an open descriptor: opened and
	// written into.
	Into
	// Stdout is "-" or /dev/stdout: Options.Stdout.
	Stdout
)

// Target is where a path's bytes go.
type Target struct {
	// Path is the path as given.
	Path string
	// File is the file renamed into place (New, Replace): Path, or the
	// target of the symbolic link Path.
	File string
	Kind Kind
	// appendTo is set for a regular file reached through an open
	// descriptor (/dev/fd/N).
	appendTo bool
	// fifo is a named pipe: Options.NoWait applies.
	fifo bool
	// dir is a new file's nearest existing directory (MakeDirs creates
	// the rest).
	dir string
}

// ExistsError is returned for an existing regular file without Force.
type ExistsError struct{ Path string }

func (e *ExistsError) Error() string {
	return fmt.Sprintf("%s exists: pass --force to replace it", e.Path)
}

// Unwrap makes errors.Is(err, fs.ErrExist) hold.
func (e *ExistsError) Unwrap() error { return fs.ErrExist }

// stdoutPaths name this process's standard output.
var stdoutPaths = map[string]bool{"/dev/stdout": true, "/dev/fd/1": true, "/proc/self/fd/1": true, "/proc/thread-self/fd/1": true}

// descriptorPath matches the names of a process's open descriptors, whose
// "symbolic links" are the kernel's: a regular file behind one is the file
// the shell opened (2>log), written into rather than replaced.
var descriptorPath = regexp.MustCompile(`^(/dev/(fd/[0-9]+|stdout|stderr)|/proc/(self|thread-self|[0-9]+)/fd/[0-9]+)$`)

// Resolve says how path would be written, without writing anything. Its
// errors are in the user's words and name the path as given.
func Resolve(path string, opts Options) (Target, error) {
	t := Target{Path: path, File: path}
	switch {
	case path == "":
		return t, errors.New("no file name given")
	case path == "-":
		if opts.Stdout == nil {
			return t, errors.New("- (standard output) cannot take this output: name a file")
		}
		t.Kind = Stdout
		return t, nil
	case stdoutPaths[filepath.Clean(path)] && opts.Stdout != nil:
		t.Kind = Stdout
		return t, nil
	}
	lst, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		// A path under a file (ENOTDIR) is new: newPath names the file.
		return newPath(t, opts)
	}
	if err != nil {
		return t, fmt.Errorf("cannot write %s: %v", path, plain(err))
	}
	st := lst
	descriptor := descriptorPath.MatchString(filepath.Clean(path))
	if lst.Mode()&fs.ModeSymlink != 0 {
		st, err = os.Stat(path)
		if errors.Is(err, fs.ErrNotExist) {
			dest, _ := os.Readlink(path)
			return t, fmt.Errorf("%s is a symbolic link to %s, which does not exist: create the file or remove the link", path, dest)
		}
		if err != nil {
			return t, fmt.Errorf("cannot write %s: %v", path, plain(err))
		}
		if st.Mode().IsRegular() && !descriptor {
			if t.File, err = filepath.EvalSymlinks(path); err != nil {
				return t, fmt.Errorf("cannot write %s: %v", path, plain(err))
			}
		}
	}
	m := st.Mode()
	switch {
	case m.IsRegular() && descriptor:
		t.Kind, t.appendTo = Into, true
	case m.IsRegular():
		if !opts.Force {
			return t, &ExistsError{Path: path}
		}
		t.Kind = Replace
	case m.IsDir():
		return t, fmt.Errorf("%s is a directory: name a file", path)
	case m&fs.ModeNamedPipe != 0:
		t.Kind, t.fifo = Into, true
	case m&fs.ModeCharDevice != 0:
		t.Kind = Into
	default: // a block device, a socket
		return t, fmt.Errorf("%s is a %s: outputs go to files, character devices (such as /dev/null) or FIFOs", path, typeName(m))
	}
	return t, nil
}

// newPath checks that a new file can be created at t.Path: its directory
// exists, or MakeDirs can create it.
func newPath(t Target, opts Options) (Target, error) {
	t.Kind = New
	dir := filepath.Dir(t.Path)
	for {
		st, err := os.Stat(dir)
		switch {
		case err == nil && st.IsDir():
			t.dir = dir
			return t, nil
		case err == nil:
			return t, fmt.Errorf("cannot write %s: %s is not a directory", t.Path, dir)
		case !errors.Is(err, fs.ErrNotExist):
			return t, fmt.Errorf("cannot write %s: %v", t.Path, plain(err))
		case !opts.MakeDirs:
			return t, fmt.Errorf("cannot write %s: directory %s does not exist", t.Path, dir)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return t, fmt.Errorf("cannot write %s: directory %s does not exist", t.Path, dir)
		}
		dir = parent
	}
}

// Check says whether path can be written, before any work is done: Resolve,
// and a test that the directory takes a new file or the device or FIFO
// takes writes. It writes nothing that stays.
func Check(path string, opts Options) error {
	t, err := Resolve(path, opts)
	if err != nil {
		return err
	}
	switch t.Kind {
	case Stdout:
		return nil
	case Into:
		if err := syscall.Access(path, 2 /* W_OK */); err != nil {
			return fmt.Errorf("cannot write %s: %v", path, plain(err))
		}
		return nil
	}
	dir := cmp.Or(t.dir, filepath.Dir(t.File))
	return tryCreate(dir, func(err error) error { return fmt.Errorf("cannot write %s: directory %s: %v", path, dir, err) })
}

// CheckDir says whether files can be written in dir, before any work is
// done: dir is a directory, or can be created, and takes a new file. It
// writes nothing that stays.
func CheckDir(dir string) error {
	probe := dir
	for {
		st, err := os.Stat(probe)
		switch {
		case err == nil && st.IsDir():
		case err == nil && probe == dir:
			return fmt.Errorf("%s is not a directory", dir)
		case err == nil:
			return fmt.Errorf("cannot create %s: %s is not a directory", dir, probe)
		case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
			// Created when written: its nearest existing parent must take it.
			parent := filepath.Dir(probe)
			if parent == probe {
				return fmt.Errorf("cannot create %s", dir)
			}
			probe = parent
			continue
		default:
			return fmt.Errorf("cannot write in %s: %v", dir, plain(err))
		}
		break
	}
	return tryCreate(probe, func(err error) error { return fmt.Errorf("cannot write in %s: %v", probe, err) })
}

// tryCreate creates a file in dir and removes it; failed words the error of
// creating it, without the probe's own name, which would only confuse.
func tryCreate(dir string, failed func(error) error) error {
	f, err := os.CreateTemp(dir, ".stormbench-check-*")
	if err != nil {
		return failed(plain(err))
	}
	f.Close()
	return os.Remove(f.Name())
}

// File is an output being written. Close commits it (renames it into place,
// or closes the device); Abort discards it.
type File struct {
	t       Target
	pending *renameio.PendingFile
	f       *os.File
	w       io.Writer
}

// Create opens path for writing by the rules of the package comment.
func Create(path string, opts Options) (*File, error) {
	t, err := Resolve(path, opts)
	if err != nil {
		return nil, err
	}
	out := &File{t: t}
	switch t.Kind {
	case Stdout:
		out.w = opts.Stdout
	case Into:
		// No O_CREATE: if the device went away, nothing is created. A FIFO
		// waits for its reader here, as the shell's > does.
		flags := os.O_WRONLY
		if t.appendTo {
			flags |= os.O_APPEND
		}
		if t.fifo && opts.NoWait {
			// Opening a FIFO's write end without waiting fails with ENXIO
			// when no reader has it open (fifo(7)); Go's poller then
			// writes the descriptor as it would a blocking one.
			flags |= syscall.O_NONBLOCK
		}
		f, err := os.OpenFile(path, flags, 0)
		if errors.Is(err, syscall.ENXIO) {
			return nil, fmt.Errorf("%s is a FIFO that nothing reads: start its reader first", path)
		}
		if err != nil {
			return nil, fmt.Errorf("writing %s: %v", path, plain(err))
		}
		out.f, out.w = f, f
	default:
		dir := filepath.Dir(t.File)
		if opts.MakeDirs {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, fmt.Errorf("writing %s: creating directory %s: %v", path, dir, plain(err))
			}
		}
		p, err := renameio.NewPendingFile(t.File, renameio.WithTempDir(dir), renameio.WithPermissions(cmp.Or(opts.Perm, 0o644)))
		if err != nil {
			return nil, fmt.Errorf("writing %s: directory %s: %v", path, dir, plain(err))
		}
		out.pending, out.w = p, p
	}
	return out, nil
}

// Write writes to the output.
func (f *File) Write(p []byte) (int, error) {
	n, err := f.w.Write(p)
	if err != nil {
		err = fmt.Errorf("writing %s: %v", f.t.Path, plain(err))
	}
	return n, err
}

// Close commits the output: a temporary file is renamed into place (after
// checking that what it replaces is still a regular file, or nothing), a
// device or FIFO is closed.
func (f *File) Close() error {
	switch {
	case f.pending != nil:
		if st, err := os.Lstat(f.t.File); err == nil && !st.Mode().IsRegular() {
			_ = f.pending.Cleanup()
			return fmt.Errorf("writing %s: it became a %s while being written; left as it is", f.t.Path, typeName(st.Mode()))
		}
		if err := f.pending.CloseAtomicallyReplace(); err != nil {
			_ = f.pending.Cleanup()
			return fmt.Errorf("writing %s: %v", f.t.Path, plain(err))
		}
	case f.f != nil:
		if err := f.f.Close(); err != nil {
			return fmt.Errorf("writing %s: %v", f.t.Path, plain(err))
		}
	}
	return nil
}

// Abort discards a file not yet committed: the temporary file is removed; a
// device or FIFO is closed with what was written.
func (f *File) Abort() {
	switch {
	case f.pending != nil:
		_ = f.pending.Cleanup()
	case f.f != nil:
		_ = f.f.Close()
	}
}

// Write writes data to path by the rules of the package comment.
func Write(path string, data []byte, opts Options) error {
	return WriteFunc(path, opts, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteFunc writes what render writes to path; a render error leaves the
// path as it was (for a device or FIFO, what was written stays written).
func WriteFunc(path string, opts Options, render func(io.Writer) error) error {
	f, err := Create(path, opts)
	if err != nil {
		return err
	}
	if err := render(f); err != nil {
		f.Abort()
		return err
	}
	return f.Close()
}

// plain is an error without the path it carries: the message names the
// user's path, never a temporary file's.
func plain(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// typeName names a file type in words.
func typeName(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "regular file"
	case m.IsDir():
		return "directory"
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "FIFO"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "block device"
	case m&fs.ModeSocket != 0:
		return "socket"
	}
	return "special file"
}
