package result

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
)

// writeCompact writes the JSON document b (compact, as json.Marshal makes
// it) in a layout a reviewer can diff, its numbers rounded (see
// roundNumbers):
//   - an object that fits in lineWidth characters and holds no non-empty
//     array goes on one line (a value, a histogram summary, a label set);
//   - a series' points (an array of arrays) go pointsPerLine to a line, so
//     that the diff of two runs pairs the same stretch of the series;
//   - any other array of scalars fills lines of at most lineWidth
//     characters (a longer element, such as an encoded histogram or an
//     error message, gets a line of its own);
//   - everything else puts one member per line, indented by depth.
//
// Keys keep their order.
func writeCompact(w *bytes.Buffer, b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	n, err := parseNode(dec)
	if err != nil {
		return err
	}
	if err := n.roundNumbers(""); err != nil {
		return err
	}
	n.write(w, "")
	w.WriteByte('\n')
	return nil
}

// lineWidth is the longest object, or run of array elements, written on
// one line.
const lineWidth = 160

// pointsPerLine is how many points of a series one line holds.
const pointsPerLine = 10

// The precision a result file keeps. A point's t (seconds since its
// series' start, from a scrape clock with millisecond resolution) is
// rounded to the millisecond; every other number that is not a whole
// number is rounded to significantDigits significant digits, more than
// any figure stormbench measures means (a rate from two counter scrapes,
// a percentile of an HdrHistogram with 3 significant digits). Whole
// numbers (counts, seeds) are written exactly, and so is the recorded
// profile (run.profile), which is the run's input. Rounding shrinks a
// fleet-1k result by about a third (floats were written with up to 17
// digits); nothing that reads a result compares figures closer than that.
const (
	significantDigits = 6
	pointTimeDecimals = 3
)

// roundNumbers rounds every number of n in place to the precision above.
// key is the member name n is the value of ("" in an array).
func (n *node) roundNumbers(key string) error {
	switch n.kind {
	case 0:
		r, err := roundScalar(n.scalar, significantDigits, false)
		if err != nil {
			return err
		}
		n.scalar = r
	case '{':
		for i, e := range n.elems {
			if n.keys[i] == "profile" {
				continue
			}
			if err := e.roundNumbers(n.keys[i]); err != nil {
				return err
			}
		}
	case '[':
		for _, e := range n.elems {
			if key == "points" && e.kind == '[' && len(e.elems) == 2 && e.elems[0].kind == 0 && e.elems[1].kind == 0 {
				t, err := roundScalar(e.elems[0].scalar, pointTimeDecimals, true)
				if err != nil {
					return err
				}
				v, err := roundScalar(e.elems[1].scalar, significantDigits, false)
				if err != nil {
					return err
				}
				e.elems[0].scalar, e.elems[1].scalar = t, v
				continue
			}
			if err := e.roundNumbers(""); err != nil {
				return err
			}
		}
	}
	return nil
}

// roundScalar rounds the JSON number s to digits significant digits, or
// with decimals set to digits decimals, and formats it as encoding/json
// formats a float64 (the shortest decimal that reads back, with an
// exponent only below 1e-6 or from 1e21). A whole number (no fraction, exponent or point in
// its JSON) and anything that is not a number are returned as they are.
func roundScalar(s []byte, digits int, decimals bool) ([]byte, error) {
	if len(s) == 0 || !(s[0] == '-' || (s[0] >= '0' && s[0] <= '9')) || !bytes.ContainsAny(s, ".eE") {
		return s, nil
	}
	f, err := strconv.ParseFloat(string(s), 64)
	if err != nil {
		return nil, fmt.Errorf("encoding result: number %s: %w", s, err)
	}
	// f is finite (ParseFloat refused what is not), so Marshal cannot fail.
	return json.Marshal(roundFloat(f, digits, decimals))
}

// roundFloat rounds f as roundScalar describes; a whole f stays as it is.
func roundFloat(f float64, digits int, decimals bool) float64 {
	if f == math.Trunc(f) || math.IsNaN(f) || math.IsInf(f, 0) {
		return f
	}
	if decimals {
		p := math.Pow10(digits)
		if r := math.Round(f*p) / p; !math.IsInf(r, 0) {
			return r
		}
		return f
	}
	r, err := strconv.ParseFloat(strconv.FormatFloat(f, 'g', digits, 64), 64)
	if err != nil {
		return f
	}
	return r
}

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
// arrays.
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
	if n.kind == 0 {
		w.Write(n.scalar)
		return
	}
	w.WriteByte(n.kind)
	for i, e := range n.elems {
		if i > 0 {
			w.WriteByte(',')
		}
		n.key(w, i)
		e.oneLine(w)
	}
	w.WriteByte(n.closing())
}

// key writes an object's i-th key and its colon; an array has none.
func (n *node) key(w *bytes.Buffer, i int) {
	if n.kind == '{' {
		k, _ := json.Marshal(n.keys[i])
		w.Write(k)
		w.WriteByte(':')
	}
}

// closing is the delimiter that closes n: in ASCII, ']' follows '[' and
// '}' follows '{' two places on.
func (n *node) closing() byte { return n.kind + 2 }

func (n *node) write(w *bytes.Buffer, indent string) {
	if len(n.elems) == 0 || n.kind == 0 {
		n.oneLine(w)
		return
	}
	if n.flat() {
		n.writeFlat(w, indent)
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
	inner := indent + " "
	w.WriteByte(n.kind)
	for i, e := range n.elems {
		if i > 0 {
			w.WriteByte(',')
		}
		w.WriteByte('\n')
		w.WriteString(inner)
		n.key(w, i)
		e.write(w, inner)
	}
	w.WriteByte('\n')
	w.WriteString(indent)
	w.WriteByte(n.closing())
}

// writeFlat writes the flat array n: on one line if it fits (or holds
// arrays, up to pointsPerLine of them), else broken into lines as
// writeCompact says.
func (n *node) writeFlat(w *bytes.Buffer, indent string) {
	var one bytes.Buffer
	n.oneLine(&one)
	nested := slices.ContainsFunc(n.elems, func(e *node) bool { return e.kind == '[' })
	if (nested && len(n.elems) <= pointsPerLine) || (!nested && one.Len() <= lineWidth) {
		w.Write(one.Bytes())
		return
	}
	inner := indent + " "
	w.WriteByte('[')
	w.WriteByte('\n')
	w.WriteString(inner)
	width, inLine := 0, 0
	var e1 bytes.Buffer
	for _, e := range n.elems {
		e1.Reset()
		e.oneLine(&e1)
		if inLine > 0 {
			w.WriteByte(',')
			if (nested && inLine == pointsPerLine) || (!nested && width+1+e1.Len() > lineWidth) {
				w.WriteByte('\n')
				w.WriteString(inner)
				width, inLine = 0, 0
			}
		}
		w.Write(e1.Bytes())
		width += e1.Len() + 1
		inLine++
	}
	w.WriteByte('\n')
	w.WriteString(indent)
	w.WriteByte(']')
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
					return fmt.Errorf("variants[%d].measurements[%d].series[%d]: sparse series %s%s has no unlabelled series of that name to take its time axis from", i, j, k, s.Name, labelString(s.Labels))
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
	return find(m.Series, func(r *Series) bool {
		return len(r.Labels) == 0 && r.Name == s.Name && r.Unit == s.Unit && r.Start.Equal(s.Start)
	})
}
