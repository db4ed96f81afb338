package report

import (
	"bytes"
	"testing"

	"github.com/stormbench/stormbench/bench/compare"

	"github.com/stormbench/stormbench/bench/testutil"
)

func TestCompareGolden(t *testing.T) {
	c, err := compare.Compare([]compare.Input{{Name: "quick-ab.json", Result: readFixture(t)}}, compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct{ format, golden string }{
		{FormatText, "compare.txt.golden"},
		{FormatMarkdown, "compare.md.golden"},
	} {
		var buf bytes.Buffer
		if err := WriteComparison(&buf, c, f.format); err != nil {
			t.Fatal(err)
		}
		testutil.Golden(t, f.golden, buf.Bytes())
	}
}

// TestCompareRepetitionsGolden shows medians with confidence intervals,
// p-values and "~" for a result with five repetitions per variant.
func TestCompareRepetitionsGolden(t *testing.T) {
	r := synthetic(t, "reps", map[string][]float64{
		"legacy":   {150, 160, 155, 158, 152},
		"preserve": {0, 2, 1, 0, 3},
		"batched":  {149, 161, 154, 157, 153},
	}, "legacy", "preserve", "batched")
	c, err := compare.Compare([]compare.Input{{Name: "reps.json", Result: r}}, compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteComparison(&buf, c, FormatText); err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, "compare-reps.txt.golden", buf.Bytes())
}

func TestCompareHTMLPage(t *testing.T) {
	c, err := compare.Compare([]compare.Input{{Name: "quick-ab.json", Result: readFixture(t)}}, compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteComparison(&buf, c, FormatHTML); err != nil {
		t.Fatal(err)
	}
	doc := parseHTML(t, buf.Bytes())
	assertSelfContained(t, doc)
	cells := 0
	for _, n := range findAll(doc, "td") {
		if attr(n, "class") == "delta better unsure" {
			cells++
		}
	}
	if cells == 0 {
		t.Error("no delta cell is marked better (and unsure, with one repetition)")
	}
}
