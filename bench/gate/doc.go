// Package gate turns stormbench results into CI verdicts: completeness,
// absolute SLOs on the worst repetition, and relative regressions of the
// medians from a baseline result ([Evaluate]), rendered as text
// ([WriteText], [Verdict]) and JUnit XML ([WriteJUnit]), and clusterloader2's
// PerfData for perf-dash ([BuildPerfData], [WritePerfData]).
//
// The thresholds ([Options]) come from the Kubernetes scalability SLOs
// ([DefaultOptions]), then a profile's gates section the user named, then
// the gate command's flags ([ResolveThresholds]), never from the result
// judged. Figures are the key metrics of bench/compare. A regression beyond
// its threshold fails unless the Mann-Whitney U test, corrected by Holm over
// the variant's regression gates, finds it not significant, and the test
// may spare it only when the runs allow a significant p at all
// (compare.MinUTestP times the family's size within alpha); otherwise the
// medians decide ([judgeRegressions]).
//
// Like every bench package, gate never parses flags, prints to stdout or
// exits; cmd/stormbench wires it.
package gate
