package outfile

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// node is what a test case sets up in its own temporary directory: the
// path to write, and a check of what is there afterwards.
type node struct {
	// make creates the node and returns the path to write.
	make func(t *testing.T, dir string) string
	// read, when set, is started before the write and returns what it read
	// (a FIFO's reader).
	read func(path string) <-chan []byte
}

func regularFile(content string) func(t *testing.T, dir string) string {
	return func(t *testing.T, dir string) string {
		p := filepath.Join(dir, "out")
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
}

// device makes the device node name (mode unix.S_IFCHR or S_IFBLK).
func device(name string, mode uint32, major, minor uint32) func(t *testing.T, dir string) string {
	return func(t *testing.T, dir string) string {
		t.Helper()
		if os.Geteuid() != 0 {
			t.Skip("creating a device node needs root")
		}
		p := filepath.Join(dir, name)
		if err := unix.Mknod(p, mode|0o666, int(unix.Mkdev(major, minor))); err != nil {
			t.Fatalf("mknod %s: %v", p, err)
		}
		return p
	}
}

func fifo(name string) func(t *testing.T, dir string) string {
	return func(t *testing.T, dir string) string {
		p := filepath.Join(dir, name)
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
}

func directory(name string) func(t *testing.T, dir string) string {
	return func(t *testing.T, dir string) string {
		p := filepath.Join(dir, name)
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
}

// symlink makes the link "link" to to, after making its target with
// target unless it is nil.
func symlink(to string, target func(t *testing.T, dir string) string) func(t *testing.T, dir string) string {
	return func(t *testing.T, dir string) string {
		if target != nil {
			target(t, dir)
		}
		p := filepath.Join(dir, "link")
		if err := os.Symlink(to, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
}

func readFIFO(path string) <-chan []byte {
	ch := make(chan []byte, 1)
	go func() {
		f, err := os.Open(path) // waits for the writer
		if err != nil {
			ch <- []byte("open: " + err.Error())
			return
		}
		defer f.Close()
		b, _ := io.ReadAll(f)
		ch <- b
	}()
	return ch
}

// TestWrite writes "new" to every kind of node and checks the node's type
// afterwards (a FIFO stays a FIFO, a device a device, a link a link) and
// where the bytes went.
func TestWrite(t *testing.T) {
	const data = "new\n"
	for _, tc := range []struct {
		name  string
		node  node
		opts  Options
		err   string // a part of the error; "" for none
		exist bool   // the error is an *ExistsError
		// after checks the directory after the write.
		after func(t *testing.T, dir, path string, stdout string, read []byte)
	}{
		{
			name: "new path",
			node: node{make: func(t *testing.T, dir string) string { return filepath.Join(dir, "out") }},
			after: func(t *testing.T, dir, path, _ string, _ []byte) {
				wantFile(t, path, fs.FileMode(0), data)
			},
		},
		{
			name: "new path in a missing directory",
			node: node{make: func(t *testing.T, dir string) string { return filepath.Join(dir, "a", "b", "out") }},
			err:  "directory " + "DIR/a/b does not exist",
			after: func(t *testing.T, dir, path, _ string, _ []byte) {
				wantMissing(t, filepath.Join(dir, "a"))
			},
		},
		{
			name: "new path in a missing directory, MakeDirs",
			node: node{make: func(t *testing.T, dir string) string { return filepath.Join(dir, "a", "b", "out") }},
			opts: Options{MakeDirs: true},
			after: func(t *testing.T, dir, path, _ string, _ []byte) {
				wantFile(t, path, 0, data)
			},
		},
		{
			name:  "existing regular file without force",
			node:  node{make: regularFile("old\n")},
			err:   "DIR/out exists: pass --force to replace it",
			exist: true,
			after: func(t *testing.T, dir, path, _ string, _ []byte) {
				wantFile(t, path, 0, "old\n")
			},
		},
		{
			name: "existing regular file with force",
			node: node{make: regularFile("old old old\n")},
			opts: Options{Force: true},
			after: func(t *testing.T, dir, path, _ string, _ []byte) {
				wantFile(t, path, 0, data)
			},
		},
		{
			name: "directory",
			node: node{make: directory("d")},
			opts: Options{Force: true},
			err:  "DIR/d is a directory",
			after: func(t *testing.T, dir, path, _ string, _ []byte) {
				wantType(t, path, fs.ModeDir)
			},
		},
		{
			name: "FIFO, without force",
			node: node{
				make: fifo("fifo"),
				read: readFIFO,
			},
			after: func(t *testing.T, dir, path, _ string, read []byte) {
				wantType(t, path, fs.ModeNamedPipe)
				if string(read) != data {
					t.Errorf("the FIFO's reader read %q, want %q", read, data)
				}
			},
		},
		{
			name: "character device (null, 1:3), with force",
			node: node{make: device("null", unix.S_IFCHR, 1, 3)},
			opts: Options{Force: true},
			after: func(t *testing.T, dir, path, _ string, _ []byte) {
				wantType(t, path, fs.ModeDevice|fs.ModeCharDevice)
				wantEntries(t, dir, "null")
			},
		},
		{
			name: "character device (null, 1:3), without force",
			node: node{make: device("null", unix.S_IFCHR, 1, 3)},
			after: func(t *testing.T, dir, path, _ string, _ []byte) {
				wantType(t, path, fs.ModeDevice|fs.ModeCharDevice)
			},
		},
		{
			name: "block device is refused",
			node: node{make: device("blk", unix.S_IFBLK, 7, 200)},
			opts: Options{Force: true},
			err:  "DIR/blk is a block device",
			after: func(t *testing.T, dir, path, _ string, _ []byte) {
				wantType(t, path, fs.ModeDevice)
			},
		},
		{
			name: "symlink to a regular file, with force: the target is replaced, the link stays",
			node: node{make: symlink("out", regularFile("old\n"))},
			opts: Options{Force: true},
			after: func(t *testing.T, dir, path, _ string, _ []byte) {
				wantLink(t, path, "out")
				wantFile(t, filepath.Join(dir, "out"), 0, data)
				wantEntries(t, dir, "link", "out")
			},
		},
		{
			name: "symlink to a regular file in another directory, with force",
			node: node{make: symlink("sub/out", func(t *testing.T, dir string) string {
				return regularFile("old\n")(t, directory("sub")(t, dir))
			})},
			opts: Options{Force: true},
			after: func(t *testing.T, dir, path, _ string, _ []byte) {
				wantLink(t, path, "sub/out")
				wantFile(t, filepath.Join(dir, "sub", "out"), 0, data)
				wantEntries(t, filepath.Join(dir, "sub"), "out")
			},
		},
		{
			name:  "symlink to a regular file, without force",
			node:  node{make: symlink("out", regularFile("old\n"))},
			err:   "DIR/link exists: pass --force",
			exist: true,
			after: func(t *testing.T, dir, path, _ string, _ []byte) {
				wantLink(t, path, "out")
				wantFile(t, filepath.Join(dir, "out"), 0, "old\n")
			},
		},
		{
			name: "dangling symlink is refused and nothing is created",
			node: node{make: symlink("missing", nil)},
			opts: Options{Force: true},
			err:  "DIR/link is a symbolic link to missing, which does not exist",
			after: func(t *testing.T, dir, path, _ string, _ []byte) {
				wantLink(t, path, "missing")
				wantEntries(t, dir, "link")
			},
		},
		{
			name: "symlink to a FIFO",
			node: node{
				make: symlink("fifo", fifo("fifo")),
				read: readFIFO,
			},
			after: func(t *testing.T, dir, path, _ string, read []byte) {
				wantLink(t, path, "fifo")
				wantType(t, filepath.Join(dir, "fifo"), fs.ModeNamedPipe)
				if string(read) != data {
					t.Errorf("the FIFO's reader read %q, want %q", read, data)
				}
			},
		},
		{
			name: "symlink to a character device",
			node: node{make: symlink("null", device("null", unix.S_IFCHR, 1, 3))},
			after: func(t *testing.T, dir, path, _ string, _ []byte) {
				wantLink(t, path, "null")
				wantType(t, filepath.Join(dir, "null"), fs.ModeDevice|fs.ModeCharDevice)
				wantEntries(t, dir, "link", "null")
			},
		},
		{
			name: "- is standard output",
			node: node{make: func(t *testing.T, dir string) string { return "-" }},
			after: func(t *testing.T, dir, _, stdout string, _ []byte) {
				if stdout != data {
					t.Errorf("stdout = %q, want %q", stdout, data)
				}
				wantEntries(t, dir)
			},
		},
		{
			name: "/dev/stdout is standard output",
			node: node{make: func(t *testing.T, dir string) string { return "/dev/stdout" }},
			after: func(t *testing.T, dir, _, stdout string, _ []byte) {
				if stdout != data {
					t.Errorf("stdout = %q, want %q", stdout, data)
				}
			},
		},
		{
			name: "empty path",
			node: node{make: func(t *testing.T, dir string) string { return "" }},
			err:  "no file name given",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := tc.node.make(t, dir)
			var stdout bytes.Buffer
			opts := tc.opts
			opts.Stdout = &stdout
			// Check, before any work, agrees with Write about what is refused.
			checkErr := Check(path, opts)
			var read <-chan []byte
			if tc.node.read != nil {
				read = tc.node.read(path)
			}
			err := Write(path, []byte(data), opts)
			var got []byte
			if read != nil {
				if err != nil {
					// Unblock the reader.
					if f, oerr := os.OpenFile(path, os.O_WRONLY, 0); oerr == nil {
						f.Close()
					}
				}
				got = <-read
			}
			want := strings.ReplaceAll(tc.err, "DIR", dir)
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("Write(%s): %v", path, err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), want)):
				t.Fatalf("Write(%s) error %v, want one containing %q", path, err, want)
			}
			if (checkErr == nil) != (err == nil) {
				t.Errorf("Check(%s) = %v, but Write = %v", path, checkErr, err)
			}
			var ee *ExistsError
			if errors.As(err, &ee) != tc.exist || (tc.exist && !errors.Is(err, fs.ErrExist)) {
				t.Errorf("error %v: want an ExistsError: %t", err, tc.exist)
			}
			if err != nil && len(err.Error()) > 300 {
				t.Errorf("error of %d characters: %v", len(err.Error()), err)
			}
			// No temporary file is left behind, whatever happened.
			filepath.WalkDir(dir, func(p string, d fs.DirEntry, _ error) error {
				if strings.HasPrefix(d.Name(), ".") && p != dir {
					t.Errorf("left behind: %s", p)
				}
				return nil
			})
			if tc.after != nil {
				tc.after(t, dir, path, stdout.String(), got)
			}
		})
	}
}

// TestCheck: Check leaves nothing behind and its messages never name its
// probe file; an existing file needs Force.
func TestCheck(t *testing.T) {
	dir := t.TempDir()
	p := regularFile("old\n")(t, dir)
	if err := Check(p, Options{}); !errors.Is(err, fs.ErrExist) {
		t.Errorf("Check of an existing file without Force = %v, want ErrExist", err)
	}
	if err := Check(p, Options{Force: true}); err != nil {
		t.Errorf("Check with Force: %v", err)
	}
	if err := Check(filepath.Join(dir, "new"), Options{}); err != nil {
		t.Errorf("Check of a new path: %v", err)
	}
	if err := Check(filepath.Join(dir, "a", "b"), Options{MakeDirs: true}); err != nil {
		t.Errorf("Check of a new path in new directories: %v", err)
	}
	if err := Check("-", Options{}); err == nil || !strings.Contains(err.Error(), "standard output") {
		t.Errorf("Check of - without Stdout = %v", err)
	}
	wantEntries(t, dir, "out")
	wantFile(t, p, 0, "old\n")
	// A file in place of a directory.
	if err := Check(filepath.Join(p, "x"), Options{MakeDirs: true}); err == nil || strings.Contains(err.Error(), "stormbench-check") {
		t.Errorf("Check under a file = %v", err)
	}
}

func wantType(t *testing.T, path string, typ fs.FileMode) {
	t.Helper()
	st, err := os.Lstat(path)
	if err != nil {
		t.Fatalf("after the write: %v", err)
	}
	if got := st.Mode().Type(); got != typ {
		t.Errorf("%s is now %v, want %v", path, got, typ)
	}
}

func wantFile(t *testing.T, path string, _ fs.FileMode, content string) {
	t.Helper()
	wantType(t, path, 0)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != content {
		t.Errorf("%s holds %q, want %q", path, b, content)
	}
}

func wantLink(t *testing.T, path, dest string) {
	t.Helper()
	wantType(t, path, fs.ModeSymlink)
	if got, _ := os.Readlink(path); got != dest {
		t.Errorf("%s links to %q, want %q", path, got, dest)
	}
}

func wantMissing(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s exists (%v), want it missing", path, err)
	}
}

func wantEntries(t *testing.T, dir string, names ...string) {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range es {
		got = append(got, e.Name())
	}
	if strings.Join(got, ",") != strings.Join(names, ",") {
		t.Errorf("%s holds %v, want %v", dir, got, names)
	}
}

// TestCheckDir: a directory, a new one under an existing one, and a file in
// the way.
func TestCheckDir(t *testing.T) {
	dir := t.TempDir()
	file := regularFile("x")(t, dir)
	for _, tc := range []struct {
		dir, err string
	}{
		{dir, ""},
		{filepath.Join(dir, "a", "b"), ""},
		{file, "DIR/out is not a directory"},
		{filepath.Join(file, "a"), "cannot create DIR/out/a: DIR/out is not a directory"},
	} {
		err := CheckDir(tc.dir)
		want := strings.ReplaceAll(tc.err, "DIR", dir)
		if (err == nil) != (tc.err == "") || (err != nil && err.Error() != want) {
			t.Errorf("CheckDir(%s) = %v, want %q", tc.dir, err, want)
		}
	}
	wantEntries(t, dir, "out")
}
