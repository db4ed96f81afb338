// Package gate turns stormbench results into CI verdicts: completeness,
// absolute SLOs on the worst repetition, and relative regressions of the
// medians from a baseline result ([Evaluate]), rendered as text
// ([WriteText], [Verdict]) and JUnit XML ([WriteJUnit]), and clusterloader2's
// PerfData for perf-dash ([BuildPerfData], [WritePerfData]).
//
// The thresholds ([Options]) come from the Kubernetes scalability SLOs
// ([DefaultOptions]), a profile's gates section ([Options.ApplyProfile]) and
// the gate command's flags. Figures are the key metrics of bench/compare,
// and a regression must also be significant by its Mann-Whitney U test
// when the samples are large enough to tell.
//
// Like every bench package, gate never parses flags, prints to stdout or
// exits; cmd/stormbench wires it.
package gate
