package result

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/util/validation/field"
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

// validateFigures checks what Validate's required-field checks do not: no
// negative count, no NaN or infinite figure, no end before its start, no
// duplicate (variant, repetition) run, and no time outside the run. It is
// part of Validate, so that stormbench neither reads nor writes such a
// document.
func validateFigures(r *Result) field.ErrorList {
	var errs field.ErrorList
	run := field.NewPath("run")
	lo, hi := runBounds(r)
	if !r.Run.End.IsZero() && r.Run.End.Before(r.Run.Start) {
		errs = append(errs, field.Invalid(run.Child("end"), r.Run.End.Format(time.RFC3339), "before run.start"))
	}
	fp := run.Child("fleet")
	for _, c := range []struct {
		name string
		v    int
	}{{"nodes", r.Run.Fleet.Nodes}, {"pods", r.Run.Fleet.Pods}, {"services", r.Run.Fleet.Services}} {
		if c.v < 0 {
			errs = append(errs, field.Invalid(fp.Child(c.name), c.v, "must not be negative"))
		}
	}
	errs = append(errs, finiteField(run.Child("cluster", "settings", "heartbeatFactor"), r.Run.Cluster.Settings.HeartbeatFactor)...)
	type runKey struct {
		variant    string
		repetition int
	}
	seen := map[runKey]int{}
	for i := range r.Variants {
		v := &r.Variants[i]
		vp := field.NewPath("variants").Index(i)
		k := runKey{v.Variant, v.Repetition}
		if j, ok := seen[k]; ok {
			errs = append(errs, field.Duplicate(vp, fmt.Sprintf("variant %q repetition %d, as variants[%d]", short(v.Variant), v.Repetition, j)))
		} else {
			seen[k] = i
		}
		if v.Restarts < 0 {
			errs = append(errs, field.Invalid(vp.Child("restarts"), v.Restarts, "must not be negative"))
		}
		errs = append(errs, nonNegative(vp.Child("resetSeconds"), v.ResetSeconds)...)
		if sw := v.Sweep; sw != nil {
			if sw.WaveSize < 1 {
				errs = append(errs, field.Invalid(vp.Child("sweep", "waveSize"), sw.WaveSize, "must be at least 1"))
			} else if want := SweepVariantName(sw.Variant, sw.WaveSize); v.Variant != want {
				errs = append(errs, field.Invalid(vp.Child("sweep"), short(v.Variant), fmt.Sprintf("a sweep step's variant is named %q", short(want))))
			}
		}
		for j, w := range v.WaveStarts {
			errs = append(errs, nonNegative(vp.Child("waveStarts").Index(j), w)...)
		}
		errs = append(errs, inRun(vp.Child("start"), v.Start, lo, hi)...)
		errs = append(errs, inRun(vp.Child("stormStart"), v.StormStart, lo, hi)...)
		errs = append(errs, inRun(vp.Child("end"), v.End, lo, hi)...)
		if !v.End.IsZero() && v.End.Before(v.Start) {
			errs = append(errs, field.Invalid(vp.Child("end"), v.End.Format(time.RFC3339), "before start"))
		}
		switch {
		case v.StormStart.IsZero() && (v.Complete || v.Restarts > 0):
			// Every storm window, excess and recovery time is counted
			// from it; only a run stopped before its storm has none.
			errs = append(errs, field.Required(vp.Child("stormStart"), "a storm that ran (complete, or with restarts) has a start"))
		case !v.StormStart.IsZero() && v.StormStart.Before(v.Start):
			errs = append(errs, field.Invalid(vp.Child("stormStart"), v.StormStart.Format(time.RFC3339), "before start"))
		}
		for j := range v.Measurements {
			errs = append(errs, validateMeasurementFigures(vp.Child("measurements").Index(j), &v.Measurements[j], lo, hi)...)
		}
	}
	return errs
}

func validateMeasurementFigures(p *field.Path, m *Measurement, lo, hi time.Time) field.ErrorList {
	var errs field.ErrorList
	for i, w := range m.Windows {
		wp := p.Child("windows").Index(i)
		errs = append(errs, inRun(wp.Child("start"), w.Start, lo, hi)...)
		errs = append(errs, inRun(wp.Child("end"), w.End, lo, hi)...)
	}
	for i := range m.Histograms {
		h := &m.Histograms[i]
		hp := p.Child("histograms").Index(i)
		sp := hp.Child("summary")
		if h.Summary.Count < 0 {
			errs = append(errs, field.Invalid(sp.Child("count"), h.Summary.Count, "must not be negative"))
		}
		s := h.Summary
		for _, q := range []struct {
			name string
			v    float64
		}{{"min", s.Min}, {"mean", s.Mean}, {"p50", s.P50}, {"p90", s.P90}, {"p99", s.P99}, {"p99.9", s.P999}, {"max", s.Max}} {
			errs = append(errs, nonNegative(sp.Child(q.name), q.v)...)
		}
		errs = append(errs, nonNegative(hp.Child("sum"), h.Sum)...)
		for j, b := range h.Buckets {
			errs = append(errs, nonNegative(hp.Child("buckets").Index(j).Child("count"), b.Count)...)
		}
	}
	for i := range m.Series {
		s := &m.Series[i]
		sp := p.Child("series").Index(i)
		errs = append(errs, inRun(sp.Child("start"), s.Start, lo, hi)...)
		if s.Start.IsZero() || len(s.Points) == 0 {
			continue
		}
		// Points are in time order (Validate), so the first and the last
		// bound them all.
		for _, j := range []int{0, len(s.Points) - 1} {
			t := s.Points[j].T
			if math.IsNaN(t) || math.IsInf(t, 0) {
				continue // reported by Validate
			}
			at := s.Start.Add(time.Duration(math.Max(math.Min(t, 1e9), -1e9) * float64(time.Second)))
			if at.Before(lo) || at.After(hi) {
				errs = append(errs, field.Invalid(sp.Child("points").Index(j), fmt.Sprintf("t=%gs", t),
					fmt.Sprintf("outside the run: t must be within [%.0f, %.0f] s of the series start", lo.Sub(s.Start).Seconds(), hi.Sub(s.Start).Seconds())))
			}
		}
	}
	return errs
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

func inRun(p *field.Path, t, lo, hi time.Time) field.ErrorList {
	if t.IsZero() || lo.IsZero() || (!t.Before(lo) && !t.After(hi)) {
		return nil
	}
	return field.ErrorList{field.Invalid(p, t.Format(time.RFC3339), "outside the run's start and end")}
}

func finiteField(p *field.Path, v float64) field.ErrorList {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return field.ErrorList{field.Invalid(p, fmt.Sprint(v), "must be finite")}
	}
	return nil
}

func nonNegative(p *field.Path, v float64) field.ErrorList {
	if errs := finiteField(p, v); errs != nil {
		return errs
	}
	if v < 0 {
		return field.ErrorList{field.Invalid(p, fmt.Sprintf("%g", v), "must not be negative")}
	}
	return nil
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
			*errs = append(*errs, field.Invalid(pathOrRoot(p), "null", "must be a "+kindName(t)))
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
			for k, fv := range x {
				walkNulls(p.Key(short(k)), fv, t.Elem(), errs)
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

func pathOrRoot(p *field.Path) *field.Path {
	if p == nil {
		return field.NewPath("(document)")
	}
	return p
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
