package profiles

import (
	"bufio"
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/stormbench/stormbench/bench/decodeerror"
)

//go:embed *.yaml
var builtin embed.FS

// ValidationError carries every field error of an invalid profile.
type ValidationError struct {
	// Source names where the profile came from.
	Source string
	// Errs lists every field error, with its path.
	Errs field.ErrorList
}

func (e *ValidationError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "invalid profile %s: %d error(s):", e.Source, len(e.Errs))
	for _, fe := range e.Errs {
		msg := fe.Error()
		if fe.Field == documentField {
			msg = fe.Detail
		}
		// A line per error, each short enough to read whatever the
		// input (a 100 kB key, a list where a number goes).
		b.WriteString("\n  " + decodeerror.Shorten(msg, 400))
	}
	return b.String()
}

// Names lists the built-in profiles, sorted.
func Names() []string {
	names, _ := fs.Glob(builtin, "*.yaml")
	for i, n := range names {
		names[i] = strings.TrimSuffix(n, ".yaml")
	}
	sort.Strings(names)
	return names
}

// Builtin returns the raw YAML of a built-in profile.
func Builtin(name string) ([]byte, error) {
	data, err := builtin.ReadFile(name + ".yaml")
	if err != nil {
		return nil, fmt.Errorf("no built-in profile %q (have: %s)", name, strings.Join(Names(), ", "))
	}
	return data, nil
}

// LoadError is a profile that could not be read: a missing file, a
// directory, an unknown built-in name. It is bad input, as a
// ValidationError is.
type LoadError struct{ Err error }

func (e *LoadError) Error() string { return e.Err.Error() }
func (e *LoadError) Unwrap() error { return e.Err }

// IsLoadError reports whether err is, or wraps, a LoadError.
func IsLoadError(err error) bool {
	var le *LoadError
	return errors.As(err, &le)
}

// Load resolves ref as a built-in profile name or, if it contains a path
// separator or ends in .yaml/.yml, as a file, then decodes, defaults and
// validates it.
func Load(ref string) (*Profile, error) {
	if strings.ContainsRune(ref, os.PathSeparator) || strings.HasSuffix(ref, ".yaml") || strings.HasSuffix(ref, ".yml") {
		data, err := os.ReadFile(ref)
		if err != nil {
			return nil, &LoadError{fmt.Errorf("reading profile: %w", err)}
		}
		return Parse(path.Base(ref), data)
	}
	data, err := Builtin(ref)
	if err != nil {
		return nil, &LoadError{err}
	}
	return Parse(ref, data)
}

// Parse decodes a profile strictly (an unknown field is an error), applies
// defaults and validates it, returning a *ValidationError listing every
// problem at once.
func Parse(source string, data []byte) (*Profile, error) {
	invalid := func(errs ...*field.Error) (*Profile, error) { return nil, &ValidationError{Source: source, Errs: errs} }
	if len(bytes.TrimSpace(data)) == 0 {
		return invalid(field.Required(field.NewPath("apiVersion"), "empty document"))
	}
	if n, err := yamlDocuments(data); err == nil && n > 1 {
		return invalid(documentError("a profile file holds exactly one YAML document (remove the ---)"))
	}
	j, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return invalid(documentError(decodeMessage(err)))
	}
	p, err := Decode(source, j)
	if err != nil {
		return nil, err
	}
	SetDefaults(p)
	if errs := Validate(p); len(errs) > 0 {
		return invalid(errs...)
	}
	return p, nil
}

// Decode decodes a profile's JSON strictly, as Parse does (an unknown
// field, a value of the wrong type: every error with its path, in a
// *ValidationError), without defaulting or validating it: for the resolved
// profile a result records (run.profile), which was valid when it ran and
// must not become unreadable when a rule is added.
func Decode(source string, data []byte) (*Profile, error) {
	var p Profile
	if errs := decodeStrict(data, &p); len(errs) > 0 {
		return nil, &ValidationError{Source: source, Errs: errs}
	}
	return &p, nil
}

// yamlDocuments counts the non-empty YAML documents in data, as a YAML
// reader splits them: a "---" inside a block scalar does not start one.
func yamlDocuments(data []byte) (int, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	n := 0
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		var v any
		if err := yaml.Unmarshal(doc, &v); err != nil || v != nil {
			n++
		}
	}
}

// typeError is a decode error of one field: encoding/json's
// UnmarshalTypeError, as sigs.k8s.io/json words it (its type is internal).
var typeError = regexp.MustCompile(`^json: cannot unmarshal (.+) into Go struct field [A-Za-z0-9_]+\.(\S+) of type (\S+)$`)

// unknownField is a strict error of sigs.k8s.io/json.
var unknownField = regexp.MustCompile(`^(unknown|duplicate) field "(.+)"$`)

// decodeStrict decodes the profile's JSON into p strictly and returns every
// problem with its field path in profile terms: each value of the wrong
// type (the decoder stops at the first, so the field is dropped and the
// document decoded again), then every unknown or duplicate field. A bare
// number where a count-or-percentage string is expected (storm.waves.size:
// 50) is taken as that count.
func decodeStrict(j []byte, p *Profile) field.ErrorList {
	// Numbers stay as written (a 64-bit seed must not round).
	var doc any
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return field.ErrorList{documentError(decodeMessage(err))}
	}
	top, _ := doc.(map[string]any)
	storm, _ := top["storm"].(map[string]any)
	if waves, ok := storm["waves"].(map[string]any); ok {
		if n, ok := waves["size"].(json.Number); ok {
			waves["size"] = n.String()
		}
	}
	errs := checkRepetitions(top)
	for range 100 {
		b, err := json.Marshal(doc)
		if err != nil {
			return append(errs, documentError(err.Error()))
		}
		*p = Profile{}
		strictErrs, err := kjson.UnmarshalStrict(b, p)
		if err == nil {
			for _, se := range strictErrs {
				if m := unknownField.FindStringSubmatch(se.Error()); m != nil {
					errs = append(errs, field.Invalid(pathOf(m[2]), field.OmitValueType{}, m[1]+" field"))
				} else {
					errs = append(errs, documentError(se.Error()))
				}
			}
			return errs
		}
		// The decoder's error names the field without list indexes, and a
		// value with its own decoding (a duration) without any path: find
		// the value by walking the document along the profile's types.
		if path, msg, ok := decodeerror.Misfit(doc, reflect.TypeFor[Profile](), nil); ok && path != "" && drop(doc, splitPath(path)) {
			errs = append(errs, field.Invalid(pathOf(path), field.OmitValueType{}, msg))
			continue
		}
		m := typeError.FindStringSubmatch(err.Error())
		if m == nil || !drop(doc, splitPath(m[2])) {
			return append(errs, documentError(decodeMessage(err)))
		}
		errs = append(errs, field.Invalid(pathOf(m[2]), field.OmitValueType{}, fmt.Sprintf("must be %s, got %s", kindOf(m[3]), strings.Fields(m[1])[0])))
	}
	return errs
}

// repetitionsMapping is the mapping form of repetitions, as checked member
// by member before decoding.
type repetitionsMapping struct {
	Count int    `json:"count"`
	Seeds string `json:"seeds"`
}

// checkRepetitions checks repetitions in the generic document m: a count, or
// a mapping whose members are checked one by one with their paths (an
// unknown member, a count that is not an integer), each misfit reported
// and dropped so that the rest decodes. Repetitions decodes itself, so the
// strict decoder could only say that the whole value is wrong.
func checkRepetitions(m map[string]any) field.ErrorList {
	wrong := field.ErrorList{field.Invalid(field.NewPath("repetitions"), field.OmitValueType{}, "must be a count such as 5, or a mapping such as {count: 5, seeds: vary}")}
	switch r := m["repetitions"].(type) {
	case nil:
		return nil
	case json.Number:
		if _, err := strconv.ParseInt(r.String(), 10, 32); err != nil {
			delete(m, "repetitions")
			return wrong
		}
		return nil
	case map[string]any:
		var errs field.ErrorList
		for range len(r) {
			key, msg, ok := decodeerror.Misfit(r, reflect.TypeFor[repetitionsMapping](), nil)
			if !ok || key == "" {
				break
			}
			errs = append(errs, field.Invalid(field.NewPath("repetitions", key), field.OmitValueType{}, msg))
			delete(r, key)
		}
		return errs
	}
	delete(m, "repetitions")
	return wrong
}

// kindOf names a Go type in YAML terms.
func kindOf(goType string) string {
	switch {
	case strings.HasPrefix(goType, "[]"):
		return "a list"
	case strings.HasPrefix(goType, "map["), strings.Contains(goType, "."):
		return "a mapping"
	case goType == "string":
		return "a string (quote it)"
	case goType == "bool":
		return "true or false"
	case strings.HasPrefix(goType, "float"):
		return "a number"
	case strings.HasPrefix(goType, "int"), strings.HasPrefix(goType, "uint"):
		return "an integer"
	}
	return "of type " + goType
}

// splitPath splits "storm.variants[1].name" into its keys and indexes.
func splitPath(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ".") {
		for part != "" {
			i := strings.IndexByte(part, '[')
			if i < 0 {
				out = append(out, part)
				break
			}
			if i > 0 {
				out = append(out, part[:i])
			}
			end := strings.IndexByte(part, ']')
			if end < i {
				out = append(out, part[i:])
				break
			}
			out = append(out, part[i:end+1])
			part = part[end+1:]
		}
	}
	return out
}

func pathOf(s string) *field.Path {
	var p *field.Path
	for _, seg := range splitPath(s) {
		seg = decodeerror.Shorten(seg, 60) // an unknown key can be any length
		if strings.HasPrefix(seg, "[") {
			if i, err := strconv.Atoi(strings.Trim(seg, "[]")); err == nil && p != nil {
				p = p.Index(i)
				continue
			}
		}
		if p == nil {
			p = field.NewPath(seg)
		} else {
			p = p.Child(seg)
		}
	}
	if p == nil {
		return field.NewPath(documentField)
	}
	return p
}

// documentField is the field of an error about the whole document (a YAML
// syntax error, which carries its line, or a second document):
// ValidationError prints its detail alone.
const documentField = "(document)"

// documentError is an error about the whole profile rather than a field.
func documentError(detail string) *field.Error {
	return field.Invalid(field.NewPath(documentField), field.OmitValueType{}, decodeerror.Shorten(detail, 300))
}

// drop deletes the value at path from doc (a list without an index in the
// path: from every element) and says whether it found one.
func drop(doc any, path []string) bool {
	if len(path) == 0 {
		return false
	}
	switch d := doc.(type) {
	case map[string]any:
		v, ok := d[path[0]]
		if !ok {
			return false
		}
		if len(path) == 1 {
			delete(d, path[0])
			return true
		}
		return drop(v, path[1:])
	case []any:
		if strings.HasPrefix(path[0], "[") {
			i, err := strconv.Atoi(strings.Trim(path[0], "[]"))
			if err != nil || i < 0 || i >= len(d) {
				return false
			}
			return drop(d[i], path[1:])
		}
		found := false
		for _, e := range d {
			found = drop(e, path) || found
		}
		return found
	}
	return false
}

// decodeMessage strips the yaml library's wrapping so the message names the
// offending field plainly.
func decodeMessage(err error) string {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "error unmarshaling JSON: while decoding JSON: ")
	msg = strings.TrimPrefix(msg, "error converting YAML to JSON: ")
	// go-yaml's list of errors and its prefix say nothing the line
	// number does not.
	msg = strings.TrimPrefix(msg, "yaml: unmarshal errors:\n")
	msg = strings.TrimPrefix(strings.TrimSpace(msg), "yaml: ")
	return msg
}

// IsValidation reports whether err is a profile validation error.
func IsValidation(err error) bool {
	var ve *ValidationError
	return errors.As(err, &ve)
}

// Marshal renders a resolved profile as YAML.
func Marshal(p *Profile) ([]byte, error) {
	return yaml.Marshal(p)
}
