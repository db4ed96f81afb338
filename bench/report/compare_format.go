package report

import (
	"fmt"
	"html/template"
	"io"
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
		return WriteComparisonMarkdown(w, c, 2, true)
	case FormatHTML:
		return comparePage.Execute(w, struct {
			Title string
			Table compareTable
		}{comparisonTitle(c), newCompareTable(c, true)})
	}
	return fmt.Errorf("unknown comparison format %q: one of text, markdown, html, json", format)
}

func groupLine(g compare.Group) string {
	s := g.Name + ": 1 run"
	if n := len(g.Runs); n != 1 {
		s = fmt.Sprintf("%s: %d runs", g.Name, n)
	}
	if g.KubernetesVersion != "" {
		s += ", Kubernetes " + g.KubernetesVersion
	}
	if len(g.FeatureGates) > 0 {
		s += ", " + strings.Join(gatePairs(g.FeatureGates), ",")
	}
	return s
}

// superscript is the footnote mark of note n (1-based): ¹ ² ³ ... ¹⁰.
func superscript(n int) string {
	return strings.Map(func(c rune) rune { return []rune("⁰¹²³⁴⁵⁶⁷⁸⁹")[c-'0'] }, strconv.Itoa(n))
}

// noteMarks are the footnote marks of notes ns after a figure: a space,
// then the marks side by side (" ¹³"); empty for none.
func noteMarks(ns []int) string {
	if len(ns) == 0 {
		return ""
	}
	s := " "
	for _, n := range ns {
		s += superscript(n)
	}
	return s
}

// cellText is a group's median, its interval and its note marks
// ("148 [146…149] ¹"), or "-" when the group has no value.
func cellText(c compare.Cell, unit string) string {
	if c.N == 0 {
		return "-"
	}
	s := compare.FormatValue(c.Median, unit)
	if c.CI != "" {
		s += " " + c.CI
	}
	return s + noteMarks(c.Notes)
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
	return text + " " + detail + noteMarks(d.Notes)
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

// table is a table as every format writes it: a header and rows of cells.
type table struct {
	// Class is the HTML table's class.
	Class  string
	Header []cell
	Rows   [][]cell
	// align is the markdown alignment row.
	align string
}

// cell is a table's cell: its text, its HTML class, and whether markdown
// shows it in bold.
type cell struct {
	Text, Class string
	bold        bool
}

// cells makes a row of cells without classes.
func cells(texts ...string) []cell {
	out := make([]cell, len(texts))
	for i, s := range texts {
		out[i].Text = s
	}
	return out
}

// mdAlign is the markdown alignment row of n columns, the first and the
// last left-aligned.
func mdAlign(n int) string { return "|:---|" + strings.Repeat("---:|", n-2) + ":---|" }

// texts are the texts of the header, then of every row.
func (t table) texts() [][]string {
	var out [][]string
	for _, r := range append([][]cell{t.Header}, t.Rows...) {
		var row []string
		for _, c := range r {
			row = append(row, c.Text)
		}
		out = append(out, row)
	}
	return out
}

// writeMarkdown writes t as a GitHub-flavoured markdown table, its cells
// escaped (before a bold cell's asterisks).
func (t table) writeMarkdown(ew *errWriter) {
	row := func(cs []cell) {
		var s []string
		for _, c := range cs {
			x := EscapeMarkdown(c.Text)
			if c.bold {
				x = "**" + x + "**"
			}
			s = append(s, x)
		}
		ew.printf("| %s |\n", strings.Join(s, " | "))
	}
	row(t.Header)
	ew.printf("%s\n", t.align)
	for _, r := range t.Rows {
		row(r)
	}
}

// writeColumns writes rows as text columns.
func writeColumns(w io.Writer, rows [][]string) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	return tw.Flush()
}

func writeComparisonText(w io.Writer, c *compare.Comparison) error {
	t := newCompareTable(c, true)
	ew := &errWriter{w: w}
	ew.each("%s\n", t.Inputs)
	ew.printf("grouped by %s; baseline %s\n", c.GroupBy, c.Baseline)
	ew.each("  %s\n", t.Groups)
	ew.printf("%s\n", t.Legend)
	if len(t.Headlines) > 0 {
		ew.printf("\n")
		ew.each("%s\n", t.Headlines)
	}
	ew.printf("\n")
	rows := t.Table.texts()
	rows[0][0] = ""
	if err := writeColumns(ew, rows); err != nil {
		return err
	}
	if len(t.Notes) > 0 {
		ew.printf("\n")
	}
	ew.each("%s\n", t.Notes)
	ew.each("warning: %s\n", t.Warn)
	return ew.err
}

// WriteComparisonMarkdown writes c as a GitHub-flavoured markdown table
// after its inputs, groups and legend; level is the heading level of its
// title, 0 for none (inside a report or a document's figure block), and
// headlines says whether it leads with the headline sentences (a report
// has them in its highlights).
func WriteComparisonMarkdown(w io.Writer, c *compare.Comparison, level int, headlines bool) error {
	t := newCompareTable(c, headlines)
	ew := &errWriter{w: w}
	if level > 0 {
		ew.printf("%s Key metrics: %s vs %s\n\n", strings.Repeat("#", level), strings.Join(compare.GroupNames(c.Groups[1:]), ", "), c.Baseline)
	}
	ew.each("- %s\n", escapeAll(slices.Concat(t.Inputs, t.Groups, []string{t.Legend})))
	if len(t.Headlines) > 0 {
		ew.printf("\n")
		ew.each("**%s**  \n", escapeAll(t.Headlines))
	}
	ew.printf("\n")
	t.Table.writeMarkdown(ew)
	if len(t.Notes) > 0 || len(t.Warn) > 0 {
		ew.printf("\n")
	}
	for _, n := range t.Notes {
		if n == missingLegend {
			n = `\` + n // not a list item
		}
		ew.printf("%s  \n", EscapeMarkdown(n))
	}
	ew.each("**warning**: %s  \n", escapeAll(t.Warn))
	return ew.err
}

// EscapeMarkdown escapes what markdown would read as a table's cell
// separator, HTML or emphasis.
func EscapeMarkdown(s string) string {
	return strings.NewReplacer("|", `\|`, "<", "&lt;", "*", `\*`, "_", `\_`).Replace(s)
}

func escapeAll(s []string) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = EscapeMarkdown(x)
	}
	return out
}

// compareTable is a comparison as every format writes it: the compared
// inputs and groups, the legend, the headlines, the table, its notes and
// warnings.
type compareTable struct {
	Inputs, Groups []string
	Legend         string
	Headlines      []string
	Table          table
	// Notes are the missing legend when a cell is "-", then the numbered
	// notes.
	Notes []string
	Warn  []string
}

// newCompareTable builds the comparison's table; headlines says whether it
// leads with the headline sentences (a report has them in its highlights).
// Its cells are the metric, the baseline, then the value and the change of
// every other group; a significant change is bold in markdown.
func newCompareTable(c *compare.Comparison, headlines bool) compareTable {
	t := compareTable{Warn: c.Warnings, Legend: intervalLegend(c)}
	if headlines {
		t.Headlines = compare.Headlines(c)
	}
	for _, in := range c.Inputs {
		t.Inputs = append(t.Inputs, in.String())
	}
	for _, g := range c.Groups {
		t.Groups = append(t.Groups, groupLine(g))
	}
	h := []string{"metric", c.Groups[0].Name}
	for _, g := range c.Groups[1:] {
		h = append(h, g.Name, "vs "+c.Baseline)
	}
	t.Table = table{Class: "compare", Header: cells(h...), align: "|:---|" + strings.Repeat("---:|", len(h)-1)}
	missing := false
	for _, r := range c.Rows {
		row := []cell{{Text: r.Metric.Label, Class: "metric"}, {Text: cellText(r.Cells[0], r.Metric.Unit), Class: "num"}}
		for _, gc := range r.Cells[1:] {
			d := gc.Delta
			row = append(row, cell{Text: cellText(gc, r.Metric.Unit), Class: "num"},
				cell{Text: deltaText(d), Class: "delta " + deltaClass(d), bold: d != nil && d.Significant && d.Text != "~"})
		}
		for _, gc := range r.Cells {
			missing = missing || gc.N == 0
		}
		t.Table.Rows = append(t.Table.Rows, row)
	}
	if missing {
		t.Notes = append(t.Notes, missingLegend)
	}
	for i, n := range c.Notes {
		t.Notes = append(t.Notes, superscript(i+1)+" "+n)
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

// tableTemplates write a table ("table") and a comparison ("compare") in
// HTML.
const tableTemplates = `{{define "table"}}<table{{with .Class}} class="{{.}}"{{end}}>
<thead><tr>{{range .Header}}<th{{with .Class}} class="{{.}}"{{end}}>{{.Text}}</th>{{end}}</tr></thead>
<tbody>
{{range .Rows}}<tr>{{range .}}<td{{with .Class}} class="{{.}}"{{end}}>{{.Text}}</td>{{end}}</tr>
{{end}}</tbody>
</table>{{end}}{{define "compare"}}<ul class="meta">{{range .Inputs}}<li>{{.}}</li>{{end}}{{range .Groups}}<li>{{.}}</li>{{end}}<li>{{.Legend}}</li></ul>
{{if .Headlines}}<ul class="headlines">{{range .Headlines}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{template "table" .Table}}
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

var comparePage = template.Must(template.New("page").Parse(tableTemplates + `<!DOCTYPE html>
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

// each prints every item in the format.
func (e *errWriter) each(format string, items []string) {
	for _, s := range items {
		e.printf(format, s)
	}
}
