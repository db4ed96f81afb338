package compare

import (
	"fmt"
	"slices"

	"github.com/stormbench/stormbench/bench/result"
)

// Headlines returns the sentences an A/B leads with: for every group
// against the baseline, one per headline metric measured in both (see
// Headline). A comparison of more than three groups (a sweep) has none:
// its table says it better.
func Headlines(c *Comparison) []string {
	if len(c.Groups) > 3 {
		return nil
	}
	var out []string
	for gi := 1; gi < len(c.Groups); gi++ {
		// The API cost of a restart, the readiness lost, and how long the
		// fleet took to recover.
		for _, id := range []string{result.MetricExcessPerRestart, result.MetricNotReadySeconds, result.MetricFleetRecovered} {
			ri := slices.IndexFunc(c.Rows, func(r Row) bool { return r.Metric.ID == id })
			if ri < 0 {
				continue
			}
			if s := Headline(c, ri, gi); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// Headline is the sentence a reviewer can quote for row ri of group gi
// against the baseline: "preserve vs legacy: API excess requests per
// restart -80.3% (95% CI -81.0…-79.5%, n = 5 + 5, p = 0.008, adjusted
// 0.012)": the p-value as tested and as adjusted for the table
// (Comparison.Correction), whose verdict it gives. It says when the
// difference is not significant, and when the runs are too few for an
// interval or a test. A comparison block by block counts blocks:
// "legacy-b vs legacy-a: API excess requests per restart +1.2% (93.8% CI
// -0.1%…+2.4%, n = 5 blocks: too few for a significance test; 6 needed)".
// It is empty when either sample is missing.
func Headline(c *Comparison, ri, gi int) string {
	r := c.Rows[ri]
	d := r.Cells[gi].Delta
	if d == nil {
		return ""
	}
	change := "?"
	switch {
	case d.Estimate != nil:
		change = FormatPercent(*d.Estimate)
	case d.Change != nil:
		change = FormatPercent(*d.Change)
	}
	head := fmt.Sprintf("%s vs %s: %s %s", c.Groups[gi].Name, c.Baseline, r.Metric.Label, change)
	var stats string // the interval and n
	if d.paired {
		stats = fmt.Sprintf("n = %d blocks", d.N1)
		if d.Lo != nil {
			stats = fmt.Sprintf("%s CI %s…%s, %s", FormatLevel(d.Confidence), FormatPercent(*d.Lo), FormatPercent(*d.Hi), stats)
		}
		if d.TooFew {
			return fmt.Sprintf("%s (%s: too few for a significance test; %d needed)", head, stats, signedRankBlocks(c.Alpha))
		}
	} else {
		n := fmt.Sprintf("n = %d + %d", d.N1, d.N2)
		level := FormatLevel(c.Confidence)
		need := ShiftRuns(c.Confidence)
		switch {
		case d.TooFew || (d.Lo == nil && (d.N1 < need || d.N2 < need)):
			return fmt.Sprintf("%s (%s: too few runs for an interval or a significance test; %d + %d needed)", head, n, need, need)
		case d.Lo == nil:
			return fmt.Sprintf("%s (%s, %s; too few runs for a %s interval)", head, n, PText(d), level)
		}
		stats = fmt.Sprintf("%s CI %s…%s, %s", level, FormatPercent(*d.Lo), FormatPercent(*d.Hi), n)
	}
	if !d.Significant {
		return fmt.Sprintf("%s (%s): no significant difference (%s)", head, stats, PText(d))
	}
	return fmt.Sprintf("%s (%s, %s)", head, stats, PText(d))
}

// PText gives a delta's p-value as tested and as adjusted for the table:
// "p = 0.008, adjusted 0.012", or only "p = 1.000" for samples with
// nothing to test (Delta.Untested).
func PText(d *Delta) string {
	if d.Untested {
		return fmt.Sprintf("p = %.3f", d.P)
	}
	return fmt.Sprintf("p = %.3f, adjusted %.3f", d.P, d.PAdjusted)
}
