package result

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
)

// Schema versions: 1 wrote indented JSON with every point of every series;
// 2 wrote the compact layout of writeCompact and sparse labelled series
// (Series.Sparse); 3 records a merge in Run.MergedFrom instead of the flag
// Cluster.Settings.Flags["stormbench"]["merged-shards"]. This stormbench
// reads all three and writes 3.
const minSchemaVersion = 1

// The merge marker of schemas 1 and 2: a component flag holding how many
// shard results were merged.
const (
	legacyMergeComponent  = "stormbench"
	legacyMergeFlagShards = "merged-shards"
)

// upgradeMergeMarker moves the merge marker of a schema 1 or 2 document
// from its component flag to Run.MergedFrom, naming the shards "shard 0",
// "shard 1", ... since the old marker held only their number.
func upgradeMergeMarker(r *Result, version int) error {
	if version >= 3 {
		return nil
	}
	flags := r.Run.Cluster.Settings.Flags[legacyMergeComponent]
	v, ok := flags[legacyMergeFlagShards]
	if !ok {
		return nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return fmt.Errorf("run.cluster.settings.flags.%s.%s: Invalid value: %q: not a number of shards", legacyMergeComponent, legacyMergeFlagShards, v)
	}
	if len(r.Run.MergedFrom) > 0 {
		return fmt.Errorf("run.mergedFrom: Invalid value: set in a schema %d document", version)
	}
	for i := range n {
		r.Run.MergedFrom = append(r.Run.MergedFrom, "shard "+strconv.Itoa(i))
	}
	delete(flags, legacyMergeFlagShards)
	if len(flags) == 0 {
		delete(r.Run.Cluster.Settings.Flags, legacyMergeComponent)
	}
	if len(r.Run.Cluster.Settings.Flags) == 0 {
		r.Run.Cluster.Settings.Flags = nil
	}
	return nil
}

// writeCompact writes the JSON document b (compact, as json.Marshal makes
// it) in a layout a reviewer can diff: one line per object that fits in
// lineWidth characters (a value, a histogram summary, a label set), one
// line per array of scalars or of arrays of scalars (a series' points),
// and an indented line per member for everything else. Keys keep their
// order.
func writeCompact(w *bytes.Buffer, b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	n, err := parseNode(dec)
	if err != nil {
		return err
	}
	n.write(w, "")
	w.WriteByte('\n')
	return nil
}

// lineWidth is the longest object written on one line.
const lineWidth = 160

// node is a parsed JSON value: an object (keys in order), an array, or a
// scalar's compact encoding.
type node struct {
	kind   byte // '{', '[' or 0 for a scalar
	keys   []string
	elems  []*node
	scalar []byte
}

func parseNode(dec *json.Decoder) (*node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		n := &node{kind: byte(t)}
		for dec.More() {
			if n.kind == '{' {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, ok := k.(string)
				if !ok {
					return nil, errors.New("encoding result: object key is not a string")
				}
				n.keys = append(n.keys, key)
			}
			e, err := parseNode(dec)
			if err != nil {
				return nil, err
			}
			n.elems = append(n.elems, e)
		}
		if _, err := dec.Token(); err != nil { // the closing delimiter
			return nil, err
		}
		return n, nil
	default:
		s, err := json.Marshal(t)
		if err != nil {
			return nil, err
		}
		if num, ok := t.(json.Number); ok {
			s = []byte(num.String())
		}
		return &node{scalar: s}, nil
	}
}

// flat says the node is a scalar, or an array of scalars or of such
// arrays: it goes on one line whatever its length.
func (n *node) flat() bool {
	switch n.kind {
	case 0:
		return true
	case '[':
		for _, e := range n.elems {
			if e.kind == '{' || (e.kind == '[' && !e.flat()) {
				return false
			}
		}
		return true
	}
	return false
}

// oneLine is the node's compact encoding.
func (n *node) oneLine(w *bytes.Buffer) {
	switch n.kind {
	case 0:
		w.Write(n.scalar)
	case '[':
		w.WriteByte('[')
		for i, e := range n.elems {
			if i > 0 {
				w.WriteByte(',')
			}
			e.oneLine(w)
		}
		w.WriteByte(']')
	case '{':
		w.WriteByte('{')
		for i, e := range n.elems {
			if i > 0 {
				w.WriteByte(',')
			}
			k, _ := json.Marshal(n.keys[i])
			w.Write(k)
			w.WriteByte(':')
			e.oneLine(w)
		}
		w.WriteByte('}')
	}
}

func (n *node) write(w *bytes.Buffer, indent string) {
	if n.flat() || len(n.elems) == 0 {
		n.oneLine(w)
		return
	}
	if n.kind == '{' {
		var one bytes.Buffer
		n.oneLine(&one)
		if one.Len() <= lineWidth && !slices.ContainsFunc(n.elems, func(e *node) bool { return e.kind == '[' && len(e.elems) > 0 }) {
			w.Write(one.Bytes())
			return
		}
	}
	open, close := byte('['), byte(']')
	if n.kind == '{' {
		open, close = '{', '}'
	}
	inner := indent + " "
	w.WriteByte(open)
	for i, e := range n.elems {
		if i > 0 {
			w.WriteByte(',')
		}
		w.WriteByte('\n')
		w.WriteString(inner)
		if n.kind == '{' {
			k, _ := json.Marshal(n.keys[i])
			w.Write(k)
			w.WriteByte(':')
		}
		e.write(w, inner)
	}
	w.WriteByte('\n')
	w.WriteString(indent)
	w.WriteByte(close)
}

// sparsify returns a copy of r's variants in which every labelled series
// that has a reference (the unlabelled series of the same name, unit and
// start in its measurement) leaves out its zero points at the reference's
// timestamps, and is marked Sparse. A per-resource request rate is zero at
// most points of a storm; the reference keeps the time axis.
func sparsify(vs []VariantRun) []VariantRun {
	out := slices.Clone(vs)
	for i := range out {
		out[i].Measurements = slices.Clone(out[i].Measurements)
		for j := range out[i].Measurements {
			m := &out[i].Measurements[j]
			m.Series = slices.Clone(m.Series)
			for k := range m.Series {
				s := &m.Series[k]
				ref := referenceSeries(m, s)
				if ref == nil || s.Sparse {
					continue
				}
				at := map[float64]bool{}
				for _, p := range ref.Points {
					at[p.T] = true
				}
				var kept []Point
				for _, p := range s.Points {
					if p.V != 0 || !at[p.T] {
						kept = append(kept, p)
					}
				}
				s.Points, s.Sparse = kept, true
			}
		}
	}
	return out
}

// densify puts back the zero points sparsify left out, so that readers
// see every series as it was measured.
func densify(r *Result) error {
	for i := range r.Variants {
		for j := range r.Variants[i].Measurements {
			m := &r.Variants[i].Measurements[j]
			for k := range m.Series {
				s := &m.Series[k]
				if !s.Sparse {
					continue
				}
				ref := referenceSeries(m, s)
				if ref == nil {
					return fmt.Errorf("variants[%d].measurements[%d].series[%d]: sparse series %s %v has no unlabelled series of that name to take its time axis from", i, j, k, s.Name, s.Labels)
				}
				dense := make([]Point, 0, len(ref.Points))
				si := 0
				for _, p := range ref.Points {
					for si < len(s.Points) && s.Points[si].T < p.T {
						dense = append(dense, s.Points[si])
						si++
					}
					if si < len(s.Points) && s.Points[si].T == p.T {
						dense = append(dense, s.Points[si])
						si++
						continue
					}
					dense = append(dense, Point{T: p.T})
				}
				dense = append(dense, s.Points[si:]...)
				s.Points, s.Sparse = dense, false
			}
		}
	}
	return nil
}

// referenceSeries is the unlabelled series of s's name, unit and start in
// m, or nil (s itself unlabelled, or none).
func referenceSeries(m *Measurement, s *Series) *Series {
	if len(s.Labels) == 0 {
		return nil
	}
	for i := range m.Series {
		r := &m.Series[i]
		if len(r.Labels) == 0 && r.Name == s.Name && r.Unit == s.Unit && r.Start.Equal(s.Start) {
			return r
		}
	}
	return nil
}

// encodeTo writes r (already validated) in the schema-2 layout.
func encodeTo(w io.Writer, r *Result) error {
	c := *r
	c.SchemaVersion = SchemaVersion
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
