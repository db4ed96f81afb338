package compare

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"golang.org/x/perf/benchmath"

	"github.com/stormbench/stormbench/bench/result"
)

// Input is one result document given to Compare (and to the gates and the
// report, which read the same documents).
type Input struct {
	// Name labels the document in output, usually its file name. Names must
	// be unique.
	Name string
	// Result is the document.
	Result *result.Result
}

// GroupBy says how variant runs are grouped into the samples (columns) that
// Compare summarises and compares.
type GroupBy string

// Ways to group variant runs.
const (
	// GroupByAuto groups by variant name, unless that yields a single group
	// from several documents (two runs of the same profile, as when
	// comparing two commits); then it groups by document.
	GroupByAuto GroupBy = ""
	// GroupByVariant pools every repetition of a variant name across
	// documents: one column per variant.
	GroupByVariant GroupBy = "variant"
	// GroupByFile pools every variant run of a document: one column per
	// document.
	GroupByFile GroupBy = "file"
	// GroupByFileVariant gives every (document, variant) pair its own
	// column, named "document/variant".
	GroupByFileVariant GroupBy = "file-variant"
)

// ParseGroupBy parses a --group-by value ("auto" or "" is GroupByAuto).
func ParseGroupBy(s string) (GroupBy, error) {
	switch g := GroupBy(s); g {
	case GroupByVariant, GroupByFile, GroupByFileVariant:
		return g, nil
	case "", "auto":
		return GroupByAuto, nil
	}
	return "", fmt.Errorf("unknown grouping %q: one of auto, variant, file, file-variant", s)
}

// Options tune Compare.
type Options struct {
	// GroupBy says how variant runs become columns; default GroupByAuto.
	GroupBy GroupBy
	// Baseline names the group the others are compared against; default the
	// first group in input order.
	Baseline string
	// Metrics are the rows; default KeyMetrics().
	Metrics []Metric
	// Confidence is the confidence level of the median's interval; default
	// 0.95.
	Confidence float64
	// Alpha is the significance level of the Mann-Whitney U test, applied
	// to p-values adjusted for the table's number of tests
	// (Benjamini–Hochberg); default 0.05.
	Alpha float64
}

// CorrectionBH names the multiplicity correction Compare applies to its
// table: Benjamini–Hochberg (see Comparison.Correction).
const CorrectionBH = "benjamini-hochberg"

// Comparison is a side-by-side table: one row per metric, one column per
// group of variant runs, with deltas against the baseline group. It is
// JSON-encodable as is.
type Comparison struct {
	// Inputs describes the compared documents, in order.
	Inputs []InputInfo `json:"inputs"`
	// GroupBy is the grouping in effect (never GroupByAuto).
	GroupBy GroupBy `json:"groupBy"`
	// Baseline is the name of the baseline group.
	Baseline string `json:"baseline"`
	// Groups are the columns, in order of first appearance.
	Groups []Group `json:"groups"`
	// Rows hold one metric each; metrics no run measured are left out.
	Rows []Row `json:"rows"`
	// Notes are the numbered footnotes cells refer to: note n is Notes[n-1].
	Notes []string `json:"notes,omitempty"`
	// Warnings are caveats about the inputs (incomplete runs, failed
	// measurements).
	Warnings []string `json:"warnings,omitempty"`
	// Confidence is the confidence level of the intervals.
	Confidence float64 `json:"confidence"`
	// Alpha is the significance level of the comparisons, applied to the
	// adjusted p-values.
	Alpha float64 `json:"alpha"`
	// Correction is the multiplicity correction of the table's p-values:
	// CorrectionBH, Benjamini–Hochberg over every change in the table, as a
	// reader scans it row by row and column by column. It bounds the
	// expected share of false "significant" verdicts among those shown at
	// Alpha; without it, 30 key metrics at α = 0.05 show 1.5 false
	// differences on average between identical variants.
	Correction string `json:"correction"`
	// Tests is the number of p-values the correction adjusted over: every
	// delta of the table.
	Tests int `json:"tests"`
	// Paired is set when the deltas compare the runs block by block: one
	// result whose blocks each drew their own schedule (repetitions.seeds:
	// vary), grouped by variant. A block's runs shared a schedule, so each
	// change is estimated from the blocks' own ratios (PairedShift) and
	// tested by Wilcoxon's signed-rank test (SignedRankP) instead of the
	// pooled runs' U test, which would count the schedules' spread as noise
	// (paired.go).
	Paired bool `json:"paired,omitempty"`
}

// InputInfo describes one compared document.
type InputInfo struct {
	Name        string `json:"name"`
	RunID       string `json:"runID"`
	Profile     string `json:"profile,omitempty"`
	ToolVersion string `json:"toolVersion"`
	Nodes       int    `json:"nodes"`
	Pods        int    `json:"pods"`
	Services    int    `json:"services"`
	Complete    bool   `json:"complete"`
}

// String is the document's line in a heading: its name, run, profile,
// fleet and tool version, and INCOMPLETE when the run stopped early.
func (in InputInfo) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: run %s", in.Name, in.RunID)
	if in.Profile != "" {
		fmt.Fprintf(&b, ", profile %s", in.Profile)
	}
	fmt.Fprintf(&b, ", %d nodes, %d pods, %d services, stormbench %s", in.Nodes, in.Pods, in.Services, in.ToolVersion)
	if !in.Complete {
		b.WriteString(", INCOMPLETE")
	}
	return b.String()
}

// Group is one column: the variant runs pooled into one sample.
type Group struct {
	// Name is the column's name: a variant, a document, or "document/variant".
	Name string `json:"name"`
	// Runs lists the pooled runs as "document:variant#repetition".
	Runs []string `json:"runs"`
	// FeatureGates are the first run's resolved feature gates.
	FeatureGates map[string]bool `json:"featureGates,omitempty"`
	// KubernetesVersion is the first run's Kubernetes version, set when
	// the groups' runs are not all of one (an upgrade's comparison).
	KubernetesVersion string `json:"kubernetesVersion,omitempty"`

	runs []*result.VariantRun
}

// VariantRuns returns the pooled runs, in the order of Runs.
func (g Group) VariantRuns() []*result.VariantRun { return g.runs }

// Values returns the metric's figure from every pooled run that measured
// it, in run order.
func (g Group) Values(m Metric) []float64 {
	var out []float64
	for _, v := range g.runs {
		if x, ok := m.Extract(v); ok {
			out = append(out, x)
		}
	}
	return out
}

// Row is one metric across the groups.
type Row struct {
	// Metric is the row's metric.
	Metric Metric `json:"metric"`
	// Cells are aligned with Comparison.Groups.
	Cells []Cell `json:"cells"`
}

// Cell is one group's sample of one metric.
type Cell struct {
	// N is the number of runs that measured the metric; 0 means missing.
	N int `json:"n"`
	// Values are the measured values, in ascending order.
	Values []float64 `json:"values,omitempty"`
	// Median is the sample median.
	Median float64 `json:"median"`
	// Lo and Hi bound the median's confidence interval (MedianInterval);
	// nil for a single run.
	Lo *float64 `json:"lo,omitempty"`
	Hi *float64 `json:"hi,omitempty"`
	// Confidence is the interval's actual coverage: at least
	// Comparison.Confidence, or less when the runs are too few for it
	// (the sample's range then, marked by a note).
	Confidence float64 `json:"confidence,omitempty"`
	// CI is the interval for people ("[161…166]"); empty for a single run.
	CI string `json:"ci,omitempty"`
	// Notes are footnote numbers.
	Notes []int `json:"notes,omitempty"`
	// Delta compares the cell with the baseline group's; nil for the
	// baseline itself or when either is missing.
	Delta *Delta `json:"delta,omitempty"`
}

// Delta is one group's difference from the baseline group.
type Delta struct {
	// Change is (median - baseline median) / baseline median; nil when the
	// baseline median is 0 and this one is not.
	Change *float64 `json:"change,omitempty"`
	// Estimate is the Hodges-Lehmann estimate of the relative change (see
	// RelativeShift), and Lo and Hi its confidence interval, nil when the
	// runs are too few for one (4 + 4 at 95 %).
	Estimate *float64 `json:"estimate,omitempty"`
	Lo       *float64 `json:"lo,omitempty"`
	Hi       *float64 `json:"hi,omitempty"`
	// Confidence is the interval's actual coverage.
	Confidence float64 `json:"confidence,omitempty"`
	// Text is the change for people: the estimate, "-55.0%", or "~" when
	// the test finds no significant difference.
	Text string `json:"text"`
	// CI is the estimate's interval for people ("[-60.1…-50.2%]"); empty
	// without one.
	CI string `json:"ci,omitempty"`
	// P is the test's p-value, unadjusted: the Mann-Whitney U test's, or
	// the signed-rank test's when the comparison is Paired.
	P float64 `json:"p"`
	// PAdjusted is P adjusted for the table's number of tests
	// (Comparison.Correction); the verdict uses it.
	PAdjusted float64 `json:"pAdjusted"`
	// N1 and N2 are the baseline's and this sample's sizes: both the
	// number of blocks when the comparison is Paired.
	N1 int `json:"n1"`
	N2 int `json:"n2"`
	// Significant is true when PAdjusted ≤ Alpha.
	Significant bool `json:"significant"`
	// TooFew is true when the samples are too small for any difference to
	// be significant; Text then shows the raw change of the medians.
	TooFew bool `json:"tooFewRepetitions,omitempty"`
	// Notes are footnote numbers.
	Notes []int `json:"notes,omitempty"`

	// Untested is set when every run of both samples has one value: there
	// is nothing to test, and the delta stays out of the correction's
	// family (PAdjusted is P, 1).
	Untested bool `json:"untested,omitempty"`

	// shown is the change Text shows when it shows one.
	shown float64
	// paired is set by comparePaired: N1 = N2 blocks.
	paired bool
}

// Compare groups the variant runs of the inputs, summarises every metric
// per group with its median and confidence interval, and compares every
// group with the baseline group using the Mann-Whitney U test, its
// p-values adjusted over the whole table by Benjamini–Hochberg.
func Compare(inputs []Input, opts Options) (*Comparison, error) {
	if len(inputs) == 0 {
		return nil, errors.New("comparing: no result given")
	}
	if opts.Confidence == 0 {
		opts.Confidence = 0.95
	}
	if opts.Alpha == 0 {
		opts.Alpha = benchmath.DefaultThresholds.CompareAlpha
	}
	if err := CheckLevels(opts.Alpha, opts.Confidence); err != nil {
		return nil, fmt.Errorf("comparing: %w", err)
	}
	if opts.Metrics == nil {
		opts.Metrics = KeyMetrics()
	}
	c := &Comparison{Confidence: opts.Confidence, Alpha: opts.Alpha, Correction: CorrectionBH}
	seen := map[string]bool{}
	for _, in := range inputs {
		if seen[in.Name] {
			return nil, fmt.Errorf("comparing: two inputs are named %q", in.Name)
		}
		seen[in.Name] = true
		info, err := Describe(in)
		if err != nil {
			return nil, fmt.Errorf("comparing: %w", err)
		}
		c.Inputs = append(c.Inputs, info)
		c.Warnings = append(c.Warnings, InputWarnings(in)...)
	}
	c.GroupBy = opts.GroupBy
	if c.GroupBy == GroupByAuto {
		c.GroupBy = GroupByVariant
		if len(inputs) > 1 && len(GroupRuns(inputs, GroupByVariant)) == 1 {
			c.GroupBy = GroupByFile
		}
	}
	c.Groups = GroupRuns(inputs, c.GroupBy)
	if len(c.Groups) == 0 {
		return nil, errors.New("comparing: the results hold no variant runs")
	}
	base := 0
	if opts.Baseline != "" {
		base = slices.IndexFunc(c.Groups, func(g Group) bool { return g.Name == opts.Baseline })
		if base < 0 {
			return nil, fmt.Errorf("comparing: no group %q to use as baseline (have: %s)", opts.Baseline, strings.Join(GroupNames(c.Groups), ", "))
		}
	}
	// The baseline goes first, so that every other column reads "vs it".
	if base > 0 {
		g := c.Groups[base]
		c.Groups = slices.Insert(slices.Delete(c.Groups, base, base+1), 0, g)
	}
	c.Baseline = c.Groups[0].Name
	c.Paired = len(inputs) == 1 && c.GroupBy == GroupByVariant && inputs[0].Result.Run.Seeds.Vary()

	thresholds := benchmath.DefaultThresholds
	thresholds.CompareAlpha = opts.Alpha
	notes := &noteSet{}
	for _, m := range opts.Metrics {
		row := Row{Metric: m, Cells: make([]Cell, len(c.Groups))}
		samples := make([]*benchmath.Sample, len(c.Groups))
		measured := false
		for gi := range c.Groups {
			vals := c.Groups[gi].Values(m)
			if len(vals) == 0 {
				continue
			}
			measured = true
			samples[gi] = benchmath.NewSample(vals, &thresholds)
			row.Cells[gi] = summarise(samples[gi], opts.Confidence, m.Unit, notes)
		}
		if !measured {
			continue
		}
		for gi := 1; gi < len(c.Groups); gi++ {
			if samples[0] == nil || samples[gi] == nil {
				continue
			}
			if c.Paired {
				b, g := blockPairs(c.Groups[0], c.Groups[gi], m)
				row.Cells[gi].Delta = comparePaired(b, g, row.Cells[0].Median, row.Cells[gi].Median, opts, notes)
				continue
			}
			row.Cells[gi].Delta = compareSamples(samples[0], samples[gi], row.Cells[0].Median, row.Cells[gi].Median, opts.Confidence, notes)
		}
		c.Rows = append(c.Rows, row)
	}
	c.Tests = judge(c.Rows, opts.Alpha, notes)
	c.Notes = notes.list
	return c, nil
}

// correctedNote explains a change significant by its own p but not after
// the adjustment. Benjamini-Hochberg multiplies the k-th smallest of m
// p-values by m/k, so a change of p stands only when at least m·p/α
// changes of the table are as clear; and the U test of n1 + n2 runs
// cannot go below 2/C(n1+n2, n1) (0.008 for 5 + 5), so in a table of 30
// no change stands alone whatever its size.
func correctedNote(d *Delta, m int, alpha float64) string {
	k := int(math.Ceil(float64(m) * d.P / alpha))
	runs, pMin := fmt.Sprintf("%d + %d runs", d.N1, d.N2), MinUTestP(d.N1, d.N2)
	if d.paired {
		runs, pMin = fmt.Sprintf("%d blocks", d.N1), MinSignedRankP(d.N1)
	}
	return fmt.Sprintf("p ≤ α before the adjustment but not after: over the table's %d tests, a change of this p stands only when at least %d are as clear (with %s no p goes below %.4f); ask fewer questions (--metrics) or make more runs to tell", m, k, runs, pMin)
}

// m0 counts the p-values of a family that are not NaN.
func m0(ps []float64) int {
	n := 0
	for _, p := range ps {
		if !math.IsNaN(p) {
			n++
		}
	}
	return n
}

// CheckLevels refuses a significance level or a confidence level that is
// not strictly between 0 and 1 (NaN included: every comparison with NaN is
// false, so a NaN level would silently call nothing significant).
func CheckLevels(alpha, confidence float64) error {
	var errs []error
	if !(alpha > 0 && alpha < 1) {
		errs = append(errs, fmt.Errorf("significance level (alpha) %v: must be a number between 0 and 1, both excluded, such as 0.05", alpha))
	}
	if !(confidence > 0 && confidence < 1) {
		errs = append(errs, fmt.Errorf("confidence level %v: must be a number between 0 and 1, both excluded, such as 0.95", confidence))
	}
	return errors.Join(errs...)
}

// judge adjusts the p-values of the deltas of the rows together
// (BenjaminiHochberg), sets each delta's verdict from its adjusted p and
// returns how many were adjusted. A delta between samples whose runs all
// have one value has no test: it keeps its p (1) and does not count. A
// delta that the adjustment made "~" gets a note saying why
// (correctedNote).
func judge(rows []Row, alpha float64, notes *noteSet) int {
	var ds []*Delta
	var ps []float64
	for ri := range rows {
		for ci := range rows[ri].Cells {
			if d := rows[ri].Cells[ci].Delta; d != nil {
				p := d.P
				if d.Untested {
					p = math.NaN()
				}
				ds, ps = append(ds, d), append(ps, p)
			}
		}
	}
	adj := BenjaminiHochberg(ps)
	m := m0(ps)
	for i, d := range ds {
		d.PAdjusted = adj[i]
		if math.IsNaN(adj[i]) {
			d.PAdjusted = d.P
		}
		d.Significant = d.PAdjusted <= alpha
		if !d.Untested && !d.TooFew && d.P <= alpha && !d.Significant {
			d.Notes = append(d.Notes, notes.add(correctedNote(d, m, alpha)))
		}
		switch {
		case d.TooFew && d.shown != 0:
			d.Text = FormatChange(d.shown)
		case d.Significant:
			d.Text = FormatChange(d.shown)
		default:
			d.Text = "~"
		}
	}
	return m
}

func summarise(s *benchmath.Sample, confidence float64, unit string, notes *noteSet) Cell {
	iv := MedianInterval(s.Values, confidence)
	cell := Cell{N: iv.N, Values: s.Values, Median: iv.Median}
	if !iv.Bounded {
		// One run has no interval to speak of; the comparison notes say so.
		return cell
	}
	lo, hi := iv.Lo, iv.Hi
	cell.Lo, cell.Hi, cell.Confidence = &lo, &hi, iv.Confidence
	if lo != hi {
		cell.CI = "[" + FormatInterval(lo, hi, unit) + "]"
	}
	if iv.Reduced {
		cell.Notes = append(cell.Notes, notes.add(ReducedNote(iv.N, iv.Confidence, confidence)))
	}
	return cell
}

// ReducedNote explains an interval from too few runs for the level asked
// for: the range of the runs, with its lower coverage.
func ReducedNote(n int, got, want float64) string {
	return fmt.Sprintf("%d runs: the interval is their range [min…max], which holds the median with %s confidence; %s needs %d runs", n, FormatLevel(got), FormatLevel(want), MedianRuns(want))
}

// FormatLevel formats a confidence level: 0.95 is "95%", 0.9375 "93.8%".
func FormatLevel(c float64) string {
	p := c * 100
	if math.Abs(p-math.Round(p)) < 0.05 {
		return fmt.Sprintf("%.0f%%", p)
	}
	return fmt.Sprintf("%.1f%%", p)
}

// FormatInterval formats the bounds of an interval in the unit, "lo…hi".
func FormatInterval(lo, hi float64, unit string) string {
	return FormatValue(lo, unit) + "…" + FormatValue(hi, unit)
}

func compareSamples(base, cur *benchmath.Sample, baseMedian, curMedian, confidence float64, notes *noteSet) *Delta {
	cmp := benchmath.AssumeNothing.Compare(base, cur)
	d := &Delta{P: cmp.P, N1: cmp.N1, N2: cmp.N2}
	d.setShift(RelativeShift(base.Values, cur.Values, confidence), baseMedian, curMedian)
	// Read from the samples, not from benchmath's warnings: it warns of
	// too few runs only when both samples are small (5 + 1 passes
	// unwarned), and its wording is no contract.
	switch {
	case allEqual(base.Values, cur.Values):
		// Identical samples: "~" says it all.
		d.Untested = true
	case MinUTestP(d.N1, d.N2) > cmp.Alpha:
		d.TooFew = true
		d.Notes = append(d.Notes, notes.add(fmt.Sprintf("too few repetitions to tell whether a difference is significant: %d + %d runs allow no p below %.3f (α %.3g); the change shown has no interval (%d + %d runs needed)",
			d.N1, d.N2, MinUTestP(d.N1, d.N2), cmp.Alpha, ShiftRuns(confidence), ShiftRuns(confidence))))
	}
	// The verdict and its text wait for the whole table (judge).
	return d
}

// setShift sets the change of the medians, and the estimate and interval
// of sh; shown is the estimate, or the medians' change without one.
func (d *Delta) setShift(sh Shift, baseMedian, curMedian float64) {
	change := RelChange(baseMedian, curMedian)
	if !math.IsInf(change, 0) {
		d.Change = &change
	}
	d.shown = change
	if !math.IsInf(sh.Estimate, 0) && !math.IsNaN(sh.Estimate) {
		est := sh.Estimate
		d.Estimate, d.shown = &est, est
	}
	if sh.Bounded {
		lo, hi := sh.Lo, sh.Hi
		d.Lo, d.Hi, d.Confidence = &lo, &hi, sh.Confidence
		if lo != hi {
			d.CI = "[" + FormatPercent(lo) + "…" + FormatPercent(hi) + "]"
		}
	}
}

// comparePaired compares two groups block by block: b[i] and g[i] are the
// runs of block i (blockPairs).
func comparePaired(b, g []float64, baseMedian, curMedian float64, opts Options, notes *noteSet) *Delta {
	n := len(b)
	d := &Delta{N1: n, N2: n, paired: true}
	sh := PairedShift(b, g, opts.Confidence)
	d.setShift(sh, baseMedian, curMedian)
	diffs := make([]float64, n)
	for i := range n {
		diffs[i] = sh.diff(b[i], g[i])
	}
	d.P = SignedRankP(diffs)
	switch {
	case allEqual(b, g):
		d.Untested = true
	case MinSignedRankP(n) > opts.Alpha:
		d.TooFew = true
		d.Notes = append(d.Notes, notes.add(fmt.Sprintf("too few blocks to tell whether a difference is significant: %d blocks allow no signed-rank p below %.4f (α %.3g); %d are needed",
			n, MinSignedRankP(n), opts.Alpha, signedRankBlocks(opts.Alpha))))
	}
	if sh.Reduced && sh.Bounded && d.CI != "" {
		d.Notes = append(d.Notes, notes.add(fmt.Sprintf("%d blocks: the interval is the range of the blocks' changes, which holds the change with %s confidence; %s needs %d blocks",
			n, FormatLevel(sh.Confidence), FormatLevel(opts.Confidence), pairedBlocks(opts.Confidence))))
	}
	return d
}

// blockPairs returns the metric's values of the runs of a and b that
// played the same block (repetition), in a's order.
func blockPairs(a, b Group, m Metric) (x, y []float64) {
	for _, ra := range a.runs {
		va, ok := m.Extract(ra)
		if !ok {
			continue
		}
		for _, rb := range b.runs {
			if rb.Repetition != ra.Repetition {
				continue
			}
			if vb, ok := m.Extract(rb); ok {
				x, y = append(x, va), append(y, vb)
			}
			break
		}
	}
	return x, y
}

// signedRankBlocks is the fewest blocks whose signed-rank test can reach
// p ≤ alpha (6 at 0.05).
func signedRankBlocks(alpha float64) int {
	return fewest(1, 64, func(n int) bool { return MinSignedRankP(n) <= alpha })
}

// pairedBlocks is the fewest blocks for which PairedShift has an interval
// at the level (6 at 95 %).
func pairedBlocks(confidence float64) int {
	return fewest(2, 64, func(n int) bool { k, _ := signedRankOrder(n, confidence); return k > 0 })
}

// allEqual reports whether every value of both samples is the same.
func allEqual(a, b []float64) bool {
	all := append(slices.Clone(a), b...)
	return len(all) > 0 && slices.Min(all) == slices.Max(all)
}

// noteSet numbers footnotes in order of first use.
type noteSet struct{ list []string }

func (n *noteSet) add(s string) int {
	if i := slices.Index(n.list, s); i >= 0 {
		return i + 1
	}
	n.list = append(n.list, s)
	return len(n.list)
}

// GroupRuns pools the variant runs of the inputs into groups, named as by
// says (GroupByAuto counts as GroupByVariant), in order of first
// appearance. When the groups' first runs are of more than one Kubernetes
// version, each group names its own.
func GroupRuns(inputs []Input, by GroupBy) []Group {
	var groups []Group
	versions := map[string]bool{}
	for _, in := range inputs {
		for i := range in.Result.Variants {
			v := &in.Result.Variants[i]
			var name string
			switch by {
			case GroupByFile:
				name = in.Name
			case GroupByFileVariant:
				name = in.Name + "/" + v.Variant
			default:
				name = v.Variant
			}
			gi := slices.IndexFunc(groups, func(g Group) bool { return g.Name == name })
			if gi < 0 {
				kv := cmp.Or(v.KubernetesVersion, in.Result.Run.Cluster.KubernetesVersion)
				versions[kv] = true
				groups = append(groups, Group{Name: name, FeatureGates: v.FeatureGates, KubernetesVersion: kv})
				gi = len(groups) - 1
			}
			groups[gi].runs = append(groups[gi].runs, v)
			groups[gi].Runs = append(groups[gi].Runs, fmt.Sprintf("%s:%s#%d", in.Name, v.Variant, v.Repetition))
		}
	}
	if len(versions) < 2 {
		for i := range groups {
			groups[i].KubernetesVersion = ""
		}
	}
	return groups
}

// GroupNames lists the groups' names, in order.
func GroupNames(gs []Group) []string {
	var out []string
	for _, g := range gs {
		out = append(out, g.Name)
	}
	return out
}

// Describe summarises a document for the heading of a comparison or a gate
// report.
func Describe(in Input) (InputInfo, error) {
	r := in.Result
	p, err := RecordedProfile(in)
	if err != nil {
		return InputInfo{}, err
	}
	return InputInfo{
		Name:        in.Name,
		RunID:       r.Run.ID,
		Profile:     p.Metadata.Name,
		ToolVersion: r.Run.ToolVersion,
		Nodes:       r.Run.Fleet.Nodes,
		Pods:        r.Run.Fleet.Pods,
		Services:    r.Run.Fleet.Services,
		Complete:    r.Complete,
	}, nil
}

// InputWarnings lists what makes a document's figures less trustworthy:
// an incomplete run, run errors, failed measurements.
func InputWarnings(in Input) []string {
	r := in.Result
	var out []string
	if !r.Complete {
		out = append(out, fmt.Sprintf("%s: run %s is incomplete (it stopped early)", in.Name, r.Run.ID))
	}
	for _, e := range r.Errors {
		out = append(out, fmt.Sprintf("%s: run error: %s", in.Name, e))
	}
	for _, v := range r.Variants {
		tag := fmt.Sprintf("%s:%s#%d", in.Name, v.Variant, v.Repetition)
		if !v.Complete && r.Complete {
			out = append(out, tag+": incomplete")
		}
		for _, e := range v.Errors {
			out = append(out, fmt.Sprintf("%s: error: %s", tag, e))
		}
		for _, m := range v.Measurements {
			if m.Error != "" {
				out = append(out, fmt.Sprintf("%s: measurement %s failed: %s", tag, m.Name, m.Error))
			}
		}
	}
	return out
}
