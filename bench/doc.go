// Package bench is stormbench's engine: it wires a profile, a cluster, a
// fleet, the storm and the measurements into one run and returns its result.
// It never parses flags, prints to stdout or exits; cmd/stormbench does.
package bench
