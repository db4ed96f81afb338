package result

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"

	"github.com/stormbench/stormbench/bench/decodeerror"
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
// sets r.SchemaVersion, and fails on a document Validate rejects, so that
// stormbench never writes a file it cannot read back.
func Encode(w io.Writer, r *Result) error {
	r.SchemaVersion = SchemaVersion
	if err := Validate(r); err != nil {
		return err
	}
	c := *r
	c.Variants = sparsify(r.Variants)
	b, err := json.Marshal(&c)
	if err != nil {
		return fmt.Errorf("encoding result: %w", err)
	}
	var buf bytes.Buffer
	if err := writeCompact(&buf, b); err != nil {
		return fmt.Errorf("encoding result: %w", err)
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("writing result: %w", err)
	}
	return nil
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
	case *probe.SchemaVersion != SchemaVersion:
		return nil, fmt.Errorf("decoding result: schemaVersion: Unsupported value: %d: this stormbench reads schema version %d only", *probe.SchemaVersion, SchemaVersion)
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
	if err := densify(&r); err != nil {
		return nil, fmt.Errorf("decoding result: %w", err)
	}
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
