package gate

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/stormbench/stormbench/bench/compare"
)

// Samples are the two samples a regression gate compares, each as its
// median with its 95 % confidence interval and n (compare.MedianInterval).
type Samples struct {
	Current  compare.Interval `json:"current"`
	Baseline compare.Interval `json:"baseline"`
}

// gateValue renders a gate's current figure.
func gateValue(g Check) string {
	switch {
	case g.Kind == KindComplete && g.Status == Pass:
		return "yes"
	case g.Kind == KindComplete:
		return "no"
	case g.Status == Skip || g.NoValue:
		return "-"
	}
	return g.figure(g.Value, func(s *Samples) compare.Interval { return s.Current })
}

func gateBaseline(g Check) string {
	if g.Baseline == nil {
		return "-"
	}
	return g.figure(*g.Baseline, func(s *Samples) compare.Interval { return s.Baseline })
}

// figure renders x and, when the gate has samples, the interval and n of
// the one sample picks: "1.30s [1.20s…1.40s] n=5", or "1.30s n=1"; a range
// from too few runs for 95 % is shown with its own coverage:
// "1.30s [1.20s…1.40s] (93.8%) n=5".
func (g Check) figure(x float64, pick func(*Samples) compare.Interval) string {
	s := compare.FormatValue(x, g.Unit)
	if g.Samples == nil {
		return s
	}
	iv := pick(g.Samples)
	if iv.Bounded && iv.Lo != iv.Hi {
		s += " [" + compare.FormatInterval(iv.Lo, iv.Hi, g.Unit) + "]"
		if iv.Reduced {
			s += " (" + compare.FormatLevel(iv.Confidence) + ")"
		}
	}
	return s + fmt.Sprintf(" n=%d", iv.N)
}

// WriteText writes one line per gate with its value, threshold, outcome
// and by how much, then a verdict line.
func WriteText(w io.Writer, r *Report) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "current:  %s\n", r.Current)
	if r.Baseline != nil {
		fmt.Fprintf(&b, "baseline: %s\n", *r.Baseline)
	}
	if len(r.Thresholds) > 0 {
		// Where each threshold came from: the defaults, the profile the
		// user chose, the flags; never the result being judged.
		b.WriteString("thresholds (defaults, then an explicitly chosen profile, then flags):\n")
		tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
		for _, t := range r.Thresholds {
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", t.Threshold, t.Value, t.Source)
		}
		tw.Flush() // into b: no error
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "VARIANT\tGATE\tVALUE\tBASELINE\tTHRESHOLD\tRESULT")
	for _, g := range r.Results {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s: %s\n", g.Variant, g.Name, gateValue(g), gateBaseline(g), g.Threshold, g.Status, g.Detail)
	}
	tw.Flush()
	for _, wn := range r.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", wn)
	}
	fmt.Fprintf(&b, "\n%s\n", Verdict(r))
	_, err := w.Write(b.Bytes())
	return err
}

// Verdict is the one-line outcome: which gates failed and by how much, or
// that all passed.
func Verdict(r *Report) string {
	total := len(r.Results)
	skipped := ""
	if r.Skipped > 0 {
		skipped = fmt.Sprintf(", %d skipped", r.Skipped)
	}
	if r.OK() {
		return fmt.Sprintf("PASS: %d of %d gates passed%s", r.Passed, total, skipped)
	}
	var failed []string
	for _, g := range r.FailedGates() {
		failed = append(failed, fmt.Sprintf("%s %s (%s)", g.Variant, g.Name, g.Detail))
	}
	return fmt.Sprintf("FAIL: %d of %d gates failed%s: %s", r.Failed, total, skipped, strings.Join(failed, "; "))
}

// FailureSummary names the failed gates in one line, for an error message.
func FailureSummary(r *Report) string {
	var failed []string
	for _, g := range r.FailedGates() {
		failed = append(failed, g.Variant+" "+g.Name)
	}
	return fmt.Sprintf("%d of %d gates failed: %s", r.Failed, len(r.Results), strings.Join(failed, ", "))
}

// JUnit XML, in the dialect Jenkins, GitLab and GitHub test reporters read.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	ClassName string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	SystemOut *junitText    `xml:"system-out,omitempty"`
}

// junitText is element text kept verbatim in a CDATA section, so that
// multi-line details read as written.
type junitText struct {
	Text string `xml:",cdata"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",cdata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

// WriteJUnit writes the gates as JUnit XML: one test suite per variant and
// one test case per gate, failed gates carrying a failure that says by how
// much.
func WriteJUnit(w io.Writer, r *Report) error {
	doc := junitSuites{Name: "stormbench gate", Tests: len(r.Results), Failures: r.Failed, Skipped: r.Skipped}
	props := []junitProperty{{"current", r.Current.Name}, {"current.run", r.Current.RunID}}
	if r.Baseline != nil {
		props = append(props, junitProperty{"baseline", r.Baseline.Name}, junitProperty{"baseline.run", r.Baseline.RunID})
	}
	for _, g := range r.Results {
		i := len(doc.Suites) - 1
		if i < 0 || doc.Suites[i].Name != "stormbench gate: "+g.Variant {
			doc.Suites = append(doc.Suites, junitSuite{Name: "stormbench gate: " + g.Variant, Properties: props})
			i++
		}
		s := &doc.Suites[i]
		s.Tests++
		out := fmt.Sprintf("value: %s\nbaseline: %s\nthreshold: %s\nresult: %s: %s\n", gateValue(g), gateBaseline(g), g.Threshold, g.Status, g.Detail)
		c := junitCase{Name: g.Name, ClassName: "stormbench.gate." + g.Variant, Time: "0", SystemOut: &junitText{out}}
		switch g.Status {
		case Fail:
			s.Failures++
			c.Failure = &junitFailure{
				Message: fmt.Sprintf("%s: %s, want %s: %s", g.Name, gateValue(g), g.Threshold, g.Detail),
				Type:    string(g.Kind),
				Text:    out,
			}
		case Skip:
			s.Skipped++
			c.Skipped = &junitSkipped{Message: g.Detail}
		}
		s.Cases = append(s.Cases, c)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("writing JUnit XML: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}
