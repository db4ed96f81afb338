package report

import (
	"fmt"
	"html/template"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/stormbench/stormbench/bench/compare"
)

// Formats of a comparison.
const (
	FormatText     = "text"
	FormatMarkdown = "markdown"
	FormatHTML     = "html"
	FormatJSON     = "json"
)

// WriteComparison writes c in the given format: FormatText, FormatMarkdown
// or FormatHTML (a self-contained page). JSON is the caller's business: a
// Comparison encodes as is.
func WriteComparison(w io.Writer, c *compare.Comparison, format string) error {
	switch format {
	case FormatText, "":
		return writeComparisonText(w, c)
	case FormatMarkdown:
		return writeComparisonMarkdown(w, c, 2)
	case FormatHTML:
		return writeComparisonPage(w, c)
	}
	return fmt.Errorf("unknown comparison format %q: one of text, markdown, html, json", format)
}

// RunsWord is a number of runs in words: "1 run", "5 runs".
func RunsWord(n int) string {
	if n == 1 {
		return "1 run"
	}
	return fmt.Sprintf("%d runs", n)
}

func groupLine(g compare.Group) string {
	s := fmt.Sprintf("%s: %s", g.Name, RunsWord(len(g.Runs)))
	if g.KubernetesVersion != "" {
		s += ", Kubernetes " + g.KubernetesVersion
	}
	if len(g.FeatureGates) > 0 {
		var gates []string
		for _, k := range slices.Sorted(maps.Keys(g.FeatureGates)) {
			gates = append(gates, fmt.Sprintf("%s=%t", k, g.FeatureGates[k]))
		}
		s += ", " + strings.Join(gates, ",")
	}
	return s
}

// Superscript is the footnote mark of note n (1-based): ¹ ² ³ ... ¹⁰.
func Superscript(n int) string {
	return strings.Map(func(c rune) rune { return []rune("⁰¹²³⁴⁵⁶⁷⁸⁹")[c-'0'] }, strconv.Itoa(n))
}

// NoteMarks are the footnote marks of notes ns after a figure: a space,
// then the marks side by side (" ¹³"); empty for none.
func NoteMarks(ns []int) string {
	if len(ns) == 0 {
		return ""
	}
	s := " "
	for _, n := range ns {
		s += Superscript(n)
	}
	return s
}

// CellText is a group's median, its interval and its note marks
// ("148 [146…149] ¹"), or "-" when the group has no value.
func CellText(c compare.Cell, unit string) string {
	if c.N == 0 {
		return "-"
	}
	s := compare.FormatValue(c.Median, unit)
	if c.CI != "" {
		s += " " + c.CI
	}
	return s + NoteMarks(c.Notes)
}

// deltaText renders a delta as benchstat does, with the change's
// interval and its p-value as tested and as adjusted for the table:
// "-55.0% [-60.2%…-50.1%] (p=0.008 adj=0.012 n=5)", "~ [-3.0%…+2.1%]
// (p=0.310 adj=0.620 n=5)", "~ (p=1.000 n=5)" when every run of both had
// one value (nothing to test), or with too few runs "-55.0% (n=1)".
func deltaText(d *compare.Delta) string {
	if d == nil {
		return ""
	}
	n := fmt.Sprintf("n=%d", d.N1)
	if d.N1 != d.N2 {
		n = fmt.Sprintf("n=%d+%d", d.N1, d.N2)
	}
	detail := fmt.Sprintf("(p=%.3f adj=%.3f %s)", d.P, d.PAdjusted, n)
	switch {
	case d.Untested:
		detail = fmt.Sprintf("(p=%.3f %s)", d.P, n)
	case d.TooFew:
		detail = "(" + n + ")"
	}
	text := d.Text
	if d.CI != "" {
		text += " " + d.CI
	}
	return text + " " + detail + NoteMarks(d.Notes)
}

// intervalLegend says what the brackets hold and how the verdicts are
// corrected for the number of changes in the table.
func intervalLegend(c *compare.Comparison) string {
	change := fmt.Sprintf("change vs %s: Hodges-Lehmann estimate [its interval], Mann-Whitney p", c.Baseline)
	if c.Paired {
		change = fmt.Sprintf("change vs %s, block by block (each block played its own schedule, the same for both variants; repetitions.seeds: vary): Hodges-Lehmann estimate of the blocks' changes [its interval], Wilcoxon signed-rank p", c.Baseline)
	}
	if c.Tests == 0 {
		return fmt.Sprintf("median [%s confidence interval]; %s, ~ not significant at α=%.2f", compare.FormatLevel(c.Confidence), change, c.Alpha)
	}
	return fmt.Sprintf("median [%s confidence interval]; %s, and adj: p %s; ~ not significant at α=%.2f after adjustment", compare.FormatLevel(c.Confidence), change, correctionText(c), c.Alpha)
}

// correctionText says how the table's p-values were adjusted.
func correctionText(c *compare.Comparison) string {
	switch c.Correction {
	case compare.CorrectionBH:
		return fmt.Sprintf("adjusted by Benjamini-Hochberg over the table's %d tests (false discovery rate)", c.Tests)
	case "":
		return "not adjusted (a comparison made before the correction)"
	}
	return "adjusted by " + c.Correction
}

// missingLegend explains "-" cells.
const missingLegend = "- not measured, or nothing to measure (a recovery percentile of a variant in which nothing went not-ready)"

func hasMissing(c *compare.Comparison) bool {
	for _, r := range c.Rows {
		for _, cell := range r.Cells {
			if cell.N == 0 {
				return true
			}
		}
	}
	return false
}

func headerCells(c *compare.Comparison) []string {
	h := []string{"metric", c.Groups[0].Name}
	for _, g := range c.Groups[1:] {
		h = append(h, g.Name, "vs "+c.Baseline)
	}
	return h
}

func rowCells(c *compare.Comparison, r compare.Row) []string {
	cells := []string{r.Metric.Label, CellText(r.Cells[0], r.Metric.Unit)}
	for gi := 1; gi < len(c.Groups); gi++ {
		cells = append(cells, CellText(r.Cells[gi], r.Metric.Unit), deltaText(r.Cells[gi].Delta))
	}
	return cells
}

func writeComparisonText(w io.Writer, c *compare.Comparison) error {
	ew := &errWriter{w: w}
	for _, in := range c.Inputs {
		ew.printf("%s\n", in.String())
	}
	ew.printf("grouped by %s; baseline %s\n", c.GroupBy, c.Baseline)
	for _, g := range c.Groups {
		ew.printf("  %s\n", groupLine(g))
	}
	ew.printf("%s\n", intervalLegend(c))
	if hs := compare.Headlines(c); len(hs) > 0 {
		ew.printf("\n")
		for _, h := range hs {
			ew.printf("%s\n", h)
		}
	}
	ew.printf("\n")
	tw := tabwriter.NewWriter(ew, 0, 4, 2, ' ', 0)
	h := headerCells(c)
	h[0] = ""
	fmt.Fprintln(tw, strings.Join(h, "\t"))
	for _, r := range c.Rows {
		fmt.Fprintln(tw, strings.Join(rowCells(c, r), "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(c.Notes) > 0 || hasMissing(c) {
		ew.printf("\n")
	}
	if hasMissing(c) {
		ew.printf("%s\n", missingLegend)
	}
	for i, n := range c.Notes {
		ew.printf("%s %s\n", Superscript(i+1), n)
	}
	for _, wn := range c.Warnings {
		ew.printf("warning: %s\n", wn)
	}
	return ew.err
}

// writeComparisonMarkdown writes a GitHub-flavoured markdown table; level is
// the heading level of its title, 0 for none (inside a report, whose
// highlights lead with the headlines).
func writeComparisonMarkdown(w io.Writer, c *compare.Comparison, level int) error {
	ew := &errWriter{w: w}
	if level > 0 {
		ew.printf("%s Key metrics: %s vs %s\n\n", strings.Repeat("#", level), strings.Join(compare.GroupNames(c.Groups[1:]), ", "), c.Baseline)
	}
	for _, in := range c.Inputs {
		ew.printf("- %s\n", EscapeMarkdown(in.String()))
	}
	for _, g := range c.Groups {
		ew.printf("- %s\n", EscapeMarkdown(groupLine(g)))
	}
	ew.printf("- %s\n", EscapeMarkdown(intervalLegend(c)))
	if hs := compare.Headlines(c); len(hs) > 0 && level > 0 {
		ew.printf("\n")
		for _, h := range hs {
			ew.printf("**%s**  \n", EscapeMarkdown(h))
		}
	}
	ew.printf("\n")
	h := headerCells(c)
	ew.printf("| %s |\n", strings.Join(mdEscapeAll(h), " | "))
	align := []string{":---"}
	for range h[1:] {
		align = append(align, "---:")
	}
	ew.printf("|%s|\n", strings.Join(align, "|"))
	for _, r := range c.Rows {
		// cells: metric, baseline, then value and change per group; a
		// significant change is bold (after escaping, which would escape
		// the asterisks).
		cells := mdEscapeAll(rowCells(c, r))
		for i := 3; i < len(cells); i += 2 {
			if d := r.Cells[(i-1)/2].Delta; d != nil && d.Significant && d.Text != "~" {
				cells[i] = "**" + cells[i] + "**"
			}
		}
		ew.printf("| %s |\n", strings.Join(cells, " | "))
	}
	if len(c.Notes) > 0 || len(c.Warnings) > 0 || hasMissing(c) {
		ew.printf("\n")
	}
	if hasMissing(c) {
		ew.printf("%s  \n", EscapeMarkdown(`\`+missingLegend))
	}
	for i, n := range c.Notes {
		ew.printf("%s %s  \n", Superscript(i+1), EscapeMarkdown(n))
	}
	for _, wn := range c.Warnings {
		ew.printf("**warning**: %s  \n", EscapeMarkdown(wn))
	}
	return ew.err
}

// EscapeMarkdown escapes what markdown would read as a table's cell
// separator, HTML or emphasis.
func EscapeMarkdown(s string) string {
	return strings.NewReplacer("|", `\|`, "<", "&lt;", "*", `\*`, "_", `\_`).Replace(s)
}

func mdEscapeAll(s []string) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = EscapeMarkdown(x)
	}
	return out
}

// compareTable is the view model of a comparison's HTML table.
type compareTable struct {
	Headlines []string
	Legend    string
	Header    []string
	Rows      [][]htmlCell
	Notes     []string
	Warn      []string
	Inputs    []string
	Groups    []string
}

type htmlCell struct {
	Text  string
	Class string
}

// newCompareTable builds the HTML table; headlines says whether it leads
// with the headline sentences (a report has them in its highlights).
func newCompareTable(c *compare.Comparison, headlines bool) compareTable {
	t := compareTable{Header: headerCells(c), Warn: c.Warnings, Legend: intervalLegend(c)}
	if headlines {
		t.Headlines = compare.Headlines(c)
	}
	for _, in := range c.Inputs {
		t.Inputs = append(t.Inputs, in.String())
	}
	for _, g := range c.Groups {
		t.Groups = append(t.Groups, groupLine(g))
	}
	if hasMissing(c) {
		t.Notes = append(t.Notes, missingLegend)
	}
	for i, n := range c.Notes {
		t.Notes = append(t.Notes, Superscript(i+1)+" "+n)
	}
	for _, r := range c.Rows {
		cells := rowCells(c, r)
		row := []htmlCell{{Text: cells[0], Class: "metric"}}
		for i, s := range cells[1:] {
			// cells[1:] is baseline, then (value, delta) per other group.
			cl := "num"
			if i > 0 && i%2 == 0 {
				cl = "delta " + deltaClass(r.Cells[i/2].Delta)
			}
			row = append(row, htmlCell{Text: s, Class: cl})
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// deltaClass colours a delta: every key metric is a cost, so a significant
// decrease is better and an increase worse; with too few runs the colour is
// muted.
func deltaClass(d *compare.Delta) string {
	var cl string
	switch {
	case d == nil:
		return "same"
	case strings.HasPrefix(d.Text, "+"), strings.HasPrefix(d.Text, "×"), strings.HasPrefix(d.Text, "up "):
		cl = "worse"
	case strings.HasPrefix(d.Text, "-"), strings.HasPrefix(d.Text, "down "):
		cl = "better"
	default:
		return "same"
	}
	if d.TooFew {
		cl += " unsure"
	}
	return cl
}

const compareTableTemplate = `{{define "compare"}}<ul class="meta">{{range .Inputs}}<li>{{.}}</li>{{end}}{{range .Groups}}<li>{{.}}</li>{{end}}<li>{{.Legend}}</li></ul>
{{if .Headlines}}<ul class="headlines">{{range .Headlines}}<li>{{.}}</li>{{end}}</ul>{{end}}
<table class="compare">
<thead><tr>{{range .Header}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>
{{range .Rows}}<tr>{{range .}}<td class="{{.Class}}">{{.Text}}</td>{{end}}</tr>
{{end}}</tbody>
</table>
{{if .Notes}}<ol class="notes">{{range .Notes}}<li>{{.}}</li>{{end}}</ol>{{end}}
{{range .Warn}}<p class="warning">warning: {{.}}</p>
{{end}}{{end}}`

// pageStyle is the inline style sheet of every HTML page: no external
// style, script or font, so pages work offline and inside CI artifacts.
const pageStyle = `body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:2em auto;max-width:72em;padding:0 1em;color:#1a1a1a;line-height:1.4}
h1{font-size:1.6em}h2{font-size:1.3em;margin-top:2em;border-bottom:1px solid #ddd}h3{font-size:1.1em}
table{border-collapse:collapse;margin:1em 0;font-size:.92em}
th,td{padding:.25em .7em;border-bottom:1px solid #e4e4e4;text-align:right;white-space:nowrap}
th:first-child,th.text,td.metric,td.text{text-align:left}
th,td.metric,td.text{white-space:normal;overflow-wrap:break-word}td.nowrap{white-space:nowrap}
thead th{border-bottom:2px solid #999}
td.better{color:#0a7a2f;font-weight:600}td.worse{color:#b3261e;font-weight:600}
td.unsure{font-weight:normal;font-style:italic;color:#444}td.same{color:#666}
td.pass{color:#0a7a2f}td.fail{color:#b3261e;font-weight:600}
ul.meta{color:#444;font-size:.92em}ol.notes{font-size:.85em;color:#444;list-style:none;padding-left:0}
p.warning{color:#8a5a00;font-size:.9em}
figure{margin:1.5em 0}figure svg{width:100%;max-width:60em;height:auto}figcaption{font-size:.9em;color:#444}
.note{background:#f6f6f6;border-left:4px solid #bbb;padding:.5em 1em}
code{font-size:.9em}`

var comparePage = template.Must(template.New("page").Parse(compareTableTemplate + `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>stormbench compare: {{.Title}}</title>
<style>` + pageStyle + `</style>
</head>
<body>
<h1>stormbench compare: {{.Title}}</h1>
{{template "compare" .Table}}
</body>
</html>
`))

func comparisonTitle(c *compare.Comparison) string {
	if len(c.Groups) == 1 {
		return c.Groups[0].Name
	}
	return strings.Join(compare.GroupNames(c.Groups[1:]), ", ") + " vs " + c.Baseline
}

func writeComparisonPage(w io.Writer, c *compare.Comparison) error {
	return comparePage.Execute(w, struct {
		Title string
		Table compareTable
	}{comparisonTitle(c), newCompareTable(c, true)})
}

// errWriter remembers the first write error, so that formatting code can
// print freely and check once.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

func (e *errWriter) printf(format string, args ...any) {
	fmt.Fprintf(e, format, args...)
}
