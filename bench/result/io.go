package result

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/stormbench/stormbench/bench/decodeerror"
	"github.com/stormbench/stormbench/bench/kubeversion"
	"github.com/stormbench/stormbench/bench/outfile"
)

// WriteOptions tune WriteFile.
type WriteOptions struct {
	// Force replaces an existing file. Without it WriteFile refuses to
	// overwrite, so that a result is never lost to a typo. A run that
	// rewrites its own file after every variant passes Force on the
	// rewrites.
	Force bool
	// MakeDirs creates the file's missing directories.
	MakeDirs bool
	// Stdout receives the result for the path "-" (and /dev/stdout).
	Stdout io.Writer
}

// Encode writes r in the current schema (SchemaVersion): compact JSON laid
// out for diffs, labelled series sparse (see writeCompact and sparsify). It
// sets r.SchemaVersion if it is zero, and fails on a document Validate
// rejects, so that stormbench never writes a file it cannot read back.
func Encode(w io.Writer, r *Result) error {
	if r.SchemaVersion == 0 {
		r.SchemaVersion = SchemaVersion
	}
	if err := Validate(r); err != nil {
		return err
	}
	return encodeTo(w, r)
}

// WriteFile writes r to path by the rules of bench/outfile: a regular file
// atomically (a temporary file renamed into place), so that a reader or a
// crash never sees half a document; a device or FIFO written into, never
// replaced. Unless opts.Force is set it refuses to replace an existing
// file; the error then wraps os.ErrExist. The check and the rename are not
// one atomic step: two writers racing for the same new path can still both
// succeed, the last one winning.
func WriteFile(path string, r *Result, opts WriteOptions) error {
	o := outfile.Options{Force: opts.Force, MakeDirs: opts.MakeDirs, Stdout: opts.Stdout}
	if _, err := outfile.Resolve(path, o); err != nil {
		return fmt.Errorf("writing result: %w", err)
	}
	var buf bytes.Buffer
	if err := Encode(&buf, r); err != nil {
		return fmt.Errorf("writing result %s: %w", path, err)
	}
	if err := outfile.Write(path, buf.Bytes(), o); err != nil {
		return fmt.Errorf("writing result: %w", err)
	}
	return nil
}

// ReadFile reads and validates a result document.
func ReadFile(path string) (*Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading result: %w", err)
	}
	defer f.Close()
	r, err := Decode(f)
	if err != nil {
		return nil, fmt.Errorf("reading result %s: %w", path, err)
	}
	return r, nil
}

// Decode reads and validates a result document. It rejects a document of
// another schema version before looking at anything else, then decodes
// strictly (an unknown field is an error) and validates required fields,
// reporting every problem with its field path.
func Decode(rd io.Reader) (*Result, error) {
	data, err := io.ReadAll(rd)
	if err != nil {
		return nil, fmt.Errorf("reading result: %w", err)
	}
	var probe struct {
		SchemaVersion *int `json:"schemaVersion"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, fmt.Errorf("decoding result: %w", explainDecodeError(data, err))
	}
	switch {
	case probe.SchemaVersion == nil:
		return nil, errors.New("decoding result: schemaVersion: Required value: not a stormbench result document")
	case *probe.SchemaVersion < minSchemaVersion || *probe.SchemaVersion > SchemaVersion:
		return nil, fmt.Errorf("decoding result: schemaVersion: Unsupported value: %d: this stormbench reads schema versions %d to %d", *probe.SchemaVersion, minSchemaVersion, SchemaVersion)
	}
	if err := checkNulls(data); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var r Result
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("decoding result: %w", explainDecodeError(data, err))
	}
	if err := cmp.Or(densify(&r), upgradeMergeMarker(&r, *probe.SchemaVersion)); err != nil {
		return nil, fmt.Errorf("decoding result: %w", err)
	}
	renameFigures(&r, *probe.SchemaVersion)
	// In memory a result is of the current schema, whatever the file's.
	r.SchemaVersion = SchemaVersion
	if err := Validate(&r); err != nil {
		return nil, err
	}
	return &r, nil
}

// explainDecodeError words err, the error of decoding data as a result
// document, with the field path of the first value that does not fit
// (see package decodeerror).
func explainDecodeError(data []byte, err error) error {
	return decodeerror.Explain(data, reflect.TypeFor[Result](), err, decodeerror.Expected{
		reflect.TypeFor[Point](): "a point [t, v] of two numbers",
	})
}

// Validate checks that r has every required field, that its histograms
// decode, and that its figures and times are possible (validateFigures).
// It is the one check of every command that reads a result (ReadFile,
// Decode) and of every write (Encode). Its error names the first problems,
// each with its field path, in a few hundred characters whatever the input.
func Validate(r *Result) error {
	var errs field.ErrorList
	if r.SchemaVersion != SchemaVersion {
		errs = append(errs, field.Invalid(field.NewPath("schemaVersion"), r.SchemaVersion, fmt.Sprintf("this stormbench reads schema version %d", SchemaVersion)))
	}
	run := field.NewPath("run")
	if r.Run.ID == "" {
		errs = append(errs, field.Required(run.Child("id"), ""))
	}
	if r.Run.ToolVersion == "" {
		errs = append(errs, field.Required(run.Child("toolVersion"), ""))
	}
	if r.Run.Start.IsZero() {
		errs = append(errs, field.Required(run.Child("start"), ""))
	}
	if r.Complete && r.Run.End.IsZero() {
		errs = append(errs, field.Required(run.Child("end"), "a complete run has an end time"))
	}
	if len(r.Run.Profile) > 0 && !json.Valid(r.Run.Profile) {
		errs = append(errs, field.Invalid(run.Child("profile"), "", "not valid JSON"))
	}
	if sh := r.Run.Shard; sh != nil && (sh.Count < 1 || sh.Index < 0 || sh.Index >= sh.Count) {
		errs = append(errs, field.Invalid(run.Child("shard"), sh.String(), "a shard i/n has 0 <= i < n"))
	}
	for i := range r.Variants {
		errs = append(errs, validateVariant(field.NewPath("variants").Index(i), &r.Variants[i])...)
	}
	errs = append(errs, validateFigures(r)...)
	if len(errs) > 0 {
		return validationError(errs)
	}
	return nil
}

func validateVariant(p *field.Path, v *VariantRun) field.ErrorList {
	var errs field.ErrorList
	if v.Variant == "" {
		errs = append(errs, field.Required(p.Child("variant"), ""))
	} else if err := checkRunName(v); err != nil {
		errs = append(errs, field.Invalid(p.Child("variant"), short(v.Variant), err.Error()))
	}
	if v.Repetition < 0 {
		errs = append(errs, field.Invalid(p.Child("repetition"), v.Repetition, "must be at least 0"))
	}
	if v.Start.IsZero() {
		errs = append(errs, field.Required(p.Child("start"), ""))
	}
	if v.KubernetesVersion != "" {
		if _, err := kubeversion.Parse(v.KubernetesVersion); err != nil {
			errs = append(errs, field.Invalid(p.Child("kubernetesVersion"), short(v.KubernetesVersion), err.Error()))
		}
	}
	seen := map[string]bool{}
	for i := range v.Measurements {
		m := &v.Measurements[i]
		mp := p.Child("measurements").Index(i)
		if m.Name == "" {
			errs = append(errs, field.Required(mp.Child("name"), ""))
		} else if seen[m.Name] {
			errs = append(errs, field.Duplicate(mp.Child("name"), m.Name))
		}
		seen[m.Name] = true
		errs = append(errs, validateMeasurement(mp, m)...)
	}
	return errs
}

func validateMeasurement(p *field.Path, m *Measurement) field.ErrorList {
	var errs field.ErrorList
	for i, w := range m.Windows {
		wp := p.Child("windows").Index(i)
		if w.Name == "" {
			errs = append(errs, field.Required(wp.Child("name"), ""))
		}
		if w.End.Before(w.Start) {
			errs = append(errs, field.Invalid(wp.Child("end"), w.End, "before start"))
		}
	}
	for i, v := range m.Values {
		vp := p.Child("values").Index(i)
		errs = append(errs, requireNameUnit(vp, v.Name, v.Unit)...)
		switch {
		case math.IsNaN(v.Value) || math.IsInf(v.Value, 0):
			errs = append(errs, field.Invalid(vp.Child("value"), v.Value, "must be finite"))
		case v.Value < 0 && !mayBeNegative(v.Name):
			errs = append(errs, field.Invalid(vp.Child("value"), v.Value, "cannot be negative"))
		}
	}
	for i := range m.Histograms {
		errs = append(errs, validateHistogram(p.Child("histograms").Index(i), &m.Histograms[i])...)
	}
	for i, s := range m.Series {
		sp := p.Child("series").Index(i)
		errs = append(errs, requireNameUnit(sp, s.Name, s.Unit)...)
		if !slices.IsSortedFunc(s.Points, func(a, b Point) int { return cmp.Compare(a.T, b.T) }) {
			errs = append(errs, field.Invalid(sp.Child("points"), len(s.Points), "not in time order"))
		}
		for j, pt := range s.Points {
			if math.IsNaN(pt.V) || math.IsInf(pt.V, 0) || math.IsNaN(pt.T) || math.IsInf(pt.T, 0) {
				errs = append(errs, field.Invalid(sp.Child("points").Index(j), pt.V, "must be finite"))
				break
			}
			if pt.V < 0 && !mayBeNegative(s.Name) {
				errs = append(errs, field.Invalid(sp.Child("points").Index(j), pt.V, "cannot be negative"))
				break
			}
		}
	}
	return errs
}

// mayBeNegative says a figure is a difference that can go below zero: an
// excess over the baseline, a growth, or a marginal cost. Counts, rates,
// durations, sizes
// and ratios cannot.
func mayBeNegative(name string) bool {
	n := strings.ToLower(name)
	// A marginal cost is a storm's cost less the standing rate over its
	// window: a storm cheaper than the steady fleet's noise is below 0.
	return strings.Contains(n, "excess") || strings.Contains(n, "growth") || strings.Contains(n, "marginal")
}

// requireNameUnit reports a figure's missing name and unit.
func requireNameUnit(p *field.Path, name, unit string) field.ErrorList {
	var errs field.ErrorList
	if name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	}
	if unit == "" {
		errs = append(errs, field.Required(p.Child("unit"), ""))
	}
	return errs
}

func validateHistogram(p *field.Path, h *Histogram) field.ErrorList {
	errs := requireNameUnit(p, h.Name, h.Unit)
	if h.HDR != "" && len(h.Buckets) > 0 {
		errs = append(errs, field.Forbidden(p.Child("buckets"), "a histogram is either hdr or buckets"))
	}
	if h.HDRUnit != "" && h.HDRUnit != UnitMicroseconds {
		errs = append(errs, field.NotSupported(p.Child("hdrUnit"), short(h.HDRUnit), []string{UnitMicroseconds}))
	}
	if h.HDR != "" {
		if h.HDRUnit == "" {
			errs = append(errs, field.Required(p.Child("hdrUnit"), "hdr is set"))
		}
		d, err := DecodeHDR(h.HDR)
		if err != nil {
			errs = append(errs, field.Invalid(p.Child("hdr"), "<encoded>", err.Error()))
		} else if d.TotalCount() != h.Summary.Count {
			errs = append(errs, field.Invalid(p.Child("summary", "count"), h.Summary.Count,
				fmt.Sprintf("does not match the encoded histogram's count %d", d.TotalCount())))
		}
	}
	prevLE, prevCount := math.Inf(-1), 0.0
	for i, b := range h.Buckets {
		bp := p.Child("buckets").Index(i)
		le, err := strconv.ParseFloat(b.LE, 64)
		if err != nil {
			errs = append(errs, field.Invalid(bp.Child("le"), b.LE, "not a number"))
			continue
		}
		if le <= prevLE {
			errs = append(errs, field.Invalid(bp.Child("le"), b.LE, "bounds must ascend"))
		}
		if b.Count < prevCount {
			errs = append(errs, field.Invalid(bp.Child("count"), b.Count, "cumulative counts must not decrease"))
		}
		prevLE, prevCount = le, b.Count
	}
	if len(h.Buckets) > 0 && !math.IsInf(prevLE, 1) {
		errs = append(errs, field.Invalid(p.Child("buckets"), len(h.Buckets), "the last bucket must be le=+Inf"))
	}
	return errs
}
