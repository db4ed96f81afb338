// Package host is the "host" measurement, always on: the machine's CPU
// (busy, iowait, steal), sampled through the run. A storm that kept the
// host at least [SaturatedBusy] busy for more than [BoundFraction] of its
// window is host-bound ([IsBound]): its latencies describe the machine as
// much as the control plane.
package host
