package kubelet

import (
	"os"
	"testing"

	"github.com/stormbench/stormbench/bench/cluster/clustertest"
)

// SharedTestCluster is the embedded cluster this package's integration
// tests share (the external test package's too): each creates objects of
// names its own and deletes them when it ends.
var SharedTestCluster = &clustertest.Shared{Name: "kubelet"}

func TestMain(m *testing.M) {
	os.Exit(clustertest.Finish(m.Run()))
}
