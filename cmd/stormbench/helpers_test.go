package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stormbench/stormbench/bench/measure/apiserver"
	"github.com/stormbench/stormbench/bench/result"
)

// cliCase is a command line and what it must do: exit with code, and say
// want (in stdout, or in stderr for a failure; see runCLIWant).
type cliCase struct {
	name string
	args []string
	code int
	want string
}

// runCLIWant runs stormbench with args, fails the test unless it exits with
// code, and checks that what it says (stdout on success, stderr on failure)
// holds want. It returns both outputs.
func runCLIWant(t *testing.T, code int, want string, args ...string) (stdout, stderr string) {
	t.Helper()
	got, stdout, stderr := runCLI(t, args...)
	if got != code {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", got, code, stdout, stderr)
	}
	out := stdout
	if got != exitOK {
		out = stderr
	}
	if !strings.Contains(out, want) {
		t.Errorf("output lacks %q:\n%s", want, out)
	}
	return stdout, stderr
}

// editResult writes the result at src, changed by edit, to out and returns
// out.
func editResult(t *testing.T, src, out string, edit func(*result.Result)) string {
	t.Helper()
	r, err := result.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	edit(r)
	if err := result.WriteFile(out, r, result.WriteOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	return out
}

// scaleStormRequests multiplies a variant run's storm-window API requests
// by f.
func scaleStormRequests(v *result.VariantRun, f float64) {
	m := v.Measurement(apiserver.Name)
	for j := range m.Values {
		if x := &m.Values[j]; x.Name == apiserver.Requests && x.Window == result.WindowStorm && len(x.Labels) == 0 {
			x.Value *= f
		}
	}
}

// oneContextKubeconfig is a kubeconfig of one context, ctx, whose server
// answers nothing.
const oneContextKubeconfig = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: ctx, context: {cluster: c, user: u}}]
current-context: ctx
`

// writeFile writes data to path, failing the test when it cannot.
func writeFile(t *testing.T, path, data string, perm os.FileMode) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), perm); err != nil {
		t.Fatal(err)
	}
	return path
}

// runEmbedded runs profile prof as run runID, with args, on an embedded
// cluster in wd (taken down at the end); it fails the test unless the run
// succeeds, and returns its stdout, stderr and result.
func runEmbedded(t *testing.T, wd, prof, runID string, args ...string) (string, string, *result.Result) {
	t.Helper()
	path := filepath.Join(wd, runID+".json")
	t.Cleanup(func() { runCLI(t, "cluster", "down", "--name", "sb-"+runID, "--workdir", wd) })
	code, out, errOut := runCLI(t, append([]string{"run", "--workdir", wd, "--profile", prof, "--run-id", runID, "--result", path}, args...)...)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s%s", code, out, errOut)
	}
	t.Log(out)
	res, err := result.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return out, errOut, res
}
