// Package result holds stormbench's versioned result document: the JSON
// schema written once per run, its atomic writer and validating reader,
// HdrHistogram encoding, and the generic merge of a sharded run's documents
// ([Merge]), driven by the measurements' own [MergeRule]s.
//
// A [Result] carries the run metadata (tool version, cluster versions and the
// component settings that shape a restart storm, fleet size, the resolved
// profile, seed and feature gates) and one [VariantRun] per variant and
// repetition. Each VariantRun holds the [Measurement]s gathered by package
// bench/measure. A Measurement is deliberately generic, in the style of
// clusterloader2's PerfData: named scalar [Value]s, [Histogram]s and 1 s
// [Series], each optionally tagged with a window ("baseline", "storm") and
// labels. Compare, gate and export code can therefore treat every figure the
// same way. The names consumed by code are constants of each figure's owner
// (bench/measure/*_figures.go, the simulator's counters too); names.go holds
// only the shared vocabulary of windows, units and label keys.
//
// Histograms are stored twice: as a percentile [Summary] for people, and as
// an encoded HdrHistogram (the standard V2 compressed, base64 format) so that
// results merge exactly across repetitions and shards ([MergeHistograms]).
//
// A run that stops early still writes what it has, with Complete false. The
// figures are defined in bench/measure/METRICS.md.
package result
