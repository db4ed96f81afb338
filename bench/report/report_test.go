package report

import (
	"bytes"
	"regexp"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/stormbench/stormbench/bench/compare"
	"github.com/stormbench/stormbench/bench/compare/resulttest"
	"github.com/stormbench/stormbench/bench/measure/apiserver"
	"github.com/stormbench/stormbench/bench/result"

	"github.com/stormbench/stormbench/bench/testutil"
)

func TestReportHTML(t *testing.T) {
	rep, err := Build(compare.Input{Name: "quick-ab.json", Result: readFixture(t)}, Options{Charts: true})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteHTML(&buf, rep); err != nil {
		t.Fatal(err)
	}
	doc := parseHTML(t, buf.Bytes())
	assertSelfContained(t, doc)

	var charts []Chart
	for _, s := range rep.Sections {
		charts = append(charts, s.Charts...)
	}
	// Per variant: request rate, p99 latency, in-flight; shared: not-ready
	// endpoints, slice writes; recovery: node, pod, service.
	wantIDs := []string{
		"request-rate-legacy", "request-rate-preserve", "latency-legacy", "latency-preserve",
		"inflight-legacy", "inflight-preserve", "not-ready-endpoints", "slice-writes",
		"recovery-node-ready", "recovery-pod-ready", "recovery-service-ready",
	}
	var gotIDs []string
	for _, c := range charts {
		gotIDs = append(gotIDs, c.ID)
	}
	if strings.Join(gotIDs, " ") != strings.Join(wantIDs, " ") {
		t.Errorf("charts %v, want %v", gotIDs, wantIDs)
	}
	figures := findAll(doc, "figure")
	svgs := findAll(doc, "svg")
	if len(figures) != len(charts) || len(svgs) != len(charts) {
		t.Fatalf("%d charts, %d <figure>, %d <svg>: want one inline SVG per chart", len(charts), len(figures), len(svgs))
	}
	for _, f := range figures {
		if n := len(findAll(f, "svg")); n != 1 {
			t.Errorf("figure %s holds %d <svg>, want 1", attr(f, "id"), n)
		}
		if len(findAll(f, "figcaption")) != 1 {
			t.Errorf("figure %s has no caption", attr(f, "id"))
		}
	}
	for _, s := range svgs {
		if attr(s, "viewbox") == "" {
			t.Error("an <svg> has no viewBox, so it cannot scale")
		}
		if len(findAll(s, "text")) == 0 {
			t.Error("an <svg> has no text: axes and titles missing")
		}
	}
	page := buf.String()
	for _, want := range []string{"Key metrics", "Not modelled", "Image-pull cancellation", "Device-plugin re-registration", "eviction", "pods/status PATCH", "sendInitialEvents"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

func TestReportMarkdownGolden(t *testing.T) {
	rep, err := Build(compare.Input{Name: "quick-ab.json", Result: readFixture(t)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Sections) != 0 {
		t.Error("charts rendered without Options.Charts")
	}
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, rep); err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, "report.md.golden", buf.Bytes())
}

func TestKubeletTable(t *testing.T) {
	rep, err := Build(compare.Input{Name: "quick-ab.json", Result: readFixture(t)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	kt := rep.Kubelet
	if strings.Join(kt.Variants, ",") != "legacy,preserve" || kt.Restarts[0] != 10 {
		t.Fatalf("variants %v restarts %v", kt.Variants, kt.Restarts)
	}
	rows := map[string]KubeletRow{}
	for _, r := range kt.Rows {
		rows[r.Request] = r
	}
	for _, tt := range []struct {
		request          string
		legacy, preserve float64
		check            string
	}{
		{"pods WATCH", 1, 1, "ok"},
		{"events POST", 6, 6, "ok"},
		{"pods/status PATCH", 19, 0, ""},
		{"csinodes GET+POST+PUT", 2, 1, "ok"},
		{"harness: nodes PATCH", 3, 3, ""},
	} {
		r, ok := rows[tt.request]
		if !ok {
			t.Errorf("no row %q", tt.request)
			continue
		}
		if r.PerRestart[0] != tt.legacy || r.PerRestart[1] != tt.preserve || r.Check[0] != tt.check {
			t.Errorf("%s: %v %v, want %v/%v %q", tt.request, r.PerRestart, r.Check, tt.legacy, tt.preserve, tt.check)
		}
	}
	if _, ok := rows["podcertificaterequests WATCH"]; ok {
		t.Error("an optional request nobody sent has a row")
	}
}

// TestReportBaseline puts the chosen baseline first everywhere.
func TestReportBaseline(t *testing.T) {
	rep, err := Build(compare.Input{Name: "quick-ab.json", Result: readFixture(t)}, Options{Baseline: "preserve"})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Comparison.Baseline != "preserve" || rep.Kubelet.Variants[0] != "preserve" {
		t.Errorf("baseline %s, kubelet columns %v", rep.Comparison.Baseline, rep.Kubelet.Variants)
	}
	if d := findRow(t, rep.Comparison, result.MetricSliceWrites).Cells[1].Delta; d == nil || d.Text != "up from 0" {
		t.Errorf("slice writes legacy vs preserve: %+v, want up from 0", d)
	}
	if _, err := Build(compare.Input{Name: "quick-ab.json", Result: readFixture(t)}, Options{Baseline: "nope"}); err == nil {
		t.Error("unknown baseline variant: no error")
	}
}

func TestWaveStarts(t *testing.T) {
	rep := readFixture(t)
	prof, err := compare.RecordedProfile(compare.Input{Name: "quick-ab.json", Result: rep})
	if err != nil {
		t.Fatal(err)
	}
	// quick: 10 restarts in waves of 50% every 5s: a second wave at 5s.
	if got := waveStarts(prof, &rep.Variants[0]); len(got) != 1 || got[0] != 5 {
		t.Errorf("waveStarts = %v, want [5]", got)
	}
	// A run records its schedule's waves: a sweep's storm is one wave,
	// whatever the profile's waves say.
	sweep := rep.Variants[0]
	sweep.WaveStarts = []float64{0}
	if got := waveStarts(prof, &sweep); len(got) != 0 {
		t.Errorf("waveStarts of a one-wave schedule = %v, want none", got)
	}
	sweep.WaveStarts = []float64{0, 7, 14}
	if got := waveStarts(prof, &sweep); !slices.Equal(got, []float64{7, 14}) {
		t.Errorf("waveStarts = %v, want the recorded [7 14]", got)
	}
}

func parseHTML(t *testing.T, b []byte) *html.Node {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func findAll(n *html.Node, tag string) []*html.Node {
	var out []*html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == tag {
			out = append(out, n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return out
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if strings.EqualFold(a.Key, key) {
			return a.Val
		}
	}
	return ""
}

var remoteURL = regexp.MustCompile(`(?i)^\s*(https?:)?//`)

// assertSelfContained checks that a page loads nothing: no script, no
// stylesheet link, no remote src or href, no url() or @import in styles.
func assertSelfContained(t *testing.T, doc *html.Node) {
	t.Helper()
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch n.Data {
			case "script", "link", "iframe", "object", "embed", "img":
				t.Errorf("page has a <%s> element", n.Data)
			}
			for _, a := range n.Attr {
				k := strings.ToLower(a.Key)
				if (k == "src" || k == "href" || strings.HasSuffix(k, ":href") || k == "srcset") && remoteURL.MatchString(a.Val) {
					t.Errorf("<%s %s=%q> loads from elsewhere", n.Data, a.Key, a.Val)
				}
				if k == "style" && (strings.Contains(a.Val, "url(") || strings.Contains(a.Val, "@import")) {
					t.Errorf("<%s style=%q> loads from elsewhere", n.Data, a.Val)
				}
			}
			if n.Data == "style" && n.FirstChild != nil && (strings.Contains(n.FirstChild.Data, "url(") || strings.Contains(n.FirstChild.Data, "@import")) {
				t.Error("a <style> loads from elsewhere")
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
}

// TestReportHTMLDeterministic: the same result gives the same page, so that
// committed example reports only change when the result does.
func TestReportHTMLDeterministic(t *testing.T) {
	var pages [2]bytes.Buffer
	for i := range pages {
		rep, err := Build(compare.Input{Name: "quick-ab.json", Result: readFixture(t)}, Options{Charts: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := WriteHTML(&pages[i], rep); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(pages[0].Bytes(), pages[1].Bytes()) {
		t.Error("two renderings of one result differ")
	}
}

// markdownOf renders r as the markdown report of quick-ab.json.
func markdownOf(t *testing.T, r *result.Result) string {
	t.Helper()
	rep, err := Build(compare.Input{Name: "quick-ab.json", Result: r}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, rep); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// A run with relaxed heartbeats says so in the report's run information.
func TestReportRelaxedHeartbeats(t *testing.T) {
	for _, factor := range []float64{1, 5} {
		r := readFixture(t)
		r.Run.Cluster.Settings.HeartbeatFactor = factor
		md := markdownOf(t, r)
		if got := strings.Contains(md, "relaxed heartbeats: heartbeatFactor 5"); got != (factor == 5) {
			t.Errorf("factor %g: report mentions relaxed heartbeats: %v", factor, got)
		}
	}
}

// TestReportVersions: an upgrade's comparison says which version made the
// fleet and which control planes the other variants' storms ran on, and
// names each variant's version; a run of one version says neither.
func TestReportVersions(t *testing.T) {
	r := readFixture(t)
	r.Run.Cluster.KubernetesVersion = "v1.36.3"
	md := markdownOf(t, r)
	if strings.Contains(md, "restored into the control plane") || strings.Contains(md, "Kubernetes v1.36.3:") {
		t.Errorf("a run of one version names versions:\n%s", md)
	}
	for i := range r.Variants {
		if r.Variants[i].Variant == "preserve" {
			r.Variants[i].KubernetesVersion = "v1.37.2"
		}
	}
	md = markdownOf(t, r)
	for _, want := range []string{
		"the fleet made on v1.36.3 and restored into the control plane of v1.37.2 before each of those variants' storms",
		"| legacy | Kubernetes v1.36.3: ", "| preserve | Kubernetes v1.37.2: ",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// The controller manager's node eviction rate shows in the run settings
// when the result knows it, and nothing is invented when it does not.
func TestReportEvictionRate(t *testing.T) {
	for _, tc := range []struct {
		flags map[string]map[string]string
		want  string
	}{
		{nil, ""},
		{map[string]map[string]string{"stormbench": {"merged-shards": "2"}}, ""},
		{map[string]map[string]string{"kube-controller-manager": {"node-eviction-rate": "0.1"}}, "node-eviction-rate 0.1 nodes/s"},
		{map[string]map[string]string{"kube-controller-manager": {"node-eviction-rate": "100"}}, "node-eviction-rate 100 nodes/s"},
	} {
		r := readFixture(t)
		r.Run.Cluster.Settings.Flags = tc.flags
		md := markdownOf(t, r)
		if tc.want == "" {
			if strings.Contains(md, "node-eviction-rate") {
				t.Errorf("flags %v: report names an eviction rate", tc.flags)
			}
		} else if !strings.Contains(md, tc.want) {
			t.Errorf("flags %v: report lacks %q", tc.flags, tc.want)
		}
	}
}

// TestReportFlows: a run with flow figures gets the by-flow table, its
// rows in cluster.Flows' order and the simulation's flows included; one
// without gets none.
func TestReportFlows(t *testing.T) {
	r := resulttest.Synthetic(t, "f", map[string][]float64{"legacy": {1, 2, 3, 4}, "preserve": {1, 2, 3, 4}}, "legacy", "preserve")
	for i := range r.Variants {
		v := &r.Variants[i]
		m := v.Measurement(apiserver.Name)
		scale := 1.0
		if v.Variant == "preserve" {
			scale = 0.5
		}
		for _, f := range []struct {
			flow string
			x    float64
		}{{"kwok", -20}, {"endpointslice-controller", 11}, {"kubelet", 80}} {
			m.Values = append(m.Values, result.Value{Name: apiserver.ExcessPerRestart, Window: result.WindowStorm, Unit: result.UnitRequests,
				Value: f.x*scale + float64(v.Repetition), Labels: map[string]string{result.LabelFlow: f.flow}})
		}
	}
	rep, err := Build(compare.Input{Name: "f.json", Result: r}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Flows == nil {
		t.Fatal("no flow table")
	}
	var ids []string
	for _, row := range rep.Flows.Rows {
		ids = append(ids, row.Metric.ID)
	}
	if got, want := strings.Join(ids, " "), "excess.kubelet excess.endpointslice-controller excess.kwok"; got != want {
		t.Errorf("flow rows %s, want %s", got, want)
	}
	var md strings.Builder
	if err := WriteMarkdown(&md, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "### API excess requests per restart, by flow") || !strings.Contains(md.String(), "| API excess requests per restart: kubelet | 81.5") {
		t.Errorf("markdown lacks the flow table:\n%s", md.String())
	}
	plain, err := Build(compare.Input{Name: "quick-ab.json", Result: readFixture(t)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if plain.Flows != nil {
		t.Errorf("a run without flow figures has a flow table: %+v", plain.Flows.Rows)
	}
}

// TestReportVaryingSeedsProfile: a result whose profile recorded
// repetitions as {count, seeds: vary} (profiles.Repetitions) is reported;
// reading it as a bare count refused every A/A result.
func TestReportVaryingSeedsProfile(t *testing.T) {
	r := resulttest.Synthetic(t, "v", map[string][]float64{"a": {1, 2}, "b": {1, 2}}, "a", "b")
	r.Run.Profile = []byte(`{"metadata":{"name":"aa"},"storm":{"kind":"kubelet"},"repetitions":{"count":2,"seeds":"vary"}}`)
	if _, err := Build(compare.Input{Name: "v.json", Result: r}, Options{}); err != nil {
		t.Fatal(err)
	}
}
