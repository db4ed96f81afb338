// Package calibrate measures the simulated kubelet against a real one. It
// runs the same storm on K real nodes (hollow kubelets: the v1.36.3 kubelet
// code with a fake runtime, package realnode) and K simulated ones (KWOK
// nodes that stormbench's kubelet model restarts), all carrying identical
// pods, and sets what each side sent to the API server, and what followed,
// side by side. The API server's audit log attributes every request: both
// kinds of kubelet act as system:node:<name>, and controller writes are
// attributed to a node through the objects they touch.
package calibrate
