package main

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestOutputFiles writes every output flag that runs without a cluster
// (report --output-file, gate --junit, merge --output-file, export
// --output-file) to every kind of target, made in a temporary directory:
// a FIFO is written into and stays a FIFO, a character device stays a
// device, a link stays a link, an existing file needs --force, a directory
// and a dangling link are refused with exit 2.
func TestOutputFiles(t *testing.T) {
	quick := "../../results/baselines/quick.json"
	shardDir := t.TempDir()
	a, b := writeShardFixtures(t, shardDir)
	outputs := []struct {
		name string
		args func(path string) []string
		// want is a part of what the output holds.
		want string
	}{
		{"report --output-file", func(p string) []string { return []string{"report", quick, "-o", "markdown", "--output-file", p} }, "## stormbench report"},
		{"gate --junit", func(p string) []string { return []string{"gate", "--current", quick, "--junit", p} }, "<testsuite"},
		{"merge --output-file", func(p string) []string { return []string{"merge", "--output-file", p, a, b} }, `"schemaVersion"`},
		{"export --output-file", func(p string) []string { return []string{"export", "--output-file", p, quick} }, "Benchmark"},
	}
	type target struct {
		name string
		// make creates the target in dir and returns the path to give.
		make  func(t *testing.T, dir string) string
		force bool
		// code is the exit code wanted (gate may also exit 1: its verdict).
		code int
		// check looks at dir afterwards; got is what a FIFO's reader read.
		check func(t *testing.T, dir, stdout, got, want string)
		fifo  bool
	}
	mkfifo := func(t *testing.T, p string) {
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	mknull := func(t *testing.T, p string) {
		if os.Geteuid() != 0 {
			t.Skip("creating a device node needs root")
		}
		if err := unix.Mknod(p, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
			t.Fatal(err)
		}
	}
	regular := func(t *testing.T, p string) {
		if err := os.WriteFile(p, []byte("keep me"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	symlink := func(t *testing.T, dest, p string) {
		if err := os.Symlink(dest, p); err != nil {
			t.Fatal(err)
		}
	}
	content := func(t *testing.T, p, want string) {
		t.Helper()
		nodeType(t, p, 0)
		b, _ := os.ReadFile(p)
		if !strings.Contains(string(b), want) {
			t.Errorf("%s holds %.200q, want %q in it", p, b, want)
		}
	}
	targets := []target{
		{name: "new file", make: func(t *testing.T, d string) string { return filepath.Join(d, "out") },
			check: func(t *testing.T, d, _, _, want string) { content(t, filepath.Join(d, "out"), want) }},
		{name: "existing file without --force", make: func(t *testing.T, d string) string {
			regular(t, filepath.Join(d, "out"))
			return filepath.Join(d, "out")
		},
			code: exitUsage, check: func(t *testing.T, d, _, _, _ string) { content(t, filepath.Join(d, "out"), "keep me") }},
		{name: "existing file with --force", force: true, make: func(t *testing.T, d string) string {
			regular(t, filepath.Join(d, "out"))
			return filepath.Join(d, "out")
		},
			check: func(t *testing.T, d, _, _, want string) { content(t, filepath.Join(d, "out"), want) }},
		{name: "FIFO", fifo: true, make: func(t *testing.T, d string) string {
			mkfifo(t, filepath.Join(d, "fifo"))
			return filepath.Join(d, "fifo")
		},
			check: func(t *testing.T, d, _, got, want string) {
				nodeType(t, filepath.Join(d, "fifo"), fs.ModeNamedPipe)
				if !strings.Contains(got, want) {
					t.Errorf("the FIFO's reader read %.200q, want %q in it", got, want)
				}
			}},
		{name: "character device", make: func(t *testing.T, d string) string {
			mknull(t, filepath.Join(d, "null"))
			return filepath.Join(d, "null")
		},
			check: func(t *testing.T, d, _, _, _ string) {
				nodeType(t, filepath.Join(d, "null"), fs.ModeDevice|fs.ModeCharDevice)
			}},
		{name: "character device with --force", force: true, make: func(t *testing.T, d string) string {
			mknull(t, filepath.Join(d, "null"))
			return filepath.Join(d, "null")
		},
			check: func(t *testing.T, d, _, _, _ string) {
				nodeType(t, filepath.Join(d, "null"), fs.ModeDevice|fs.ModeCharDevice)
			}},
		{name: "symlink to a file with --force", force: true, make: func(t *testing.T, d string) string {
			regular(t, filepath.Join(d, "out"))
			symlink(t, "out", filepath.Join(d, "link"))
			return filepath.Join(d, "link")
		}, check: func(t *testing.T, d, _, _, want string) {
			nodeType(t, filepath.Join(d, "link"), fs.ModeSymlink)
			content(t, filepath.Join(d, "out"), want)
		}},
		{name: "symlink to a file without --force", make: func(t *testing.T, d string) string {
			regular(t, filepath.Join(d, "out"))
			symlink(t, "out", filepath.Join(d, "link"))
			return filepath.Join(d, "link")
		}, code: exitUsage, check: func(t *testing.T, d, _, _, _ string) {
			nodeType(t, filepath.Join(d, "link"), fs.ModeSymlink)
			content(t, filepath.Join(d, "out"), "keep me")
		}},
		{name: "dangling symlink", force: true, make: func(t *testing.T, d string) string {
			symlink(t, "missing", filepath.Join(d, "link"))
			return filepath.Join(d, "link")
		}, code: exitUsage, check: func(t *testing.T, d, _, _, _ string) {
			nodeType(t, filepath.Join(d, "link"), fs.ModeSymlink)
			if _, err := os.Lstat(filepath.Join(d, "missing")); err == nil {
				t.Error("the link's target was created")
			}
		}},
		{name: "directory", force: true, make: func(t *testing.T, d string) string { return d },
			code: exitUsage, check: func(t *testing.T, d, _, _, _ string) { nodeType(t, d, fs.ModeDir) }},
		{name: "-", make: func(t *testing.T, d string) string { return "-" },
			check: func(t *testing.T, d, stdout, _, want string) {
				if !strings.Contains(stdout, want) {
					t.Errorf("stdout %.200q lacks %q", stdout, want)
				}
			}},
	}
	for _, o := range outputs {
		for _, tg := range targets {
			t.Run(o.name+"/"+tg.name, func(t *testing.T) {
				dir := t.TempDir()
				path := tg.make(t, dir)
				var got chan string
				var held *os.File
				if tg.fifo {
					got = make(chan string, 1)
					go func() {
						f, err := os.Open(path)
						if err != nil {
							got <- err.Error()
							return
						}
						defer f.Close()
						b, _ := io.ReadAll(f)
						got <- string(b)
					}()
					// A write end held open until the command is done: the
					// reader is there before the command opens the FIFO
					// (gate opens its outputs without waiting for one),
					// and reads to the end whether the command wrote or not.
					var err error
					if held, err = os.OpenFile(path, os.O_WRONLY, 0); err != nil {
						t.Fatal(err)
					}
				}
				args := o.args(path)
				if tg.force {
					args = append(args, "--force")
				}
				code, stdout, stderr := runCLI(t, args...)
				read := ""
				if got != nil {
					held.Close()
					read = <-got
				}
				if code != tg.code && !(o.name == "gate --junit" && tg.code == exitOK && code == exitGateFail) {
					t.Errorf("%q: exit %d, want %d: %s", args, code, tg.code, stderr)
				}
				// A gate's verdict (exit 1) is a report, not a message.
				if code != exitOK && code != exitGateFail && len(stderr) > 500 {
					t.Errorf("a message of %d characters: %s", len(stderr), stderr)
				}
				tg.check(t, dir, stdout, read, o.want)
			})
		}
	}
}

func nodeType(t *testing.T, p string, want fs.FileMode) {
	t.Helper()
	st, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Mode().Type(); got != want {
		t.Errorf("%s is now %v, want %v", p, got, want)
	}
}

// TestSnapshotFileRefused: fleet snapshot save writes a regular file only:
// a FIFO, a device or an existing file without --force is refused (exit 2)
// before the cluster is looked at, and left as it is. (--force used to
// remove whatever --file named.)
func TestSnapshotFileRefused(t *testing.T) {
	bin := fakeBinDir(t, "kube-apiserver", "kube-controller-manager", "kube-scheduler", "etcd", "kwok", "kwokctl", "kubectl")
	dir := t.TempDir()
	fifo, null, existing := filepath.Join(dir, "fifo"), filepath.Join(dir, "null"), filepath.Join(dir, "existing")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(existing, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		file  string
		force bool
		want  string
		typ   fs.FileMode
	}{
		{fifo, true, "a snapshot is written to a regular file", fs.ModeNamedPipe},
		{existing, false, "exists: pass --force", 0},
		{"-", true, "standard output", 0},
	}
	if os.Geteuid() == 0 {
		if err := unix.Mknod(null, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, struct {
			file  string
			force bool
			want  string
			typ   fs.FileMode
		}{null, true, "a snapshot is written to a regular file", fs.ModeDevice | fs.ModeCharDevice})
	}
	for _, tc := range cases {
		args := []string{"fleet", "snapshot", "save", "--file", tc.file, "--workdir", dir, "--bin-dir", bin}
		if tc.force {
			args = append(args, "--force")
		}
		code, _, stderr := runCLI(t, args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want %d and %q", tc.file, code, stderr, exitUsage, tc.want)
		}
		if tc.file != "-" {
			nodeType(t, tc.file, tc.typ)
		}
	}
	if b, _ := os.ReadFile(existing); string(b) != "keep me" {
		t.Errorf("existing file now holds %q", b)
	}
}

// TestSnapshotFileBeforeBinaries: fleet snapshot save and restore read
// --file (where a save goes, what a restore holds) before they look for the
// component binaries, so bad input is named as such without them.
func TestSnapshotFileBeforeBinaries(t *testing.T) {
	dir, noBin := t.TempDir(), t.TempDir()
	garbage := filepath.Join(dir, "garbage.snap")
	if err := os.WriteFile(garbage, []byte("not a snapshot"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"restore", "--file", filepath.Join(dir, "missing.snap")}, "no such file"},
		{[]string{"restore", "--file", garbage}, "garbage.snap"},
		{[]string{"save", "--file", dir}, "--file"},
		{[]string{"save", "--file", filepath.Join(dir, "x.snap"), "--run-id", "Not/A/Label"}, "Not/A/Label"},
	} {
		args := append([]string{"fleet", "snapshot"}, append(tc.args, "--workdir", dir, "--bin-dir", noBin)...)
		code, _, stderr := runCLI(t, args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) || strings.Contains(stderr, "components are missing") {
			t.Errorf("%q: exit %d, stderr %q; want %d naming %q, not the binaries", tc.args, code, stderr, exitUsage, tc.want)
		}
	}
}
