// Package cluster provides the control plane a run talks to: an embedded,
// ephemeral cluster run by kwokctl's binary runtime from the components that
// `make components` builds into bin/, or an existing cluster reached through a
// kubeconfig.
package cluster
