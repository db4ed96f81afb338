// Package realnode runs real kubelets as fleet nodes: kubemark's hollow
// kubelet (the v1.36.3 kubelet code with a stub container manager and a fake
// cAdvisor) beside a fake CRI runtime in a process of its own. They are the
// oracle the simulated kubelet is calibrated against: a kubelet restart here
// is the real kubelet's start-up, prober and status manager, not a model.
//
// Each node owns a directory (state, logs, pid files, the CRI socket and a
// kubeconfig that impersonates system:node:<name> in group system:nodes).
// The embedded cluster's Down kills whatever pid files it finds under its
// realnodes/ directory, so a run that dies leaves nothing behind.
package realnode
