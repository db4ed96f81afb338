// Package decodeerror explains why a JSON document does not decode into a
// Go type, in the user's words: the field path of the first value that
// does not fit, what it must be and what it is, or the line and column of
// a syntax error. encoding/json says "cannot unmarshal string into Go
// struct field Value.variants.measurements.values.value of type float64"
// (no indexes, Go type names) and words a bad time with the Go layout
// "2006-01-02T15:04:05Z07:00"; the result reader and the profile loader
// both use this package instead.
package decodeerror

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Expected says in words what a value of a Go type with its own JSON
// decoding must be ("a point [t, v] of two numbers"), for types this
// package does not know (it knows time.Time and every type named
// Duration).
type Expected map[reflect.Type]string

// Explain turns err, the error of decoding the JSON data into a value of
// type t, into a message with the field path of the first value that does
// not fit (variants[0].measurements[2].values[1].value), what it must be
// and what it is, or the line and column of a syntax error. It returns a
// shortened err when it finds neither.
func Explain(data []byte, t reflect.Type, err error, exp Expected) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line, col := lineColumn(data, se.Offset)
		if strings.Contains(se.Error(), "unexpected end") {
			return fmt.Errorf("not valid JSON: the document ends early, at line %d (a truncated file?)", line)
		}
		return fmt.Errorf("not valid JSON at line %d, column %d: %s", line, col, strings.TrimPrefix(se.Error(), "json: "))
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("not valid JSON: the document ends early (a truncated file?)")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc any
	if derr := dec.Decode(&doc); derr == nil {
		if path, msg, ok := Misfit(doc, t, exp); ok {
			if path == "" {
				return fmt.Errorf("the document %s", msg)
			}
			return fmt.Errorf("%s: %s", path, msg)
		}
	}
	return errors.New(Shorten(strings.TrimPrefix(err.Error(), "json: "), 200))
}

// lineColumn is the 1-based line and column of byte offset off of data.
func lineColumn(data []byte, off int64) (line, col int) {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(off) - (bytes.LastIndexByte(before, '\n') + 1)
	return line, max(col, 1)
}

var (
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	timeType        = reflect.TypeFor[time.Time]()
)

// Misfit walks the generic document doc (decoded with UseNumber) along the
// Go type t as encoding/json would decode it, and returns the path of the
// first value (in key order) that encoding/json would refuse, with what it
// must be and what it is. An unknown member is a misfit too: the readers
// that use this package decode strictly. The path of the document itself
// is "".
func Misfit(doc any, t reflect.Type, exp Expected) (path, msg string, ok bool) {
	return misfit(doc, t, "", exp)
}

func misfit(v any, t reflect.Type, path string, exp Expected) (string, string, bool) {
	if v == nil {
		return "", "", false // null leaves any Go value as it is
	}
	if t.Kind() == reflect.Pointer {
		return misfit(v, t.Elem(), path, exp)
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		b, err := json.Marshal(v)
		if err != nil {
			return "", "", false
		}
		if err := json.Unmarshal(b, reflect.New(t).Interface()); err != nil {
			return path, "must be " + expected(t, exp) + ", got " + describe(v), true
		}
		return "", "", false
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return path, "must be an object, got " + describe(v), true
		}
		fields := jsonFields(t)
		for _, k := range slices.Sorted(maps.Keys(m)) {
			f, ok := fields[k]
			if !ok {
				return join(path, k), "unknown field", true
			}
			if p, msg, ok := misfit(m[k], f, join(path, k), exp); ok {
				return p, msg, true
			}
		}
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return path, "must be an object, got " + describe(v), true
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if p, msg, ok := misfit(m[k], t.Elem(), join(path, k), exp); ok {
				return p, msg, true
			}
		}
	case reflect.Slice, reflect.Array:
		a, ok := v.([]any)
		if !ok {
			return path, "must be a list, got " + describe(v), true
		}
		for i, e := range a {
			if p, msg, ok := misfit(e, t.Elem(), path+"["+strconv.Itoa(i)+"]", exp); ok {
				return p, msg, true
			}
		}
	case reflect.String:
		if _, ok := v.(string); !ok {
			return path, "must be a string, got " + describe(v), true
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			return path, "must be true or false, got " + describe(v), true
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, ok := v.(json.Number)
		if _, err := strconv.ParseInt(string(n), 10, t.Bits()); !ok || err != nil {
			return path, "must be an integer, got " + describe(v), true
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, ok := v.(json.Number)
		if _, err := strconv.ParseUint(string(n), 10, t.Bits()); !ok || err != nil {
			return path, "must be an integer from 0, got " + describe(v), true
		}
	case reflect.Float32, reflect.Float64:
		n, ok := v.(json.Number)
		if _, err := strconv.ParseFloat(string(n), t.Bits()); !ok || err != nil {
			return path, "must be a number, got " + describe(v), true
		}
	}
	return "", "", false
}

// jsonFields maps the JSON member names of struct type t to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			maps.Copy(out, jsonFields(f.Type))
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

// expected says in words what a value of a type with its own JSON
// decoding must be.
func expected(t reflect.Type, exp Expected) string {
	if s, ok := exp[t]; ok {
		return s
	}
	switch {
	case t == timeType:
		return "a time in RFC 3339, e.g. 2026-12-03T18:00:00Z"
	case t.Name() == "Duration":
		return `a duration such as "50s" or "1m30s"`
	}
	return "a valid " + strings.ToLower(t.Name())
}

// describe says what the generic JSON value v is, in a few words.
func describe(v any) string {
	switch v := v.(type) {
	case string:
		return "the string " + strconv.Quote(Shorten(v, 40))
	case json.Number:
		return "the number " + Shorten(string(v), 40)
	case bool:
		return strconv.FormatBool(v)
	case []any:
		return fmt.Sprintf("a list of %d elements", len(v))
	case map[string]any:
		return fmt.Sprintf("an object with %d members", len(v))
	}
	return "null"
}

// Shorten cuts s to at most n runes, marking the cut with "…".
func Shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
