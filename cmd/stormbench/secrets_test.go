package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stormbench/stormbench/bench/cluster/clustertest"
)

const tinyProfile = `apiVersion: stormbench.io/v1alpha1
kind: StormProfile
metadata: {name: tiny}
fleet: {nodes: 5, podsPerNode: 6}
storm:
  kind: kubelet
  select: {count: 2}
  downtime: {type: fixed, value: 2s}
  featureGates: {ChangeContainerStatusOnKubeletRestart: true}
measurements:
  apiserver: {baseline: 2s}
  endpointSlices: {}
  recovery: {}
`

// TestNoCredentialsInOutput runs stormbench end to end on an embedded
// cluster and greps its output and result for the cluster's private keys,
// client certificates and the service-account tokens' signing key.
func TestNoCredentialsInOutput(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	if os.Getenv("STORMBENCH_BIN_DIR") == "" {
		if _, err := os.Stat("../../bin/kwokctl"); err == nil {
			t.Setenv("STORMBENCH_BIN_DIR", "../../bin")
		}
	}
	// The CLI starts this cluster itself: none of the package's shared one
	// beside it.
	clustertest.StopShared()
	dir := t.TempDir()
	prof := filepath.Join(dir, "tiny.yaml")
	if err := os.WriteFile(prof, []byte(tinyProfile), 0o600); err != nil {
		t.Fatal(err)
	}
	res := filepath.Join(dir, "tiny.json")
	work := filepath.Join(dir, "w")
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	args := []string{"run", "--profile", prof, "--run-id", "tiny", "--result", res, "--workdir", work, "--keep-cluster", "-o", "json"}
	code := run(ctx, &stdout, &stderr, args)
	t.Cleanup(func() {
		var out, errb bytes.Buffer
		if c := run(context.Background(), &out, &errb, []string{"cluster", "down", "--name", "sb-tiny", "--workdir", work}); c != 0 {
			t.Errorf("cluster down: %s", errb.String())
		}
	})
	if code != exitOK {
		t.Fatalf("run exited %d:\n%s", code, stderr.String())
	}
	result, err := os.ReadFile(res)
	if err != nil {
		t.Fatal(err)
	}
	haystack := stdout.String() + stderr.String() + string(result)
	secrets := 0
	files, _ := filepath.Glob(filepath.Join(work, "clusters", "sb-tiny", "pki", "*"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		// Look for the PEM body and its base64 re-encoding (as in a
		// kubeconfig), by a distinctive slice of each.
		for _, line := range strings.Split(string(data), "\n") {
			if len(line) < 60 || strings.HasPrefix(line, "-----") {
				continue
			}
			secrets++
			if strings.Contains(haystack, line) {
				t.Errorf("output contains a line of %s", filepath.Base(f))
			}
			break
		}
		enc := base64.StdEncoding.EncodeToString(data)
		if strings.Contains(haystack, enc[40:100]) {
			t.Errorf("output contains base64 of %s", filepath.Base(f))
		}
	}
	if secrets == 0 {
		t.Fatal("found no key material to look for")
	}
	if strings.Contains(haystack, "eyJhbGciOi") { // a JWT header: a service-account token
		t.Error("output contains a token")
	}
}
