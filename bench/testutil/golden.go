// Package testutil holds what the tests of several packages share. It is
// for tests only.
package testutil

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

// update is `go test -update`: rewrite the golden files instead of
// comparing with them.
var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// Updating reports whether the test run rewrites golden files.
func Updating() bool { return *update }

// Golden compares got with testdata/<name>, or writes it there under
// -update.
func Golden(tb testing.TB, name string, got []byte) {
	tb.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			tb.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("reading the golden file (go test -update creates it): %v", err)
	}
	if !bytes.Equal(got, want) {
		tb.Errorf("%s differs from the golden file (go test -update rewrites it; review the diff):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}
