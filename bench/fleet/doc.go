// Package fleet provisions and removes a run's KWOK nodes and workload
// objects. Every object it creates carries the run label; it deletes only
// objects that carry it.
//
// A Plan is what a fleet consists of: its KWOK nodes (NodeSpec), the real
// nodes that register themselves, and the workload objects in creation
// order. NewPlan renders one from a profile's fleet section; the
// calibration composes its own (pinned per-node workloads, bystanders).
// A Fleet (New, FromPlan) creates a plan's namespace, nodes with their
// CSINodes and objects, starts the real nodes through the starter it is
// given, and waits until everything is Ready; Delete removes a run.
package fleet
