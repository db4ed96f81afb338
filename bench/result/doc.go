// Package result holds stormbench's versioned result document: the JSON
// schema written once per run, its atomic writer and validating reader,
// HdrHistogram encoding and merge helpers, and the end-of-run summary table.
//
// A [Result] carries the run metadata (tool version, cluster versions and the
// component settings that shape a restart storm, fleet size, the resolved
// profile, seed and feature gates) and one [VariantRun] per variant and
// repetition. Each VariantRun holds the [Measurement]s gathered by package
// bench/measure. A Measurement is deliberately generic, in the style of
// clusterloader2's PerfData: named scalar [Value]s, [Histogram]s and 1 s
// [Series], each optionally tagged with a window ("baseline", "storm") and
// labels. Compare, gate and export code can therefore treat every figure the
// same way, and the names consumed by code are the constants in names.go.
//
// Histograms are stored twice: as a percentile [Summary] for people, and as
// an encoded HdrHistogram (the standard V2 compressed, base64 format) so that
// results merge exactly across repetitions and shards ([MergeHistograms]).
//
// A run that stops early still writes what it has, with Complete false. The
// figures are defined in bench/measure/METRICS.md.
package result
