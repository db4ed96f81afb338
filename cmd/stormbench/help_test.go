package main

import (
	"testing"

	"github.com/stormbench/stormbench/bench/testutil"
)

// TestHelpGolden keeps every command's --help in testdata/help/: a change to
// a flag, a default or an example shows in review (go test -update rewrites
// them). The cache directory is fixed so that --workdir's default does not
// depend on the machine.
func TestHelpGolden(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", "/home/user/.cache")
	t.Setenv("HOME", "/home/user")
	for _, c := range commands() {
		code, stdout, stderr := runCLI(t, c.name, "--help")
		if code != exitOK {
			t.Errorf("%s --help: exit %d: %s", c.name, code, stderr)
			continue
		}
		testutil.Golden(t, "help/"+c.name+".golden", []byte(stdout))
	}
}
