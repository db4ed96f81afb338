// Package compare holds the statistics of comparing stormbench results: the
// key metrics ([KeyMetrics]), the grouping of variant runs into samples
// ([GroupRuns]), and the comparison of every group with a baseline group
// ([Compare]).
//
// Every figure is read from a [result.VariantRun] through a [Metric]: a
// stable ID such as "endpointSlices.slice_writes", a label for people, a
// unit and an extractor. The same IDs key a profile's gates.maxRegression
// section and the gate command's --max-regression flags. Every key metric is
// a cost: lower is better.
//
// Comparisons follow benchstat (golang.org/x/perf/cmd/benchstat): each
// group's runs form a sample, summarised by its median and a
// distribution-free confidence interval (95 % unless Options.Confidence says
// otherwise; [MedianInterval]), and two samples are compared with the
// Mann-Whitney U test (benchmath.AssumeNothing) at Options.Alpha, the change
// being the Hodges-Lehmann estimate with the interval that inverts the test
// ([RelativeShift]). An A/B leads with quotable sentences ([Headlines]). Caveats travel as data, as numbered notes, never as log
// lines. Rendering a [Comparison] is bench/report's job; a Comparison
// encodes as JSON as is.
//
// Like every bench package, compare never parses flags, prints to stdout or
// exits; cmd/stormbench wires it.
package compare
