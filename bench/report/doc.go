// Package report renders stormbench results for people: a comparison's
// table as text, markdown or a self-contained HTML page
// ([WriteComparison]), a capacity sweep's largest safe restart wave
// ([Sweep]), the Go benchmark format benchstat reads ([WriteBenchfmt]), and
// a self-contained HTML or markdown report with inline SVG charts ([Build],
// [WriteHTML], [WriteMarkdown]).
//
// The figures and their statistics are bench/compare's (the key metrics,
// medians, confidence intervals and significance), the SLO the sweep judges
// by is bench/gate's, and the kubelet start-up pattern the report holds the
// simulated kubelets to is bench/measure's (clientlatency.KubeletStartRequests).
// Report only lays them out.
//
// Like every bench package, report never parses flags, prints to stdout or
// exits; cmd/stormbench wires it.
package report
