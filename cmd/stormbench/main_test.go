package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stormbench/stormbench/bench/cluster/clustertest"
)

// sharedCluster is the embedded cluster of the integration tests that
// drive a stormbench process against a cluster of their own and leave it
// as they found it (TestInterruptMidStorm, TestShardedRunMatchesUnsharded).
var sharedCluster = &clustertest.Shared{Name: "stormbench"}

// The stormbench binary the integration tests run, built once per test
// process: static and -trimpath, as the image of TestKubernetesJobOnRealNodes
// needs it.
var (
	cliOnce sync.Once
	cliDir  string
	cliPath string
	cliErr  error
)

// stormbenchBinary builds this package's binary on first use and returns its
// path; the test fails when it does not build.
func stormbenchBinary(t *testing.T) string {
	t.Helper()
	cliOnce.Do(func() {
		if cliDir, cliErr = os.MkdirTemp("", "sbcli-"); cliErr != nil {
			return
		}
		cliPath = filepath.Join(cliDir, "stormbench")
		build := exec.Command("go", "build", "-trimpath", "-o", cliPath, ".")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			cliErr = fmt.Errorf("building stormbench: %v\n%s", err, out)
		}
	})
	if cliErr != nil {
		t.Fatal(cliErr)
	}
	return cliPath
}

func TestMain(m *testing.M) {
	// The test binary is stormbench itself for a shell that runs it
	// (TestBashCompletion).
	if os.Getenv("STORMBENCH_TEST_AS_CLI") == "1" {
		os.Exit(run(context.Background(), os.Stdout, os.Stderr, os.Args[1:]))
	}
	code := clustertest.Finish(m.Run())
	if cliDir != "" {
		_ = os.RemoveAll(cliDir)
	}
	os.Exit(code)
}
