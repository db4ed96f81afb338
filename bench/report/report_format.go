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

// sweepTable is the capacity sweep's verdicts and table.
func sweepTable(s *SweepSection) (verdicts []string, t table) {
	t = table{Header: cells("variant", "wave size", "mutating p99", "429s", "service outage", "peak requests/s", "safe"), align: mdAlign(7)}
	figure := func(x float64, unit string) cell {
		if math.IsNaN(x) {
			return cell{Text: "-", Class: "num"}
		}
		return cell{Text: compare.FormatValue(x, unit), Class: "num"}
	}
	for _, ser := range s.Series {
		verdicts = append(verdicts, ser.Verdict())
		for _, r := range ser.Rows {
			safe := cell{Text: "yes", Class: "text pass"}
			if !r.Safe {
				safe = cell{Text: "no: " + strings.Join(r.Unsafe, ", "), Class: "text fail"}
			}
			t.Rows = append(t.Rows, []cell{{Text: ser.Variant, Class: "metric"}, {Text: strconv.Itoa(r.WaveSize), Class: "num"},
				figure(r.MutatingP99, result.UnitSeconds), figure(r.Throttled, result.UnitRequests),
				figure(r.OutageSeconds, result.UnitSeconds), figure(r.PeakRate, result.UnitRequestsPerSecond), safe})
		}
	}
	return verdicts, t
}

// kubeletView is the kubelet table; its last column, the expected
// requests, is words that wrap, where the request column must not.
func kubeletView(t KubeletTable) table {
	v := table{Header: cells("request")}
	for i, name := range t.Variants {
		v.Header = append(v.Header, cell{Text: fmt.Sprintf("%s (per restart, %d restarts)", name, t.Restarts[i])})
	}
	v.Header = append(v.Header, cell{Text: "expected per kubelet start", Class: "text"})
	v.align = mdAlign(len(v.Header))
	for _, r := range t.Rows {
		row := []cell{{Text: r.Request, Class: "metric nowrap"}}
		for i, x := range r.PerRestart {
			row = append(row, cell{Text: kubeletCell(x, r.Check[i]), Class: "num"})
		}
		v.Rows = append(v.Rows, append(row, cell{Text: r.Expected, Class: "text"}))
	}
	return v
}

// variantsTable is the table of the report's variants.
func variantsTable(vs []VariantInfo) table {
	t := table{Header: cells("variant", "feature gates", "repetitions", "restarts", "complete"), align: "|:---|:---|---:|---:|:---|"}
	t.Header[1].Class = "text"
	for _, v := range vs {
		row := cells(v.Name, v.FeatureGates, strconv.Itoa(v.Repetitions), strconv.Itoa(v.Restarts), yesNo(v.Complete))
		row[0].Class, row[1].Class = "metric", "text"
		t.Rows = append(t.Rows, row)
	}
	return t
}

var reportPage = template.Must(template.New("report").Parse(tableTemplates + `<!DOCTYPE html>
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
<ul class="highlights">{{range .SweepVerdicts}}<li>{{.}}</li>{{end}}</ul>
{{range .R.Sweep.Charts}}<figure id="{{.ID}}">
{{.SVG}}
<figcaption>{{.Caption}}</figcaption>
</figure>
{{end}}{{template "table" .Sweep}}
{{end}}<h2 id="variants">Variants</h2>
{{template "table" .Variants}}
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
{{template "table" .Kubelet}}{{end}}
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
		R                                   *Report
		Table, FlowTable                    compareTable
		Sections                            []sectionView
		Kubelet, Variants                   table
		Sweep                               table
		SweepVerdicts                       []string
		KubeletIntro, SweepIntro, FlowIntro string
	}{R: r, Kubelet: kubeletView(r.Kubelet), Variants: variantsTable(r.Variants), KubeletIntro: kubeletIntro, SweepIntro: sweepIntro, FlowIntro: flowIntro}
	if r.Flows != nil {
		data.FlowTable = newCompareTable(r.Flows, false)
	}
	if r.Sweep != nil {
		data.SweepVerdicts, data.Sweep = sweepTable(r.Sweep)
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
		verdicts, t := sweepTable(r.Sweep)
		ew.printf("\n### Capacity sweep\n\n%s\n\n", EscapeMarkdown(sweepIntro))
		ew.each("- %s\n", escapeAll(verdicts))
		ew.printf("\n")
		t.writeMarkdown(ew)
	}
	ew.printf("\n### Variants\n\n")
	variantsTable(r.Variants).writeMarkdown(ew)
	if len(r.Highlights) > 0 {
		ew.printf("\n### Highlights\n\n")
		ew.each("- %s\n", escapeAll(r.Highlights))
	}
	if r.Comparison != nil {
		ew.printf("\n### Key metrics\n\n")
		ew.each("> **warning:** %s\n\n", escapeAll(r.Coverage))
		if err := WriteComparisonMarkdown(ew, r.Comparison, 0, false); err != nil {
			return err
		}
	}
	if r.Flows != nil {
		ew.printf("\n### API excess requests per restart, by flow\n\n%s\n\n", EscapeMarkdown(flowIntro))
		if err := WriteComparisonMarkdown(ew, r.Flows, 0, false); err != nil {
			return err
		}
	}
	if len(r.Kubelet.Rows) > 0 {
		ew.printf("\n### Requests per restarted node, against the kubelet start pattern\n\n%s\n\n", EscapeMarkdown(kubeletIntro))
		kubeletView(r.Kubelet).writeMarkdown(ew)
	}
	ew.printf("\n### Not modelled\n\n")
	ew.each("- %s\n", escapeAll(r.NotModelled))
	if len(r.Warnings) > 0 {
		ew.printf("\n### Warnings\n\n")
		ew.each("- %s\n", escapeAll(r.Warnings))
	}
	return ew.err
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "NO"
}
