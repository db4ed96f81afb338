package profiles

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
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
		b.WriteString("\n  ")
		b.WriteString(fe.Error())
	}
	return b.String()
}

// Names lists the built-in profiles, sorted.
func Names() []string {
	entries, _ := fs.ReadDir(builtin, ".")
	var names []string
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".yaml"))
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
	var p Profile
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &ValidationError{Source: source, Errs: field.ErrorList{field.Required(field.NewPath("apiVersion"), "empty document")}}
	}
	if bytes.Contains(data, []byte("\n---")) && len(bytes.TrimSpace(bytes.SplitN(data, []byte("\n---"), 2)[1])) > 0 {
		return nil, &ValidationError{Source: source, Errs: field.ErrorList{field.Invalid(field.NewPath("(document)"), field.OmitValueType{}, "a profile file holds exactly one YAML document")}}
	}
	j, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, &ValidationError{Source: source, Errs: field.ErrorList{field.Invalid(field.NewPath("(document)"), field.OmitValueType{}, decodeMessage(err))}}
	}
	// sigs.k8s.io/json matches field names case-sensitively and reports
	// every unknown or duplicate field with its path, where encoding/json
	// would accept "FLEET:" for "fleet:".
	strictErrs, err := kjson.UnmarshalStrict(j, &p)
	if err != nil {
		return nil, &ValidationError{Source: source, Errs: field.ErrorList{field.Invalid(field.NewPath("(document)"), field.OmitValueType{}, decodeMessage(err))}}
	}
	if len(strictErrs) > 0 {
		var errs field.ErrorList
		for _, se := range strictErrs {
			errs = append(errs, field.Invalid(field.NewPath("(document)"), field.OmitValueType{}, se.Error()))
		}
		return nil, &ValidationError{Source: source, Errs: errs}
	}
	SetDefaults(&p)
	if errs := Validate(&p); len(errs) > 0 {
		return nil, &ValidationError{Source: source, Errs: errs}
	}
	return &p, nil
}

// decodeMessage strips the yaml library's wrapping so the message names the
// offending field plainly.
func decodeMessage(err error) string {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "error unmarshaling JSON: while decoding JSON: ")
	msg = strings.TrimPrefix(msg, "error converting YAML to JSON: ")
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
