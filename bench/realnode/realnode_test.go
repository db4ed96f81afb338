package realnode

import (
	"os"
	"path/filepath"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/stormbench/stormbench/bench/cluster"
)

func TestProcUsageSelf(t *testing.T) {
	u, err := ProcUsage(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if u.PeakRSSBytes <= 0 || u.RSSBytes <= 0 || u.PeakRSSBytes < u.RSSBytes {
		t.Errorf("usage %+v: want positive RSS below its peak", u)
	}
	if _, err := ProcUsage(-1); err == nil {
		t.Error("usage of pid -1 read")
	}
}

func TestJoinGates(t *testing.T) {
	if got := JoinGates(map[string]bool{"WatchListClient": true, "ChangeContainerStatusOnKubeletRestart": false}); got != "ChangeContainerStatusOnKubeletRestart=false,WatchListClient=true" {
		t.Errorf("JoinGates = %q", got)
	}
	if got := JoinGates(nil); got != "" {
		t.Errorf("JoinGates(nil) = %q", got)
	}
}

// TestNodeKubeconfig: the node's kubeconfig is the admin one with the
// current context's user impersonating the node in group system:nodes.
func TestNodeKubeconfig(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, b := range cluster.RealNodeBinaries {
		if err := os.WriteFile(filepath.Join(bin, b), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	admin := clientcmdapi.NewConfig()
	admin.Clusters["c"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:6443"}
	admin.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: "t0ken"}
	admin.Contexts["ctx"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "admin"}
	admin.CurrentContext = "ctx"
	adminPath := filepath.Join(dir, "admin.kubeconfig")
	if err := clientcmd.WriteToFile(*admin, adminPath); err != nil {
		t.Fatal(err)
	}
	n, err := New(Options{Components: cluster.Components{Dir: bin}, AdminKubeconfig: adminPath, Dir: filepath.Join(dir, "n1"), Name: "n1"})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.LoadFromFile(n.kubeconfigPath())
	if err != nil {
		t.Fatal(err)
	}
	u := cfg.AuthInfos["admin"]
	if u.Impersonate != "system:node:n1" || len(u.ImpersonateGroups) != 1 || u.ImpersonateGroups[0] != "system:nodes" || u.Token != "t0ken" {
		t.Errorf("node user %+v", u)
	}
	if st, _ := os.Stat(n.kubeconfigPath()); st.Mode().Perm() != 0o600 {
		t.Errorf("kubeconfig mode %v, want 0600", st.Mode().Perm())
	}
	if _, err := New(Options{Components: cluster.Components{Dir: dir}, AdminKubeconfig: adminPath, Dir: filepath.Join(dir, "n2"), Name: "n2"}); err == nil {
		t.Error("missing binaries accepted")
	}
	if _, err := New(Options{Components: cluster.Components{Dir: bin}, AdminKubeconfig: adminPath, Dir: filepath.Join(dir, string(make([]byte, 0))+"a-very-long-directory-name-that-makes-the-socket-path-exceed-the-unix-limit-of-one-hundred-and-seven-bytes"), Name: "n3"}); err == nil {
		t.Error("socket path over the unix limit accepted")
	}
}
