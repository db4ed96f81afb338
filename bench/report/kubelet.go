package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/stormbench/stormbench/bench/compare"
	"github.com/stormbench/stormbench/bench/measure/clientlatency"
	"github.com/stormbench/stormbench/bench/result"
)

// KubeletTable compares the requests a restarted node's simulated kubelet
// sent, per restart, with the reference pattern of a real kubelet start
// (clientlatency.KubeletStartRequests).
type KubeletTable struct {
	// Variants are the columns.
	Variants []string
	// Rows are the reference rows, then requests the reference does not
	// list, then requests of other sources (the stormbench harness).
	Rows []KubeletRow
	// Restarts are the restarts each variant's counts are divided by.
	Restarts []int
}

// KubeletRow is one resource and verb set.
type KubeletRow struct {
	// Source is the client that sent the requests ("kubelet", "harness").
	Source string
	// Request names the resource and verbs: "pods/status PATCH".
	Request string
	// PerRestart is the count per restart, per variant; NaN-free: a request
	// not seen is 0.
	PerRestart []float64
	// Expected is the reference count per kubelet start ("" for requests
	// outside the reference).
	Expected string
	// Check is per variant: "ok", "above", "below", or "" when the reference
	// gives no bound.
	Check []string
}

// requestKey is one kind of request a source sent.
type requestKey struct{ source, resource, subresource, verb string }

// buildKubeletTable sums the clientLatency requests of every repetition of
// each variant and divides by the variant's restarts.
func buildKubeletTable(groups []compare.Group) (KubeletTable, bool) {
	t := KubeletTable{}
	counts := make([]map[requestKey]float64, len(groups))
	seenAny := false
	for gi, g := range groups {
		c, restarts, seen := countClientRequests(g)
		counts[gi], seenAny = c, seenAny || seen
		t.Variants, t.Restarts = append(t.Variants, g.Name), append(t.Restarts, restarts)
	}
	if !seenAny {
		return t, false
	}
	used := map[requestKey]bool{}
	for _, e := range clientlatency.KubeletStartRequests() {
		row := KubeletRow{Source: "kubelet", Request: requestName(e.Resource, e.Subresource, e.Verbs), Expected: e.Expected}
		seen := false
		for gi := range groups {
			n := 0.0
			for _, verb := range e.Verbs {
				k := requestKey{"kubelet", e.Resource, e.Subresource, verb}
				if c, ok := counts[gi][k]; ok {
					n += c
					seen = true
				}
				used[k] = true
			}
			pr := t.perRestart(gi, n)
			row.PerRestart = append(row.PerRestart, pr)
			row.Check = append(row.Check, check(pr, e.Min, e.Max))
		}
		// Rows for optional requests nobody sent would only be noise.
		if !seen && e.Min == 0 {
			continue
		}
		t.Rows = append(t.Rows, row)
	}
	t.Rows = append(t.Rows, t.extraRows(counts, used)...)
	return t, true
}

// countClientRequests sums the clientLatency requests of every repetition
// of g by key, and g's restarts; seen says whether any was recorded.
func countClientRequests(g compare.Group) (counts map[requestKey]float64, restarts int, seen bool) {
	counts = map[requestKey]float64{}
	for _, v := range g.VariantRuns() {
		restarts += v.Restarts
		m := v.Measurement(clientlatency.Name)
		if m == nil {
			continue
		}
		for _, x := range m.Values {
			if x.Name != clientlatency.Requests {
				continue
			}
			seen = true
			k := requestKey{x.Labels[result.LabelSource], x.Labels[result.LabelResource], x.Labels[result.LabelSubresource], x.Labels[result.LabelVerb]}
			counts[k] += x.Value
		}
	}
	return counts, restarts, seen
}

// perRestart is n over variant gi's restarts; 0 without restarts.
func (t *KubeletTable) perRestart(gi int, n float64) float64 {
	if t.Restarts[gi] == 0 {
		return 0
	}
	return n / float64(t.Restarts[gi])
}

// extraRows are the requests not in the reference pattern (not used):
// unlisted kubelet requests first, then other sources'.
func (t *KubeletTable) extraRows(counts []map[requestKey]float64, used map[requestKey]bool) []KubeletRow {
	var extra []requestKey
	for gi := range counts {
		for k := range counts[gi] {
			if !used[k] && !slices.Contains(extra, k) {
				extra = append(extra, k)
			}
		}
	}
	// "false" sorts before "true": the kubelet's first, each by name.
	key := func(k requestKey) string {
		return fmt.Sprint(k.source != "kubelet", " ", k.source+" "+k.resource+" "+k.subresource+" "+k.verb)
	}
	slices.SortFunc(extra, func(a, b requestKey) int { return strings.Compare(key(a), key(b)) })
	var rows []KubeletRow
	for _, k := range extra {
		row := KubeletRow{Source: k.source, Request: requestName(k.resource, k.subresource, []string{k.verb})}
		if k.source == "kubelet" {
			row.Expected = "not in the reference pattern"
		} else {
			row.Request = k.source + ": " + row.Request
			row.Expected = "not a kubelet request"
		}
		for gi := range counts {
			row.PerRestart = append(row.PerRestart, t.perRestart(gi, counts[gi][k]))
			row.Check = append(row.Check, "")
		}
		rows = append(rows, row)
	}
	return rows
}

func requestName(resource, subresource string, verbs []string) string {
	r := resource
	if subresource != "" {
		r += "/" + subresource
	}
	return r + " " + strings.Join(verbs, "+")
}

func check(x, lo, hi float64) string {
	switch {
	case hi < 0:
		return ""
	case x < lo-1e-9:
		return "below"
	case x > hi+1e-9:
		return "above"
	}
	return "ok"
}

// kubeletCell renders a per-restart count with its check.
func kubeletCell(x float64, chk string) string {
	s := fmt.Sprintf("%.1f", x)
	switch chk {
	case "above":
		s += " ▲"
	case "below":
		s += " ▼"
	case "ok":
		s += " ✓"
	}
	return s
}
