// Package fleet provisions and removes a run's KWOK nodes and workload
// objects. Every object it creates carries the run label; it deletes only
// objects that carry it.
package fleet
