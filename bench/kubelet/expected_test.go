package kubelet_test

import (
	"fmt"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/stormbench/stormbench/bench/measure/clientlatency"
)

// TestKubeletStartRequestsShape checks the table's own consistency: every
// row names a resource and verbs, says what it expects, and has bounds that
// make sense; no request is counted by two rows (the report sums each
// request into one row).
func TestKubeletStartRequestsShape(t *testing.T) {
	seen := map[string]int{}
	for i, e := range clientlatency.KubeletStartRequests() {
		if e.Resource == "" || len(e.Verbs) == 0 || e.Expected == "" {
			t.Errorf("row %d %+v: resource, verbs and expectation are required", i, e)
		}
		if e.Min < 0 || (e.Max >= 0 && e.Max < e.Min) {
			t.Errorf("row %d %s: bounds [%v, %v] are not a range (max < 0 means unchecked)", i, requestKey(e.Resource, e.Subresource, ""), e.Min, e.Max)
		}
		for _, v := range e.Verbs {
			k := requestKey(e.Resource, e.Subresource, v)
			if j, dup := seen[k]; dup {
				t.Errorf("%s is in rows %d and %d", k, j, i)
			}
			seen[k] = i
		}
	}
	// The table is a fresh copy: a caller cannot change the next one.
	a := clientlatency.KubeletStartRequests()
	a[0].Verbs[0] = "CHANGED"
	if b := clientlatency.KubeletStartRequests(); b[0].Verbs[0] == "CHANGED" {
		t.Error("KubeletStartRequests shares its rows between calls")
	}
}

// TestKubeletStartRequestsClassify checks that every request the table
// lists is one the request classification can produce, spelled as it
// spells it: the clientLatency measurement labels the model's requests with
// clientlatency.ParseRequest, and the report finds a row's count only under
// those labels. The resource must be a type client-go knows.
func TestKubeletStartRequestsClassify(t *testing.T) {
	known := knownResources()
	for _, e := range clientlatency.KubeletStartRequests() {
		gv, ok := known[e.Resource]
		if !ok {
			t.Errorf("%s: no API type has the resource %q", e.Expected, e.Resource)
			continue
		}
		for _, verb := range e.Verbs {
			want := requestKey(e.Resource, e.Subresource, verb)
			req, err := requestFor(gv, e.Resource, e.Subresource, verb)
			if err != nil {
				t.Errorf("%s: %v", want, err)
				continue
			}
			info := clientlatency.ParseRequest(req)
			if got := requestKey(info.Resource, info.Subresource, info.Verb); got != want {
				t.Errorf("%s %s is classified as %s, want %s", req.Method, req.URL, got, want)
			}
		}
	}
}

// TestKubeletStartRequestsAgreeWithREQUESTS checks the table against the
// documented pattern in REQUESTS.md, both ways: a request the table expects
// at every start is documented, with a documented verb; every documented
// verb has a row; and a documented count per start lies within the row's
// bounds. Disagreements known when the table moved here are listed in
// knownDisagreements; the test fails when one of them is resolved (remove
// it) or a new one appears.
func TestKubeletStartRequestsAgreeWithREQUESTS(t *testing.T) {
	doc := readRequestsDoc(t)
	var got []string
	table := clientlatency.KubeletStartRequests()
	for _, e := range table {
		key := requestKey(e.Resource, e.Subresource, "")
		var rows []docRow
		for _, d := range doc {
			if slices.Contains(d.resources, key) {
				rows = append(rows, d)
			}
		}
		i := slices.IndexFunc(rows, func(d docRow) bool {
			return slices.ContainsFunc(e.Verbs, func(v string) bool { return slices.Contains(d.verbs, v) })
		})
		if i < 0 {
			if e.Min >= 1 {
				got = append(got, fmt.Sprintf("%s %s: expected at every start, not documented with that verb", key, strings.Join(e.Verbs, "+")))
			}
			continue
		}
		d := rows[i]
		if !d.counted {
			continue
		}
		if d.lo < e.Min || (e.Max >= 0 && d.hi > e.Max) {
			got = append(got, fmt.Sprintf("%s %s: documented %v–%v per start, table [%v, %v]", key, strings.Join(e.Verbs, "+"), d.lo, d.hi, e.Min, e.Max))
		}
	}
	for _, d := range doc {
		for _, r := range d.resources {
			for _, v := range d.verbs {
				if !slices.ContainsFunc(table, func(e clientlatency.ExpectedRequest) bool {
					return requestKey(e.Resource, e.Subresource, "") == r && slices.Contains(e.Verbs, v)
				}) {
					got = append(got, fmt.Sprintf("%s %s: documented, no row", r, v))
				}
			}
		}
	}
	for _, g := range got {
		if _, ok := knownDisagreements[g]; !ok {
			t.Errorf("the table disagrees with REQUESTS.md: %s", g)
		}
	}
	for k := range knownDisagreements {
		if !slices.Contains(got, k) {
			t.Errorf("known disagreement %q is resolved: remove it from knownDisagreements", k)
		}
	}
}

// knownDisagreements are where the table and REQUESTS.md may differ, each
// with its reason; none today (the resourceslices verb, DELETECOLLECTION,
// the measured event counts and the event PATCH row were fixed when the
// table moved here from bench/report).
var knownDisagreements = map[string]bool{}

// docRow is one row of REQUESTS.md's table.
type docRow struct {
	// resources are "resource" or "resource/subresource".
	resources []string
	// verbs are in apiserver_request_total's vocabulary (UPDATE is PUT).
	verbs []string
	// counted is true when the row documents a count per start, lo to hi.
	counted bool
	lo, hi  float64
}

var (
	verbWord   = regexp.MustCompile(`\b[A-Z]{3,}\b`)
	countRange = regexp.MustCompile(`^(\d+) \([^)]*\) to (\d+)\b`)
	countOne   = regexp.MustCompile(`^(\d+)(?: each)?(?: \(.*\))?$`)
)

// readRequestsDoc parses the table of REQUESTS.md.
func readRequestsDoc(t *testing.T) []docRow {
	t.Helper()
	b, err := os.ReadFile("REQUESTS.md")
	if err != nil {
		t.Fatal(err)
	}
	var rows []docRow
	header := true
	for line := range strings.Lines(string(b)) {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) != 4 {
			t.Fatalf("REQUESTS.md: a row of %d cells, want 4: %s", len(cells), line)
		}
		if header || strings.HasPrefix(cells[0], "---") {
			header = false
			continue
		}
		var d docRow
		for _, r := range strings.Split(cells[0], ",") {
			d.resources = append(d.resources, strings.TrimSpace(r))
		}
		for _, w := range verbWord.FindAllString(cells[1], -1) {
			if w == "UPDATE" {
				w = "PUT"
			}
			if slices.Contains(verbs, w) && !slices.Contains(d.verbs, w) {
				d.verbs = append(d.verbs, w)
			}
		}
		if len(d.verbs) == 0 {
			t.Fatalf("REQUESTS.md: no verb in %q", cells[1])
		}
		count := strings.TrimSpace(cells[3])
		if m := countRange.FindStringSubmatch(count); m != nil {
			d.counted, d.lo, d.hi = true, atof(t, m[1]), atof(t, m[2])
		} else if m := countOne.FindStringSubmatch(count); m != nil {
			d.counted, d.lo = true, atof(t, m[1])
			d.hi = d.lo
		}
		rows = append(rows, d)
	}
	if len(rows) == 0 {
		t.Fatal("REQUESTS.md: no table")
	}
	return rows
}

func atof(t *testing.T, s string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// verbs is the vocabulary of apiserver_request_total, which
// clientlatency.ParseRequest uses.
var verbs = []string{"GET", "LIST", "WATCH", "POST", "PUT", "PATCH", "APPLY", "DELETE", "DELETECOLLECTION", "CONNECT"}

func requestKey(resource, subresource, verb string) string {
	k := resource
	if subresource != "" {
		k += "/" + subresource
	}
	if verb != "" {
		k += " " + verb
	}
	return k
}

// knownResources maps the plural resource of every type client-go's scheme
// registers to its group and version.
func knownResources() map[string]schema.GroupVersion {
	out := map[string]schema.GroupVersion{}
	for gvk := range scheme.Scheme.AllKnownTypes() {
		if strings.HasSuffix(gvk.Kind, "List") || gvk.Version == "__internal" {
			continue
		}
		plural, _ := meta.UnsafeGuessKindToResource(gvk)
		if _, ok := out[plural.Resource]; !ok || gvk.Version == "v1" {
			out[plural.Resource] = gvk.GroupVersion()
		}
	}
	return out
}

// requestFor builds the HTTP request a client sends for the verb: on the
// collection for WATCH, LIST, DELETECOLLECTION and a POST without
// subresource, on a named object otherwise.
func requestFor(gv schema.GroupVersion, resource, subresource, verb string) (*http.Request, error) {
	base := "/api/" + gv.Version
	if gv.Group != "" {
		base = "/apis/" + gv.Group + "/" + gv.Version
	}
	collection := base + "/" + resource
	object := collection + "/x"
	if subresource != "" {
		object += "/" + subresource
	}
	route, ok := map[string]struct {
		method     string
		collection bool
	}{
		"WATCH": {http.MethodGet, true}, "LIST": {http.MethodGet, true}, "GET": {http.MethodGet, false},
		"POST": {http.MethodPost, subresource == ""}, "PUT": {http.MethodPut, false}, "PATCH": {http.MethodPatch, false},
		"APPLY": {http.MethodPatch, false}, "DELETE": {http.MethodDelete, false}, "DELETECOLLECTION": {http.MethodDelete, true},
	}[verb]
	if !ok {
		return nil, fmt.Errorf("verb %q is not in the vocabulary of apiserver_request_total (%s)", verb, strings.Join(verbs, ", "))
	}
	method, path, header := route.method, object, http.Header{}
	if route.collection {
		path = collection
	}
	switch verb {
	case "WATCH":
		path += "?watch=true"
	case "APPLY":
		header.Set("Content-Type", "application/apply-patch+yaml")
	}
	if (verb == "WATCH" || verb == "LIST" || verb == "DELETECOLLECTION") && subresource != "" {
		return nil, fmt.Errorf("%s of a subresource", verb)
	}
	req, err := http.NewRequest(method, "https://apiserver"+path, nil)
	if err != nil {
		return nil, err
	}
	req.Header = header
	return req, nil
}
