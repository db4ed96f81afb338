// Package self is what stormbench itself did and cost in a storm, the
// "storm" measurement that the run adds to every set: the simulated
// kubelets' counters and the restarts ([Simulator]), and stormbench's own
// CPU and RSS ([SelfCost]), its CPU split into a standing cost of watching
// the fleet and a marginal cost per restart, with a heap profile at peaks
// ([PeakHeapProfile]).
package self
