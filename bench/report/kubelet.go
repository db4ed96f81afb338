package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/stormbench/stormbench/bench/compare"
	"github.com/stormbench/stormbench/bench/kubelet"
	"github.com/stormbench/stormbench/bench/measure"
	"github.com/stormbench/stormbench/bench/result"
)

// KubeletTable compares the requests a restarted node's simulated kubelet
// sent, per restart, with the reference pattern of a real kubelet start
// (kubelet.ExpectedStartRequests).
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

// buildKubeletTable sums the clientLatency requests of every repetition of
// each variant and divides by the variant's restarts.
func buildKubeletTable(groups []compare.Group) (KubeletTable, bool) {
	type key struct{ source, resource, subresource, verb string }
	t := KubeletTable{}
	counts := make([]map[key]float64, len(groups))
	seenAny := false
	for gi, g := range groups {
		t.Variants = append(t.Variants, g.Name)
		counts[gi] = map[key]float64{}
		restarts := 0
		for _, v := range g.VariantRuns() {
			restarts += v.Restarts
			m := v.Measurement(measure.MeasurementClientLatency)
			if m == nil {
				continue
			}
			for _, x := range m.Values {
				if x.Name != measure.ClientRequests {
					continue
				}
				seenAny = true
				k := key{x.Labels[result.LabelSource], x.Labels[result.LabelResource], x.Labels[result.LabelSubresource], x.Labels[result.LabelVerb]}
				counts[gi][k] += x.Value
			}
		}
		t.Restarts = append(t.Restarts, restarts)
	}
	if !seenAny {
		return t, false
	}
	perRestart := func(gi int, n float64) float64 {
		if t.Restarts[gi] == 0 {
			return 0
		}
		return n / float64(t.Restarts[gi])
	}
	used := map[key]bool{}
	for _, e := range kubelet.ExpectedStartRequests() {
		row := KubeletRow{Source: "kubelet", Request: requestName(e.Resource, e.Subresource, e.Verbs), Expected: e.Expected}
		seen := false
		for gi := range groups {
			n := 0.0
			for _, verb := range e.Verbs {
				k := key{"kubelet", e.Resource, e.Subresource, verb}
				if c, ok := counts[gi][k]; ok {
					n += c
					seen = true
				}
				used[k] = true
			}
			pr := perRestart(gi, n)
			row.PerRestart = append(row.PerRestart, pr)
			row.Check = append(row.Check, check(pr, e.Min, e.Max))
		}
		// Rows for optional requests nobody sent would only be noise.
		if !seen && e.Min == 0 {
			continue
		}
		t.Rows = append(t.Rows, row)
	}
	var extra []key
	for gi := range groups {
		for k := range counts[gi] {
			if !used[k] && !slices.Contains(extra, k) {
				extra = append(extra, k)
			}
		}
	}
	// Unlisted kubelet requests first, then other sources.
	slices.SortFunc(extra, func(a, b key) int {
		ak, bk := a.source != "kubelet", b.source != "kubelet"
		if ak != bk {
			if ak {
				return 1
			}
			return -1
		}
		return strings.Compare(a.source+" "+a.resource+" "+a.subresource+" "+a.verb, b.source+" "+b.resource+" "+b.subresource+" "+b.verb)
	})
	for _, k := range extra {
		row := KubeletRow{Source: k.source, Request: requestName(k.resource, k.subresource, []string{k.verb})}
		if k.source == "kubelet" {
			row.Expected = "not in the reference pattern"
		} else {
			row.Request = k.source + ": " + row.Request
			row.Expected = "not a kubelet request"
		}
		for gi := range groups {
			row.PerRestart = append(row.PerRestart, perRestart(gi, counts[gi][k]))
			row.Check = append(row.Check, "")
		}
		t.Rows = append(t.Rows, row)
	}
	return t, true
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
