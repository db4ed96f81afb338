package main

import (
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/stormbench/stormbench/bench/testutil"
)

// commandPaths lists every command and subcommand of stormbench, as its
// words after "stormbench" (cobra's own help and __complete left out).
func commandPaths() [][]string {
	var paths [][]string
	walk(newRootCmd(&cmdEnv{stdout: io.Discard, stderr: io.Discard}), func(c *cobra.Command) {
		if c.HasParent() && c.IsAvailableCommand() {
			paths = append(paths, strings.Fields(strings.TrimPrefix(c.CommandPath(), "stormbench ")))
		}
	})
	return paths
}

// TestHelpGolden keeps every command's and subcommand's --help, and
// stormbench's own, in testdata/help/ (run.golden, cluster_up.golden): a
// change to a flag, a default or an example shows in review (go test
// -update rewrites them). The cache directory is fixed so that --workdir's
// default does not depend on the machine.
func TestHelpGolden(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", "/home/user/.cache")
	t.Setenv("HOME", "/home/user")
	for _, p := range append(commandPaths(), nil) {
		name := strings.Join(p, "_")
		if name == "" {
			name = "stormbench"
		}
		code, stdout, stderr := runCLI(t, append(p, "--help")...)
		if code != exitOK {
			t.Errorf("%s --help: exit %d: %s", name, code, stderr)
			continue
		}
		testutil.Golden(t, "help/"+name+".golden", []byte(stdout))
	}
}

// outputFlag finds the -o/--output line of a --help text.
var outputFlag = regexp.MustCompile(`(?m)^\s+-o, --output string\s+(.*)$`)

// TestOutputContract walks every command's and subcommand's --help. Each
// exits 0 with its usage. Where a command has -o, -o names a format: an
// unknown one exits 2 before any work (and before any cluster is looked
// for); where the command prints data, its help offers text, json and yaml,
// json output parses as JSON and yaml as YAML. A command with -o that this
// test cannot run without a cluster must be listed in needsCluster, so that
// a new one is not missed.
func TestOutputContract(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	a, b := writeShardFixtures(t, dir)
	quick := "../../results/baselines/quick.json"
	// Arguments that run each command here, without a cluster; the code
	// expected with them.
	runnable := map[string]struct {
		args []string
		code int
	}{
		"version":           {nil, exitOK},
		"profiles list":     {nil, exitOK},
		"profiles show":     {[]string{"quick"}, exitOK},
		"profiles validate": {[]string{"../../profiles/quick.yaml"}, exitOK},
		"compare":           {[]string{quick}, exitOK},
		"compare/list":      {[]string{"--list-metrics"}, exitOK},
		"gate":              {[]string{"--current", quick}, -1}, // 0 or 1: the verdict is not this test's
		"merge":             {[]string{"--output-file", filepath.Join(dir, "merged-FORMAT.json"), a, b}, exitOK},
		"run":               {[]string{"--profile", "quick", "--dry-run"}, exitOK},
		"sweep":             {[]string{"--profile", "quick", "--dry-run", "--wave-sizes", "5,10"}, exitOK},
		"cluster status":    {[]string{"--name", "nosuch", "--workdir", dir, "--bin-dir", dir}, exitFailed},
		"calibrate combine": {nil, -2}, // needs two calibrations: only the unknown format
		"calibrate":         {nil, -2},
		"calibrate rejudge": {nil, -2},
		"calibrate pool":    {nil, -2},
		"cleanup":           {[]string{"--list", "--workdir", dir, "--bin-dir", dir}, -2},
		"preflight":         {[]string{"--workdir", dir, "--bin-dir", dir}, -2},
		"report":            {[]string{quick}, -2}, // html|markdown, tested in report_cmd_test.go
		"export":            {[]string{quick}, -2}, // benchfmt
		"fleet snapshot":    {nil, -2},
		"fleet up":          {nil, -2},
		"fleet down":        {nil, -2},
		"cluster up":        {nil, -2},
		"cluster down":      {nil, -2},
		"completion":        {nil, -2},
	}
	notData := map[string]bool{"report": true, "export": true}
	paths := commandPaths()
	paths = append(paths, []string{"compare/list"})
	withOutput := 0
	for _, p := range paths {
		name := strings.Join(p, " ")
		cmdArgs := p
		if name == "compare/list" {
			cmdArgs = []string{"compare"}
		}
		t.Run(name, func(t *testing.T) {
			code, help, stderr := runCLI(t, append(slices.Clone(cmdArgs), "--help")...)
			if code != exitOK || !strings.Contains(help, "Usage:\n  stormbench "+strings.Join(cmdArgs, " ")) {
				t.Fatalf("--help: exit %d, stdout %q, stderr %q", code, help, stderr)
			}
			m := outputFlag.FindStringSubmatch(help)
			if m == nil {
				return
			}
			withOutput++
			r, ok := runnable[name]
			if !ok {
				t.Fatalf("%s has -o: add it to this test's table", name)
			}
			if !notData[name] && (!strings.Contains(m[1], "json") || !strings.Contains(m[1], "yaml")) {
				t.Errorf("-o of %s offers %q, want text, json and yaml", name, m[1])
			}
			args := func(format string) []string {
				out := append(slices.Clone(cmdArgs), "-o", format)
				for _, a := range r.args {
					out = append(out, strings.ReplaceAll(a, "FORMAT", format))
				}
				return out
			}
			code, stdout, stderr := runCLI(t, args("nosuch")...)
			if code != exitUsage || !strings.Contains(stderr, `"nosuch"`) {
				t.Errorf("-o nosuch: exit %d, stderr %q; want %d naming the format", code, stderr, exitUsage)
			}
			if stdout != "" {
				t.Errorf("-o nosuch printed %q", stdout)
			}
			if r.code == -2 {
				return
			}
			for _, format := range []string{"json", "yaml"} {
				code, stdout, stderr := runCLI(t, args(format)...)
				if r.code >= 0 && code != r.code || r.code == -1 && code > exitGateFail {
					t.Errorf("-o %s: exit %d, want %d: %s", format, code, r.code, stderr)
				}
				var v any
				var err error
				if format == "json" {
					err = json.Unmarshal([]byte(stdout), &v)
				} else {
					err = yaml.Unmarshal([]byte(stdout), &v)
					if err == nil && json.Valid([]byte(stdout)) && strings.HasPrefix(strings.TrimSpace(stdout), "{") {
						err = errors.New("-o yaml printed JSON")
					}
				}
				if err != nil || v == nil {
					t.Errorf("-o %s: stdout does not parse (%v):\n%.400s", format, err, stdout)
				}
			}
		})
	}
	if withOutput < 12 {
		t.Errorf("only %d commands with -o found: the walk is broken", withOutput)
	}
}
