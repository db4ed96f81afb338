package gate

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/perf/benchmath"

	"github.com/stormbench/stormbench/bench/compare"
	"github.com/stormbench/stormbench/bench/measure/apiserver"
	"github.com/stormbench/stormbench/bench/measure/recovery"
	"github.com/stormbench/stormbench/bench/outfile"
	"github.com/stormbench/stormbench/bench/result"
)

// PerfDataVersion is the PerfData schema version clusterloader2 writes.
const PerfDataVersion = "v1"

// PerfData is clusterloader2's versioned result format
// (perf-tests/clusterloader2/api/types.go, package perftype), which
// perf-dash reads.
type PerfData struct {
	// Version is PerfDataVersion.
	Version string `json:"version"`
	// DataItems are the figures.
	DataItems []DataItem `json:"dataItems"`
	// Labels qualify the whole file.
	Labels map[string]string `json:"labels,omitempty"`
}

// DataItem is one PerfData figure: named values in one unit, with labels.
type DataItem struct {
	// Data maps a value name (Perc50, Perc90, Perc99, value) to the value.
	Data map[string]float64 `json:"data"`
	// Unit is the unit of every value in Data.
	Unit string `json:"unit"`
	// Labels qualify the item; perf-dash draws one line per label set.
	Labels map[string]string `json:"labels,omitempty"`
}

// PerfFile is one PerfData document and the file name clusterloader2 would
// give it: <Measurement>_<profile>_<RFC 3339 time>.json.
type PerfFile struct {
	Name string
	Data PerfData
}

// BuildPerfData exports a result as PerfData: server-side API latency per
// verb class, recovery latency per kind (both in ms, from histograms merged
// across repetitions), and the median of every key metric, each labelled by
// variant.
func BuildPerfData(r *result.Result) ([]PerfFile, error) {
	groups := compare.GroupRuns([]compare.Input{{Name: r.Run.ID, Result: r}}, compare.GroupByVariant)
	p, err := compare.RecordedProfile(compare.Input{Name: "run " + r.Run.ID, Result: r})
	if err != nil {
		return nil, fmt.Errorf("exporting PerfData: %w", err)
	}
	suffix := p.Metadata.Name
	if suffix == "" {
		suffix = "stormbench"
	}
	// clusterloader2 separates the name's parts with "_".
	suffix = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' {
			return r
		}
		return '-'
	}, suffix)
	stamp := r.Run.Start.UTC().Format("2006-01-02T15:04:05Z")
	fileLabels := map[string]string{"run": r.Run.ID, "toolVersion": r.Run.ToolVersion, "nodes": strconv.Itoa(r.Run.Fleet.Nodes)}
	if v := r.Run.Cluster.Versions["kube-apiserver"]; v != "" {
		fileLabels["kubernetes"] = v
	}
	api := PerfData{Version: PerfDataVersion, Labels: fileLabels}
	rec, met := api, api
	for _, g := range groups {
		for _, class := range []string{apiserver.ClassMutating, apiserver.ClassGet, apiserver.ClassList} {
			if err := addPercentiles(&api, g, map[string]string{"Class": class, "Window": result.WindowStorm}, apiserver.Name, apiserver.RequestDuration, result.LabelClass, class); err != nil {
				return nil, err
			}
		}
		for _, name := range []string{recovery.Node, recovery.Pod, recovery.Service, recovery.FleetRecovered} {
			if err := addPercentiles(&rec, g, map[string]string{"Metric": name}, recovery.Name, name); err != nil {
				return nil, err
			}
		}
		for _, m := range compare.KeyMetrics() {
			vals := g.Values(m)
			if len(vals) == 0 {
				continue
			}
			s := benchmath.NewSample(vals, &benchmath.DefaultThresholds)
			med := benchmath.AssumeNothing.Summary(s, 0.95).Center
			met.DataItems = append(met.DataItems, DataItem{
				Data:   map[string]float64{"value": med},
				Unit:   perfUnit(m.Unit),
				Labels: map[string]string{"Variant": g.Name, "Metric": m.ID, "Repetitions": strconv.Itoa(len(vals))},
			})
		}
	}
	var files []PerfFile
	for _, f := range []struct {
		name string
		data PerfData
	}{{"StormbenchAPIResponsiveness", api}, {"StormbenchRecoveryLatency", rec}, {"StormbenchMetrics", met}} {
		if len(f.data.DataItems) == 0 {
			continue
		}
		files = append(files, PerfFile{Name: fmt.Sprintf("%s_%s_%s.json", f.name, suffix, stamp), Data: f.data})
	}
	return files, nil
}

// addPercentiles merges a histogram across a group's repetitions and adds
// its p50/p90/p99 in milliseconds to d, labelled with the group, its count
// and with the labels given. A histogram with no samples in any repetition
// adds nothing.
func addPercentiles(d *PerfData, g compare.Group, itemLabels map[string]string, measurement, name string, labels ...string) error {
	var hs []*result.Histogram
	for _, v := range g.VariantRuns() {
		if h := v.Measurement(measurement).Histogram(name, result.WindowStorm, labels...); h != nil {
			hs = append(hs, h)
		}
	}
	if len(hs) == 0 {
		return nil
	}
	merged, err := result.MergeHistograms(hs...)
	if err != nil {
		return fmt.Errorf("exporting %s %s of %s: %w", measurement, name, g.Name, err)
	}
	if s := merged.Summary; s.Count > 0 {
		itemLabels["Variant"], itemLabels["Count"] = g.Name, strconv.FormatInt(s.Count, 10)
		d.DataItems = append(d.DataItems, DataItem{
			Data: map[string]float64{"Perc50": s.P50 * 1e3, "Perc90": s.P90 * 1e3, "Perc99": s.P99 * 1e3}, Unit: "ms", Labels: itemLabels})
	}
	return nil
}

func perfUnit(u string) string {
	switch u {
	case result.UnitSeconds:
		return "s"
	case result.UnitRequestsPerSecond:
		return "1/s"
	}
	return u
}

// WritePerfData writes files into dir (created if missing) and returns their
// paths. It refuses names that would leave dir.
func WritePerfData(dir string, files []PerfFile) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("writing perf-dash data: %w", err)
	}
	var paths []string
	for _, f := range files {
		if f.Name != filepath.Base(f.Name) || strings.HasPrefix(f.Name, ".") {
			return paths, fmt.Errorf("writing perf-dash data: bad file name %q", f.Name)
		}
		b, err := json.MarshalIndent(f.Data, "", "  ")
		if err != nil {
			return paths, fmt.Errorf("encoding %s: %w", f.Name, err)
		}
		p := filepath.Join(dir, f.Name)
		// The directory is the output: its files are replaced.
		if err := outfile.Write(p, append(b, '\n'), outfile.Options{Force: true}); err != nil {
			return paths, fmt.Errorf("writing perf-dash data: %w", err)
		}
		paths = append(paths, p)
	}
	return paths, nil
}
