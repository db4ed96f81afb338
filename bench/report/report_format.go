package report

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/stormbench/stormbench/bench/compare"
	"github.com/stormbench/stormbench/bench/result"
)

// kubeletIntro explains the per-restart request table.
const kubeletIntro = "Requests the simulated kubelets sent (clientLatency measurement, by source, verb and resource), divided by the number of restarts, against what a starting Kubernetes 1.36 kubelet sends (pkg/kubelet: NewMainKubelet, Run, kubelet_node_status.go, token manager). client-go 1.36 informers use the streaming watch-list, so an informer's initial LIST shows as one WATCH with sendInitialEvents=true. ✓ within the reference's range, ▲ above, ▼ below; no mark where the count depends on the workload."

// sweepIntro explains the capacity sweep section.
const sweepIntro = "The profile's storm, all at once, at growing wave sizes on one fleet. A wave size is safe when every run at it completed with mutating API p99 ≤ 1s, no 429 responses and no service outage; the max safe restart wave is the largest size for which it and every smaller size tried were safe. Figures are the worst repetition's; - is not measured."

// sweepView is the capacity sweep table as rendered cells.
type sweepView struct {
	Verdicts []string
	Header   []string
	Rows     []sweepViewRow
}

type sweepViewRow struct {
	Cells []string
	Safe  bool
}

func newSweepView(s *SweepSection) sweepView {
	v := sweepView{Header: []string{"variant", "wave size", "mutating p99", "429s", "service outage", "peak requests/s", "safe"}}
	figure := func(x float64, unit string) string {
		if math.IsNaN(x) {
			return "-"
		}
		return compare.FormatValue(x, unit)
	}
	for _, ser := range s.Series {
		v.Verdicts = append(v.Verdicts, ser.Verdict())
		for _, r := range ser.Rows {
			safe := "yes"
			if !r.Safe {
				safe = "no: " + strings.Join(r.Unsafe, ", ")
			}
			v.Rows = append(v.Rows, sweepViewRow{Safe: r.Safe, Cells: []string{
				ser.Variant, strconv.Itoa(r.WaveSize), figure(r.MutatingP99, result.UnitSeconds), figure(r.Throttled, result.UnitRequests),
				figure(r.OutageSeconds, result.UnitSeconds), figure(r.PeakRate, result.UnitRequestsPerSecond), safe,
			}})
		}
	}
	return v
}

// kubeletView is the kubelet table as rendered cells.
type kubeletView struct {
	Header []string
	Rows   [][]string
	// Last is the index of the last column, the expected requests: words
	// that wrap, where the request column must not.
	Last int
}

func newKubeletView(t KubeletTable) kubeletView {
	v := kubeletView{Header: []string{"request"}}
	for i, name := range t.Variants {
		v.Header = append(v.Header, fmt.Sprintf("%s (per restart, %d restarts)", name, t.Restarts[i]))
	}
	v.Header = append(v.Header, "expected per kubelet start")
	v.Last = len(v.Header) - 1
	for _, r := range t.Rows {
		cells := []string{r.Request}
		for i, x := range r.PerRestart {
			cells = append(cells, kubeletCell(x, r.Check[i]))
		}
		v.Rows = append(v.Rows, append(cells, r.Expected))
	}
	return v
}

var reportPage = template.Must(template.New("report").Parse(compareTableTemplate + `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.R.Title}}</title>
<style>` + pageStyle + `</style>
</head>
<body>
<h1>{{.R.Title}}</h1>
<table class="meta">
{{range .R.Meta}}<tr><th class="text">{{.Label}}</th><td class="text">{{.Value}}</td></tr>
{{end}}</table>
<nav>{{if .R.Sweep}}<a href="#capacity-sweep">Capacity sweep</a> · {{end}}<a href="#variants">Variants</a>{{if .R.Comparison}} · <a href="#key-metrics">Key metrics</a>{{end}}{{if .R.Flows}} · <a href="#flows">By flow</a>{{end}}{{range .Sections}} · <a href="#{{.ID}}">{{.Title}}</a>{{end}}{{if .Kubelet.Rows}} · <a href="#kubelet">Requests per restart</a>{{end}} · <a href="#not-modelled">Not modelled</a></nav>
{{if .R.Sweep}}<h2 id="capacity-sweep">Capacity sweep</h2>
<p>{{.SweepIntro}}</p>
<ul class="highlights">{{range .Sweep.Verdicts}}<li>{{.}}</li>{{end}}</ul>
{{range .R.Sweep.Charts}}<figure id="{{.ID}}">
{{.SVG}}
<figcaption>{{.Caption}}</figcaption>
</figure>
{{end}}<table>
<thead><tr>{{range .Sweep.Header}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>
{{range $row := .Sweep.Rows}}<tr>{{range $i, $c := $row.Cells}}<td class="{{if eq $i 0}}metric{{else if eq $i 6}}text {{if $row.Safe}}pass{{else}}fail{{end}}{{else}}num{{end}}">{{$c}}</td>{{end}}</tr>
{{end}}</tbody>
</table>
{{end}}<h2 id="variants">Variants</h2>
<table>
<thead><tr><th>variant</th><th class="text">feature gates</th><th>repetitions</th><th>restarts</th><th>complete</th></tr></thead>
<tbody>
{{range .R.Variants}}<tr><td class="metric">{{.Name}}</td><td class="text">{{.FeatureGates}}</td><td>{{.Repetitions}}</td><td>{{.Restarts}}</td><td>{{if .Complete}}yes{{else}}NO{{end}}</td></tr>
{{end}}</tbody>
</table>
{{if .R.Highlights}}<ul class="highlights">{{range .R.Highlights}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{if .R.Comparison}}<h2 id="key-metrics">Key metrics</h2>
{{range .R.Coverage}}<p class="warning">warning: {{.}}</p>
{{end}}{{template "compare" .Table}}{{end}}
{{if .R.Flows}}<h2 id="flows">API excess requests per restart, by flow</h2>
<p>{{.FlowIntro}}</p>
{{template "compare" .FlowTable}}{{end}}
{{range .Sections}}<h2 id="{{.ID}}">{{.Title}}</h2>
<p>{{.Intro}}</p>
{{range .Charts}}<figure id="{{.ID}}">
{{.SVG}}
<figcaption>{{.Caption}}</figcaption>
</figure>
{{end}}{{end}}
{{if .Kubelet.Rows}}<h2 id="kubelet">Requests per restarted node, against the kubelet start pattern</h2>
<p>{{.KubeletIntro}}</p>
<table>
<thead><tr>{{range $i, $h := .Kubelet.Header}}<th{{if eq $i $.Kubelet.Last}} class="text"{{end}}>{{$h}}</th>{{end}}</tr></thead>
<tbody>
{{range .Kubelet.Rows}}<tr>{{range $i, $c := .}}<td class="{{if eq $i 0}}metric nowrap{{else if eq $i $.Kubelet.Last}}text{{else}}num{{end}}">{{$c}}</td>{{end}}</tr>
{{end}}</tbody>
</table>{{end}}
<h2 id="not-modelled">Not modelled</h2>
<div class="note"><ul>
{{range .R.NotModelled}}<li>{{.}}</li>
{{end}}</ul></div>
{{if .R.Warnings}}<h2>Warnings</h2>
<ul>{{range .R.Warnings}}<li class="warning">{{.}}</li>{{end}}</ul>{{end}}
</body>
</html>
`))

type sectionView struct {
	ID, Title, Intro string
	Charts           []Chart
}

// WriteHTML writes the report as one self-contained HTML page: inline
// style, inline SVG charts, no script, and nothing fetched from elsewhere.
func WriteHTML(w io.Writer, r *Report) error {
	data := struct {
		R            *Report
		Table        compareTable
		Sections     []sectionView
		Kubelet      kubeletView
		KubeletIntro string
		Sweep        sweepView
		SweepIntro   string
		FlowTable    compareTable
		FlowIntro    string
	}{R: r, Kubelet: newKubeletView(r.Kubelet), KubeletIntro: kubeletIntro, SweepIntro: sweepIntro, FlowIntro: flowIntro}
	if r.Flows != nil {
		data.FlowTable = newCompareTable(r.Flows, false)
	}
	if r.Sweep != nil {
		data.Sweep = newSweepView(r.Sweep)
	}
	if r.Comparison != nil {
		data.Table = newCompareTable(r.Comparison, false)
	}
	for _, s := range r.Sections {
		data.Sections = append(data.Sections, sectionView{ID: chartID("section", s.Title), Title: s.Title, Intro: s.Intro, Charts: s.Charts})
	}
	if err := reportPage.Execute(w, data); err != nil {
		return fmt.Errorf("writing HTML report: %w", err)
	}
	return nil
}

// WriteMarkdown writes the report's summary as GitHub-flavoured markdown for
// a pull-request comment: metadata, the capacity sweep table of a sweep,
// highlights, the key-metrics table, the kubelet request table and caveats;
// no charts.
func WriteMarkdown(w io.Writer, r *Report) error {
	ew := &errWriter{w: w}
	ew.printf("## %s\n\n", EscapeMarkdown(r.Title))
	ew.printf("| | |\n|:---|:---|\n")
	for _, m := range r.Meta {
		ew.printf("| %s | %s |\n", EscapeMarkdown(m.Label), EscapeMarkdown(m.Value))
	}
	if r.Sweep != nil {
		v := newSweepView(r.Sweep)
		ew.printf("\n### Capacity sweep\n\n%s\n\n", EscapeMarkdown(sweepIntro))
		for _, vd := range v.Verdicts {
			ew.printf("- %s\n", EscapeMarkdown(vd))
		}
		ew.printf("\n| %s |\n|:---|%s:---|\n", strings.Join(mdEscapeAll(v.Header), " | "), strings.Repeat("---:|", len(v.Header)-2))
		for _, row := range v.Rows {
			ew.printf("| %s |\n", strings.Join(mdEscapeAll(row.Cells), " | "))
		}
	}
	ew.printf("\n### Variants\n\n| variant | feature gates | repetitions | restarts | complete |\n|:---|:---|---:|---:|:---|\n")
	for _, v := range r.Variants {
		ew.printf("| %s | %s | %d | %d | %s |\n", EscapeMarkdown(v.Name), EscapeMarkdown(v.FeatureGates), v.Repetitions, v.Restarts, yesNo(v.Complete))
	}
	if len(r.Highlights) > 0 {
		ew.printf("\n### Highlights\n\n")
		for _, h := range r.Highlights {
			ew.printf("- %s\n", EscapeMarkdown(h))
		}
	}
	if r.Comparison != nil {
		ew.printf("\n### Key metrics\n\n")
		for _, c := range r.Coverage {
			ew.printf("> **warning:** %s\n\n", EscapeMarkdown(c))
		}
		if err := writeComparisonMarkdown(ew, r.Comparison, 0); err != nil {
			return err
		}
	}
	if r.Flows != nil {
		ew.printf("\n### API excess requests per restart, by flow\n\n%s\n\n", EscapeMarkdown(flowIntro))
		if err := writeComparisonMarkdown(ew, r.Flows, 0); err != nil {
			return err
		}
	}
	if len(r.Kubelet.Rows) > 0 {
		v := newKubeletView(r.Kubelet)
		ew.printf("\n### Requests per restarted node, against the kubelet start pattern\n\n%s\n\n", EscapeMarkdown(kubeletIntro))
		ew.printf("| %s |\n|:---|%s:---|\n", strings.Join(mdEscapeAll(v.Header), " | "), strings.Repeat("---:|", len(v.Header)-2))
		for _, row := range v.Rows {
			ew.printf("| %s |\n", strings.Join(mdEscapeAll(row), " | "))
		}
	}
	ew.printf("\n### Not modelled\n\n")
	for _, n := range r.NotModelled {
		ew.printf("- %s\n", EscapeMarkdown(n))
	}
	if len(r.Warnings) > 0 {
		ew.printf("\n### Warnings\n\n")
		for _, wn := range r.Warnings {
			ew.printf("- %s\n", EscapeMarkdown(wn))
		}
	}
	return ew.err
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "NO"
}
