// Package report turns stormbench result documents into the products people
// act on: comparison tables with significance ([Compare]), CI gates with
// JUnit and perf-dash exports ([EvaluateGates], [WriteJUnit],
// [BuildPerfData]), a capacity sweep's largest safe restart wave ([Sweep]),
// and a self-contained HTML or markdown report with inline SVG charts
// ([Build], [WriteHTML], [WriteMarkdown]).
//
// Every figure is read from a [result.VariantRun] through a [Metric]: a
// stable ID such as "endpointSlices.slice_writes", a label for people, a
// unit and an extractor. The same IDs key a profile's gates.maxRegression
// section and the gate command's --max-regression flags. Every key metric is
// a cost: lower is better.
//
// Comparisons follow benchstat (golang.org/x/perf/cmd/benchstat): each
// variant's repetitions form a sample, summarised by its median and a 95 %
// confidence interval, and two samples are compared with the Mann-Whitney U
// test (benchmath.AssumeNothing). Caveats travel as data, as numbered notes,
// never as log lines.
//
// Like every bench package, report never parses flags, prints to stdout or
// exits; cmd/stormbench wires it.
package report
