package main

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/stormbench/stormbench/bench/cluster"
)

// TestDryRunChecks: --dry-run checks everything the run would check before
// it touches a cluster, prints every problem at once (exit 2) and writes
// nothing; a clean plan prints when the storm starts.
func TestDryRunChecks(t *testing.T) {
	dir := t.TempDir()
	bins := fakeBinDir(t, cluster.AllBinaries()...)
	empty := t.TempDir()
	out := filepath.Join(dir, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	existing := writeFile(t, filepath.Join(out, "existing.json"), "keep me", 0o644)
	kubeconfig := writeFile(t, filepath.Join(dir, "one.kubeconfig"), oneContextKubeconfig, 0o600)
	before := listTree(t, dir)
	base := []string{"run", "--profile", "quick", "--dry-run", "--run-id", "dry", "--output-dir", out}
	tests := []struct {
		name string
		args []string
		code int
		want []string // in stderr
	}{
		{"embedded cluster", []string{"--bin-dir", bins}, exitOK, []string{"Start: as soon as the fleet is provisioned", "Result: " + filepath.Join(out, "dry.json")}},
		{"existing cluster", []string{"--kubeconfig", kubeconfig, "--context", "ctx"}, exitOK, []string{"Plan: 50 nodes"}},
		{"shared start", []string{"--bin-dir", bins, "--shard", "1/2", "--start-at", "2099-01-01T00:00:00Z"}, exitOK, []string{"Start: 2099-01-01T00:00:00Z (in "}},
		{"start in the past", []string{"--bin-dir", bins, "--start-at", "2020-01-01T00:00:00Z"}, exitUsage, []string{"--start-at 2020-01-01T00:00:00Z is in the past"}},
		{"start unparsable", []string{"--bin-dir", bins, "--start-at", "tomorrow"}, exitUsage, []string{`--start-at: "tomorrow" is not a time in RFC 3339`}},
		{"missing binaries", []string{"--bin-dir", empty}, exitUsage, []string{"the embedded cluster needs the component binaries"}},
		{"missing kubeconfig", []string{"--kubeconfig", filepath.Join(dir, "nope"), "--context", "ctx"}, exitUsage, []string{"no such file"}},
		{"unknown context", []string{"--kubeconfig", kubeconfig, "--context", "other"}, exitUsage, []string{`context "other" not found`}},
		{"no context", []string{"--kubeconfig", kubeconfig}, exitUsage, []string{"--context is required"}},
		{"result exists", []string{"--bin-dir", bins, "--result", existing}, exitUsage, []string{"--result " + existing + " exists; use --force"}},
		{"result exists, --force", []string{"--bin-dir", bins, "--result", existing, "--force"}, exitOK, nil},
		{"result is a directory", []string{"--bin-dir", bins, "--result", out}, exitUsage, []string{"is a directory"}},
		{"result under a file", []string{"--bin-dir", bins, "--result", filepath.Join(existing, "r.json")}, exitUsage, []string{existing + " is not a directory"}},
		{"result in a new directory", []string{"--bin-dir", bins, "--result", filepath.Join(out, "new", "r.json")}, exitOK, nil},
		{"output-dir under a file", []string{"--bin-dir", bins, "--output-dir", existing}, exitUsage, []string{"is not a directory"}},
		{"cpuprofile in a missing directory", []string{"--bin-dir", bins, "--cpuprofile", filepath.Join(dir, "nodir", "cpu.pprof")}, exitUsage, []string{"--cpuprofile", "does not exist"}},
		{"memprofile is a directory", []string{"--bin-dir", bins, "--memprofile", out}, exitUsage, []string{"--memprofile: " + out + " is a directory"}},
		{"more shards than nodes", []string{"--bin-dir", bins, "--shard", "3/51"}, exitUsage, []string{"51 shards of a fleet of 50 nodes"}},
		{"every problem at once", []string{"--bin-dir", empty, "--start-at", "2020-01-01T00:00:00Z", "--result", existing, "--cpuprofile", filepath.Join(dir, "nodir", "cpu.pprof"), "-o", "xml"},
			exitUsage, []string{"5 problems:", "is in the past", "component binaries", "exists; use --force", "--cpuprofile", "xml"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, append(append([]string{}, base...), tt.args...)...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tt.code, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
		})
	}
	if after := listTree(t, dir); !slices.Equal(before, after) {
		t.Errorf("--dry-run left files behind:\nbefore %q\nafter  %q", before, after)
	}
	if b, err := os.ReadFile(existing); err != nil || string(b) != "keep me" {
		t.Errorf("%s changed: %q, %v", existing, b, err)
	}
}

// TestDryRunAgreesWithRun: run --dry-run refuses exactly the outputs the
// run refuses, with the run's own message (one check owns each), before
// anything starts: a link to nothing, a block device, a socket, "-", and
// an existing profile file without --force. Devices, sockets and links
// are made in the test's own directory only.
func TestDryRunAgreesWithRun(t *testing.T) {
	dir := t.TempDir()
	bins := fakeBinDir(t, cluster.AllBinaries()...)
	dangling := filepath.Join(dir, "dangling.json")
	if err := os.Symlink(filepath.Join(dir, "nowhere"), dangling); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "s.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	existing := filepath.Join(dir, "cpu.pprof")
	if err := os.WriteFile(existing, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"dangling link", []string{"--result", dangling}, "--result: " + dangling + " is a symbolic link to " + filepath.Join(dir, "nowhere") + ", which does not exist"},
		{"socket", []string{"--result", sock}, "--result: " + sock + " is a socket"},
		{"standard output", []string{"--result", "-"}, "--result: - (standard output) cannot take this output"},
		{"existing cpuprofile", []string{"--cpuprofile", existing}, "--cpuprofile: " + existing + " exists: pass --force"},
		{"memprofile under a file", []string{"--memprofile", filepath.Join(existing, "mem.pprof")}, existing + " is not a directory"},
	}
	blk := filepath.Join(dir, "blk")
	switch err := unix.Mknod(blk, unix.S_IFBLK|0o600, int(unix.Mkdev(7, 0))); {
	case err == nil:
		tests = append(tests, struct {
			name string
			args []string
			want string
		}{"block device", []string{"--result", blk}, "--result: " + blk + " is a block device"})
	case errors.Is(err, unix.EPERM):
		t.Log("no block device: mknod not permitted")
	default:
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"run", "--profile", "quick", "--run-id", "agree", "--bin-dir", bins, "--workdir", dir, "--output-dir", dir}, tt.args...)
			dryCode, _, dryErr := runCLI(t, append(args, "--dry-run")...)
			code, stdout, stderr := runCLI(t, args...)
			if dryCode != exitUsage || !strings.Contains(dryErr, tt.want) {
				t.Errorf("--dry-run: exit %d, stderr %q; want %d and %q", dryCode, dryErr, exitUsage, tt.want)
			}
			if code != exitUsage || stderr != dryErr || stdout != "" {
				t.Errorf("run: exit %d, stderr %q; want %d and --dry-run's %q", code, stderr, exitUsage, dryErr)
			}
		})
	}
	if b, err := os.ReadFile(existing); err != nil || string(b) != "keep me" {
		t.Errorf("%s changed: %q, %v", existing, b, err)
	}
}

// TestDryRunUnwritable: a directory the user cannot write is a problem.
func TestDryRunUnwritable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes any directory on a writable file system")
	}
	ro := filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "run", "--profile", "quick", "--dry-run", "--run-id", "dry", "--bin-dir", fakeBinDir(t, cluster.AllBinaries()...), "--output-dir", ro)
	if code != exitUsage || !strings.Contains(stderr, "permission denied") {
		t.Errorf("exit %d, stderr %q; want 2 and permission denied", code, stderr)
	}
}

// listTree lists every path under dir.
func listTree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	if err := filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		out = append(out, p)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return out
}
