package result

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/stormbench/stormbench/bench/kubeversion"
)

// Bounds of the figures and times a result may hold. A file outside them is
// corrupt or hand-made: compare, gate, report, merge and export must not
// read it as figures (a p99 of -1e308 s passing an SLO as 0 s).
const (
	// timeSlack is how far a time may lie outside the run's [start, end]:
	// the clocks of the harness and the scrapes are not one.
	timeSlack = 10 * time.Minute
	// maxOpenRun bounds the times of a run that has not recorded its end.
	maxOpenRun = 30 * 24 * time.Hour
	// maxErrorsShown and maxErrorLen keep a validation message short
	// whatever the input: the first few problems, each cut short.
	maxErrorsShown = 3
	maxErrorLen    = 150
)

// Validate checks that r has every required field, that its histograms
// decode, and that its figures and times are possible: no negative count,
// no NaN or infinite figure, no end before its start, no duplicate
// (variant, repetition) run, and no time outside the run. It is the one
// check of every command that reads a result (ReadFile, Decode) and of
// every write (Encode). Its error names the first problems, each with its
// field path, in a few hundred characters whatever the input: the missing
// and malformed fields first, then the impossible figures.
func Validate(r *Result) error {
	x := validator{seen: map[runKey]int{}}
	x.lo, x.hi = runBounds(r)
	run := field.NewPath("run")
	for _, c := range []struct {
		name    string
		missing bool
	}{{"id", r.Run.ID == ""}, {"toolVersion", r.Run.ToolVersion == ""}, {"start", r.Run.Start.IsZero()}} {
		if c.missing {
			x.req = append(x.req, field.Required(run.Child(c.name), ""))
		}
	}
	if r.Complete && r.Run.End.IsZero() {
		x.req = append(x.req, field.Required(run.Child("end"), "a complete run has an end time"))
	}
	if len(r.Run.Profile) > 0 && !json.Valid(r.Run.Profile) {
		x.req = append(x.req, field.Invalid(run.Child("profile"), "", "not valid JSON"))
	}
	if sh := r.Run.Shard; sh != nil && (sh.Count < 1 || sh.Index < 0 || sh.Index >= sh.Count) {
		x.req = append(x.req, field.Invalid(run.Child("shard"), sh.String(), "a shard i/n has 0 <= i < n"))
	}
	if !r.Run.End.IsZero() && r.Run.End.Before(r.Run.Start) {
		x.fig = append(x.fig, field.Invalid(run.Child("end"), r.Run.End.Format(time.RFC3339), "before run.start"))
	}
	fp := run.Child("fleet")
	for _, c := range []struct {
		name string
		v    int
	}{{"nodes", r.Run.Fleet.Nodes}, {"pods", r.Run.Fleet.Pods}, {"services", r.Run.Fleet.Services}} {
		x.nonNegativeInt(fp.Child(c.name), c.v)
	}
	if h := r.Run.Cluster.Settings.HeartbeatFactor; math.IsNaN(h) || math.IsInf(h, 0) {
		x.fig = append(x.fig, field.Invalid(run.Child("cluster", "settings", "heartbeatFactor"), fmt.Sprint(h), "must be finite"))
	}
	for i := range r.Variants {
		x.variant(i, &r.Variants[i])
	}
	if errs := append(x.req, x.fig...); len(errs) > 0 {
		return validationError(errs)
	}
	return nil
}

// validator gathers Validate's problems in one walk of the document: req
// the missing and malformed fields, fig the impossible figures and times
// (reported after req), with lo and hi the run's bounds (runBounds).
type validator struct {
	req, fig field.ErrorList
	lo, hi   time.Time
	seen     map[runKey]int
}

type runKey struct {
	variant    string
	repetition int
}

func (x *validator) variant(i int, v *VariantRun) {
	p := field.NewPath("variants").Index(i)
	if v.Variant == "" {
		x.req = append(x.req, field.Required(p.Child("variant"), ""))
	} else if err := checkRunName(v); err != nil {
		x.req = append(x.req, field.Invalid(p.Child("variant"), short(v.Variant), err.Error()))
	}
	if v.Repetition < 0 {
		x.req = append(x.req, field.Invalid(p.Child("repetition"), v.Repetition, "must be at least 0"))
	}
	if v.Start.IsZero() {
		x.req = append(x.req, field.Required(p.Child("start"), ""))
	}
	if v.KubernetesVersion != "" {
		if _, err := kubeversion.Parse(v.KubernetesVersion); err != nil {
			x.req = append(x.req, field.Invalid(p.Child("kubernetesVersion"), short(v.KubernetesVersion), err.Error()))
		}
	}
	k := runKey{v.Variant, v.Repetition}
	if j, ok := x.seen[k]; ok {
		x.fig = append(x.fig, field.Duplicate(p, fmt.Sprintf("variant %q repetition %d, as variants[%d]", short(v.Variant), v.Repetition, j)))
	} else {
		x.seen[k] = i
	}
	x.nonNegativeInt(p.Child("restarts"), v.Restarts)
	x.nonNegative(p.Child("resetSeconds"), v.ResetSeconds)
	if sw := v.Sweep; sw != nil {
		if sw.WaveSize < 1 {
			x.fig = append(x.fig, field.Invalid(p.Child("sweep", "waveSize"), sw.WaveSize, "must be at least 1"))
		} else if want := SweepVariantName(sw.Variant, sw.WaveSize); v.Variant != want {
			x.fig = append(x.fig, field.Invalid(p.Child("sweep"), short(v.Variant), fmt.Sprintf("a sweep step's variant is named %q", short(want))))
		}
	}
	for j, w := range v.WaveStarts {
		x.nonNegative(p.Child("waveStarts").Index(j), w)
	}
	x.inRun(p.Child("start"), v.Start)
	x.inRun(p.Child("stormStart"), v.StormStart)
	x.inRun(p.Child("end"), v.End)
	if !v.End.IsZero() && v.End.Before(v.Start) {
		x.fig = append(x.fig, field.Invalid(p.Child("end"), v.End.Format(time.RFC3339), "before start"))
	}
	switch {
	case v.StormStart.IsZero() && (v.Complete || v.Restarts > 0):
		// Every storm window, excess and recovery time is counted
		// from it; only a run stopped before its storm has none.
		x.fig = append(x.fig, field.Required(p.Child("stormStart"), "a storm that ran (complete, or with restarts) has a start"))
	case !v.StormStart.IsZero() && v.StormStart.Before(v.Start):
		x.fig = append(x.fig, field.Invalid(p.Child("stormStart"), v.StormStart.Format(time.RFC3339), "before start"))
	}
	names := map[string]bool{}
	for j := range v.Measurements {
		m := &v.Measurements[j]
		mp := p.Child("measurements").Index(j)
		if m.Name == "" {
			x.req = append(x.req, field.Required(mp.Child("name"), ""))
		} else if names[m.Name] {
			x.req = append(x.req, field.Duplicate(mp.Child("name"), m.Name))
		}
		names[m.Name] = true
		x.measurement(mp, m)
	}
}

func (x *validator) measurement(p *field.Path, m *Measurement) {
	for i, w := range m.Windows {
		wp := p.Child("windows").Index(i)
		if w.Name == "" {
			x.req = append(x.req, field.Required(wp.Child("name"), ""))
		}
		if w.End.Before(w.Start) {
			x.req = append(x.req, field.Invalid(wp.Child("end"), w.End, "before start"))
		}
		x.inRun(wp.Child("start"), w.Start)
		x.inRun(wp.Child("end"), w.End)
	}
	for i, v := range m.Values {
		vp := p.Child("values").Index(i)
		x.nameUnit(vp, v.Name, v.Unit)
		switch {
		case math.IsNaN(v.Value) || math.IsInf(v.Value, 0):
			x.req = append(x.req, field.Invalid(vp.Child("value"), v.Value, "must be finite"))
		case v.Value < 0 && !mayBeNegative(v.Name):
			x.req = append(x.req, field.Invalid(vp.Child("value"), v.Value, "cannot be negative"))
		}
	}
	for i := range m.Histograms {
		x.histogram(p.Child("histograms").Index(i), &m.Histograms[i])
	}
	for i := range m.Series {
		x.series(p.Child("series").Index(i), &m.Series[i])
	}
}

func (x *validator) series(p *field.Path, s *Series) {
	x.nameUnit(p, s.Name, s.Unit)
	if !slices.IsSortedFunc(s.Points, func(a, b Point) int { return cmp.Compare(a.T, b.T) }) {
		x.req = append(x.req, field.Invalid(p.Child("points"), len(s.Points), "not in time order"))
	}
	for j, pt := range s.Points {
		if math.IsNaN(pt.V) || math.IsInf(pt.V, 0) || math.IsNaN(pt.T) || math.IsInf(pt.T, 0) {
			x.req = append(x.req, field.Invalid(p.Child("points").Index(j), pt.V, "must be finite"))
			break
		}
		if pt.V < 0 && !mayBeNegative(s.Name) {
			x.req = append(x.req, field.Invalid(p.Child("points").Index(j), pt.V, "cannot be negative"))
			break
		}
	}
	x.inRun(p.Child("start"), s.Start)
	if s.Start.IsZero() || len(s.Points) == 0 {
		return
	}
	// Points are in time order (checked above), so the first and the last
	// bound them all.
	for _, j := range []int{0, len(s.Points) - 1} {
		t := s.Points[j].T
		if math.IsNaN(t) || math.IsInf(t, 0) {
			continue // reported above
		}
		at := s.Start.Add(time.Duration(math.Max(math.Min(t, 1e9), -1e9) * float64(time.Second)))
		if at.Before(x.lo) || at.After(x.hi) {
			x.fig = append(x.fig, field.Invalid(p.Child("points").Index(j), fmt.Sprintf("t=%gs", t),
				fmt.Sprintf("outside the run: t must be within [%.0f, %.0f] s of the series start", x.lo.Sub(s.Start).Seconds(), x.hi.Sub(s.Start).Seconds())))
		}
	}
}

func (x *validator) histogram(p *field.Path, h *Histogram) {
	x.nameUnit(p, h.Name, h.Unit)
	if h.HDR != "" && len(h.Buckets) > 0 {
		x.req = append(x.req, field.Forbidden(p.Child("buckets"), "a histogram is either hdr or buckets"))
	}
	if h.HDRUnit != "" && h.HDRUnit != UnitMicroseconds {
		x.req = append(x.req, field.NotSupported(p.Child("hdrUnit"), short(h.HDRUnit), []string{UnitMicroseconds}))
	}
	if h.HDR != "" {
		if h.HDRUnit == "" {
			x.req = append(x.req, field.Required(p.Child("hdrUnit"), "hdr is set"))
		}
		d, err := DecodeHDR(h.HDR)
		if err != nil {
			x.req = append(x.req, field.Invalid(p.Child("hdr"), "<encoded>", err.Error()))
		} else if d.TotalCount() != h.Summary.Count {
			x.req = append(x.req, field.Invalid(p.Child("summary", "count"), h.Summary.Count,
				fmt.Sprintf("does not match the encoded histogram's count %d", d.TotalCount())))
		}
	}
	prevLE, prevCount := math.Inf(-1), 0.0
	for i, b := range h.Buckets {
		bp := p.Child("buckets").Index(i)
		le, err := strconv.ParseFloat(b.LE, 64)
		if err != nil {
			x.req = append(x.req, field.Invalid(bp.Child("le"), b.LE, "not a number"))
			continue
		}
		if le <= prevLE {
			x.req = append(x.req, field.Invalid(bp.Child("le"), b.LE, "bounds must ascend"))
		}
		if b.Count < prevCount {
			x.req = append(x.req, field.Invalid(bp.Child("count"), b.Count, "cumulative counts must not decrease"))
		}
		prevLE, prevCount = le, b.Count
	}
	if len(h.Buckets) > 0 && !math.IsInf(prevLE, 1) {
		x.req = append(x.req, field.Invalid(p.Child("buckets"), len(h.Buckets), "the last bucket must be le=+Inf"))
	}
	sp, s := p.Child("summary"), h.Summary
	x.nonNegativeInt(sp.Child("count"), int(s.Count))
	for _, q := range []struct {
		name string
		v    float64
	}{{"min", s.Min}, {"mean", s.Mean}, {"p50", s.P50}, {"p90", s.P90}, {"p99", s.P99}, {"p99.9", s.P999}, {"max", s.Max}} {
		x.nonNegative(sp.Child(q.name), q.v)
	}
	x.nonNegative(p.Child("sum"), h.Sum)
	for j, b := range h.Buckets {
		x.nonNegative(p.Child("buckets").Index(j).Child("count"), b.Count)
	}
}

// mayBeNegative says a figure is a difference that can go below zero: an
// excess over the baseline, a growth, or a marginal cost. Counts, rates,
// durations, sizes and ratios cannot.
func mayBeNegative(name string) bool {
	n := strings.ToLower(name)
	// A marginal cost is a storm's cost less the standing rate over its
	// window: a storm cheaper than the steady fleet's noise is below 0.
	return strings.Contains(n, "excess") || strings.Contains(n, "growth") || strings.Contains(n, "marginal")
}

// nameUnit reports a figure's missing name and unit.
func (x *validator) nameUnit(p *field.Path, name, unit string) {
	if name == "" {
		x.req = append(x.req, field.Required(p.Child("name"), ""))
	}
	if unit == "" {
		x.req = append(x.req, field.Required(p.Child("unit"), ""))
	}
}

// runBounds is the window every time of r must lie in: the run's start to
// its end, or, for a run still going or stopped before it recorded its end
// (whose last variant may have no end either), a month, widened by
// timeSlack.
func runBounds(r *Result) (lo, hi time.Time) {
	lo, hi = r.Run.Start, r.Run.End
	if hi.IsZero() || hi.Before(lo) {
		hi = lo.Add(maxOpenRun)
	}
	return lo.Add(-timeSlack), hi.Add(timeSlack)
}

func (x *validator) inRun(p *field.Path, t time.Time) {
	if !t.IsZero() && !x.lo.IsZero() && (t.Before(x.lo) || t.After(x.hi)) {
		x.fig = append(x.fig, field.Invalid(p, t.Format(time.RFC3339), "outside the run's start and end"))
	}
}

func (x *validator) nonNegativeInt(p *field.Path, v int) {
	if v < 0 {
		x.fig = append(x.fig, field.Invalid(p, v, "must not be negative"))
	}
}

func (x *validator) nonNegative(p *field.Path, v float64) {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		x.fig = append(x.fig, field.Invalid(p, fmt.Sprint(v), "must be finite"))
	case v < 0:
		x.fig = append(x.fig, field.Invalid(p, fmt.Sprintf("%g", v), "must not be negative"))
	}
}

// validationError is Validate's error: the first few problems, each cut
// short, and how many more there are.
func validationError(errs field.ErrorList) error {
	var b strings.Builder
	b.WriteString("invalid result document: ")
	for i, e := range errs {
		if i == maxErrorsShown {
			fmt.Fprintf(&b, "; and %d more", len(errs)-i)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(short(e.Error()))
	}
	return fmt.Errorf("%s", b.String())
}

// short cuts s to maxErrorLen characters.
func short(s string) string {
	if len(s) <= maxErrorLen {
		return s
	}
	cut := maxErrorLen
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// checkNulls rejects a null where the document's type holds a number, a
// string, a bool or a time: encoding/json would leave the zero value there,
// so that `"value": null` would read as 0. A null list or map is an empty
// one and is accepted; the recorded profile is opaque and not looked into.
func checkNulls(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil // the strict decode reports it
	}
	var errs field.ErrorList
	walkNulls(nil, doc, reflect.TypeOf(Result{}), &errs)
	if len(errs) > 0 {
		return validationError(errs)
	}
	return nil
}

var (
	rawMessageType = reflect.TypeOf(json.RawMessage{})
	pointType      = reflect.TypeOf(Point{})
)

func walkNulls(p *field.Path, v any, t reflect.Type, errs *field.ErrorList) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == rawMessageType {
		return
	}
	if v == nil {
		switch t.Kind() {
		case reflect.Slice, reflect.Map, reflect.Interface:
		default:
			*errs = append(*errs, field.Invalid(cmp.Or(p, field.NewPath("(document)")), "null", "must be a "+kindName(t)))
		}
		return
	}
	switch x := v.(type) {
	case map[string]any:
		switch t.Kind() {
		case reflect.Struct:
			for i := range t.NumField() {
				f := t.Field(i)
				name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
				if name == "" || name == "-" {
					continue
				}
				if fv, ok := x[name]; ok {
					walkNulls(p.Child(name), fv, f.Type, errs)
				}
			}
		case reflect.Map:
			for _, k := range slices.Sorted(maps.Keys(x)) { // errors in one order, not the map's
				walkNulls(p.Key(short(k)), x[k], t.Elem(), errs)
			}
		}
	case []any:
		switch {
		case t == pointType:
			for i, e := range x {
				if e == nil {
					*errs = append(*errs, field.Invalid(p.Index(i), "null", "must be a number"))
				}
			}
		case t.Kind() == reflect.Slice:
			for i, e := range x {
				walkNulls(p.Index(i), e, t.Elem(), errs)
			}
		}
	}
}

func kindName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Float32, reflect.Float64, reflect.Int, reflect.Int64, reflect.Int32:
		return "number"
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	}
	if t == reflect.TypeOf(time.Time{}) {
		return "time"
	}
	return "value"
}
