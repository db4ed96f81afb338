// Package track holds what the fleet-watching measurements (churn and
// recovery) share: the informers' sync and tombstones, the EndpointSlice
// endpoint index, per-second series and the bound on a measurement's
// warnings.
package track
