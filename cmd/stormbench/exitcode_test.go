package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stormbench/stormbench/bench/cluster"
	"golang.org/x/sys/unix"
)

// TestBadInputExitCodes: bad input exits 2, whatever the command, before
// anything starts.
func TestBadInputExitCodes(t *testing.T) {
	dir := t.TempDir()
	malformed := writeFile(t, filepath.Join(dir, "malformed.kubeconfig"), "garbage", 0o600)
	empty := writeFile(t, filepath.Join(dir, "empty.kubeconfig"), "", 0o600)
	oneContext := writeFile(t, filepath.Join(dir, "one.kubeconfig"), oneContextKubeconfig, 0o600)
	// Committed results of two profiles: quick's gate A/B and the A/A
	// check (profile aa).
	quick, other := "../../results/baselines/quick.json", "../../results/aa/aa.json"
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"missing profile file", []string{"run", "--profile", filepath.Join(dir, "nope.yaml"), "--dry-run"}, "no such file"},
		{"directory as profile", []string{"run", "--profile", dir + "/", "--dry-run"}, "is a directory"},
		{"unknown built-in profile", []string{"run", "--profile", "nosuch", "--dry-run"}, `no built-in profile "nosuch"`},
		{"fleet with unknown profile", []string{"fleet", "up", "--profile", "nosuch"}, `no built-in profile "nosuch"`},
		{"malformed kubeconfig", []string{"preflight", "--kubeconfig", malformed, "--context", "x"}, "loading kubeconfig"},
		{"empty kubeconfig", []string{"preflight", "--kubeconfig", empty, "--context", "x"}, "kubeconfig"},
		{"unknown context", []string{"preflight", "--kubeconfig", oneContext, "--context", "other"}, `context "other" not found`},
		{"missing kubeconfig", []string{"preflight", "--kubeconfig", filepath.Join(dir, "nope"), "--context", "x"}, "no such file"},
		{"negative cluster up --wait", []string{"cluster", "up", "--name", "nosuch", "--workdir", dir, "--wait", "-1s"}, "--wait -1s"},
		{"cluster up --wait without a unit", []string{"cluster", "up", "--name", "nosuch", "--workdir", dir, "--wait", "5"}, `must be a duration like "30s"`},
		{"bad shard", []string{"run", "--shard", "1/2x", "--dry-run"}, "--shard"},
		{"unwritable report", []string{"report", quick, "--output-file", filepath.Join(dir, "nodir", "r.html")}, "does not exist"},
		{"unwritable junit", []string{"gate", "--current", quick, "--junit", filepath.Join(dir, "nodir", "j.xml")}, "--junit"},
		{"perfdash on a file", []string{"gate", "--current", quick, "--perfdash", malformed}, "not a directory"},
		{"profiles validate, one invalid", []string{"profiles", "validate", "../../profiles/quick.yaml", malformed}, "1 of 2 profiles invalid"},
		{"compare across profiles", []string{"compare", quick, other}, "not comparable"},
		{"gate against another profile", []string{"gate", "--current", quick, "--baseline", other, "--max-regression", "10%"}, "--allow-mismatch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, tc.args...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, exitUsage, tc.want)
			}
		})
	}
}

// TestReadOnlyWithoutBinaries: cluster status, cleanup --list and preflight
// only read, and work without the control-plane binaries (an empty
// --bin-dir); cluster status of a cluster that does not run says "not
// running" and exits 3, in every format.
func TestReadOnlyWithoutBinaries(t *testing.T) {
	dir, noBin := t.TempDir(), t.TempDir()
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"cluster status", []string{"cluster", "status", "--name", "nosuch"}, exitFailed,
			`Embedded cluster "nosuch" is not running (work directory DIR; existing clusters: none)`, `embedded cluster "nosuch" is not running`},
		{"cluster status -o json", []string{"cluster", "status", "--name", "nosuch", "-o", "json"}, exitFailed, `"running": false`, "not running"},
		{"cluster status -o yaml", []string{"cluster", "status", "--name", "nosuch", "-o", "yaml"}, exitFailed, "running: false", "not running"},
		{"cleanup --list", []string{"cleanup", "--list"}, exitUsage, "", `the embedded cluster "stormbench" is not running`},
		{"preflight", []string{"preflight"}, exitUsage, "", `the embedded cluster "stormbench" is not running`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, append(tc.args, "--workdir", dir, "--bin-dir", noBin)...)
			if code != tc.code || !strings.Contains(stdout, strings.ReplaceAll(tc.stdout, "DIR", dir)) || !strings.Contains(stderr, tc.stderr) {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d, %q, %q", code, stdout, stderr, tc.code, tc.stdout, tc.stderr)
			}
			if strings.Contains(stderr, "components are missing") || strings.Contains(stderr, "confirm") {
				t.Errorf("a read-only command asked for binaries or a confirmation: %s", stderr)
			}
		})
	}
}

// TestDidYouMean: a typo of a command or flag gets the nearest name; a
// word far from every name gets none.
func TestDidYouMean(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"cmopare"}, `unknown command "cmopare" for "stormbench" (did you mean "compare"?)`},
		{[]string{"rnu"}, `(did you mean "run"?)`},
		{[]string{"cluster", "stauts"}, `unknown command "stauts" for "stormbench cluster" (did you mean "status"?)`},
		{[]string{"fleet", "snapshot"}, `stormbench fleet snapshot needs a command: one of restore, save`},
		{[]string{"profiles", "list", "--ouput", "json"}, `unknown flag: --ouput (did you mean "--output"?)`},
		{[]string{"xyzzy"}, `unknown command "xyzzy" for "stormbench"` + "\n"},
	} {
		code, _, stderr := runCLI(t, tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", tc.args, code, stderr, exitUsage, tc.want)
		}
	}
	if code, stdout, _ := runCLI(t, "--version"); code != exitOK || !strings.HasPrefix(stdout, "stormbench ") {
		t.Errorf("--version: exit %d, %q", code, stdout)
	}
	for _, args := range [][]string{{"help", "nosuch"}, {"help", "cluster", "nosuch"}} {
		if code, stdout, stderr := runCLI(t, args...); code != exitUsage || stdout != "" || !strings.Contains(stderr, "no such command") {
			t.Errorf("%q: exit %d, stdout %.80q, stderr %q; want %d", args, code, stdout, stderr, exitUsage)
		}
	}
	if code, stdout, _ := runCLI(t, "help", "cluster", "up"); code != exitOK || !strings.Contains(stdout, "stormbench cluster up [flags]") {
		t.Errorf("help cluster up: exit %d, %q", code, stdout)
	}
	if code, stdout, _ := runCLI(t, "help", "merge"); code != exitOK || !strings.Contains(stdout, "Usage:\n  stormbench merge --output-file") {
		t.Errorf("help merge: exit %d, %q", code, stdout)
	}
}

func TestEmbeddedName(t *testing.T) {
	for path, want := range map[string]string{
		"/root/.cache/stormbench/stormbench.kubeconfig":  "stormbench",
		"/root/.cache/stormbench/big.harness.kubeconfig": "big",
		"/w/sb-cal-1.kube-controller-manager.kubeconfig": "sb-cal-1",
		"/w/ci.kwok-controller.kubeconfig":               "ci",
		"/w/team.kubeconfig.d/../my-cluster.kubeconfig":  "my-cluster",
	} {
		if got := embeddedName(path); got != want {
			t.Errorf("embeddedName(%q) = %q, want %q", path, got, want)
		}
	}
}

// TestHelpBools: bool flags read as --yes in every command's help.
func TestHelpBools(t *testing.T) {
	for _, p := range commandPaths() {
		_, stdout, _ := runCLI(t, append(p, "--help")...)
		if strings.Contains(stdout, "[=true|false]") || !strings.Contains(stdout, "--quiet  ") {
			t.Errorf("%s --help writes a bool flag as --flag[=true|false]:\n%s", p, stdout)
		}
	}
}

// TestDeprecatedRunFlag: --run, the spelling fleet and cleanup had before
// --run-id, still parses and says it is deprecated.
func TestDeprecatedRunFlag(t *testing.T) {
	_, _, stderr := runCLI(t, "cleanup", "--run", "old-run", "--all", "--workdir", t.TempDir())
	if !strings.Contains(stderr, "--run has been deprecated, use --run-id") {
		t.Errorf("stderr %q lacks the deprecation note", stderr)
	}
	if !strings.Contains(stderr, "give exactly one of --run-id ID, --all and --list") {
		t.Errorf("--run did not set the run id: %q", stderr)
	}
}

// TestDryRunPlan: --dry-run prints the storm's plan, per variant and per
// wave size of a sweep, with a shard's share.
func TestDryRunPlan(t *testing.T) {
	bins := fakeBinDir(t, cluster.AllBinaries()...)
	code, _, stderr := runCLI(t, "run", "--profile", "quick", "--dry-run", "--run-id", "plan", "--bin-dir", bins)
	if code != exitOK || !strings.Contains(stderr, "legacy                   10 of 50 candidate nodes in 2 wave(s) of 5 every 5s") {
		t.Errorf("run --dry-run: exit %d, stderr:\n%s", code, stderr)
	}
	code, _, stderr = runCLI(t, "sweep", "--profile", "quick", "--wave-sizes", "5,20", "--dry-run", "--shard", "1/2", "--run-id", "plan", "--bin-dir", bins)
	for _, want := range []string{"legacy/wave=5            5 of 50 candidate nodes in 1 wave(s) of 5 at once", "legacy/wave=20", "shard 1/2 restarts 10"} {
		if code != exitOK || !strings.Contains(stderr, want) {
			t.Errorf("sweep --dry-run: exit %d, stderr lacks %q:\n%s", code, want, stderr)
		}
	}
}

// TestGlobalFlags: -v and -q are taken wherever they stand among the
// flags, before or after the command (not after a "--"), and a bad level is
// bad usage.
func TestGlobalFlags(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"-v", "6", "profiles", "list", "-q"}, exitOK, ""},
		{[]string{"profiles", "list", "--v=4", "--quiet"}, exitOK, ""},
		{[]string{"profiles", "show", "-q", "--", "-v"}, exitUsage, `"-v"`},
		{[]string{"version", "-v"}, exitUsage, "flag needs an argument: 'v' in -v"},
		{[]string{"version", "-v=11"}, exitUsage, "-v 11: the verbosity level is a number from 0 to 10"},
	} {
		code, _, stderr := runCLI(t, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.stderr) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", tc.args, code, stderr, tc.code, tc.stderr)
		}
	}
	// Quiet: no warning on stderr, the error still, wherever -q stands.
	for _, args := range [][]string{{"-q", "cleanup", "--run", "x"}, {"cleanup", "--run", "x", "-q"}} {
		_, _, stderr := runCLI(t, append(args, "--all", "--workdir", t.TempDir())...)
		if strings.Contains(stderr, "deprecated") || !strings.Contains(stderr, "give exactly one of") {
			t.Errorf("%q: quiet stderr %q", args, stderr)
		}
	}
}

// TestHelpExamples: every command's help shows examples.
func TestHelpExamples(t *testing.T) {
	for _, p := range commandPaths() {
		if len(p) > 1 {
			continue
		}
		_, stdout, _ := runCLI(t, p[0], "--help")
		if !strings.Contains(stdout, "Examples:") {
			t.Errorf("%s --help has no examples", p[0])
		}
	}
}

// TestIsTTY: a character device that is not a terminal (a null device made
// here, as /dev/null is given as stdin in CI) is not a terminal: nothing
// asks it for a confirmation.
func TestIsTTY(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("creating a device node needs root")
	}
	p := filepath.Join(t.TempDir(), "null")
	if err := unix.Mknod(p, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if isTTY(f) {
		t.Error("a null device counts as a terminal")
	}
}

// TestInterruptNote: only a command with a run (run, sweep, fleet) says it
// brings nodes back on Ctrl-C; a read-only command says it stops.
func TestInterruptNote(t *testing.T) {
	if got := interruptNote(""); strings.Contains(got, "bringing nodes back") || !strings.Contains(got, "stopping") {
		t.Errorf("without a run: %q", got)
	}
	if got := interruptNote("quick-1"); !strings.Contains(got, "bringing nodes back and cleaning up") {
		t.Errorf("with a run: %q", got)
	}
}

// TestClusterUpExisting: cluster up on a cluster that exists is bad input
// (exit 2), found before anything starts, and names what to do instead.
func TestClusterUpExisting(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "clusters", "busy"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "clusters", "busy", "kwok.yaml"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "cluster", "up", "--name", "busy", "--workdir", dir, "--bin-dir", fakeBinDir(t, cluster.AllBinaries()...))
	if code != exitUsage || !strings.Contains(stderr, `embedded cluster "busy" already exists`) || !strings.Contains(stderr, "cluster down --name busy") || strings.Contains(stderr, "Starting") {
		t.Errorf("exit %d, stderr %q; want %d naming cluster status and down", code, stderr, exitUsage)
	}
}
