// Package measuretest holds the measurements' test helpers: a fixed start
// time, golden results, scripted EndpointSlices and tolerant comparisons.
package measuretest
