package main

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// A block is a generated part of a markdown file: an opening marker naming
// what it is made from, the generated lines, and a closing marker.
//
//	<!-- stormbench:figures results/baselines/quick.json ab metrics=a,b -->
//	...generated...
//	<!-- /stormbench:figures -->
//
// The source (results/baselines/quick.json) is a path from the repository's
// root; the kind (ab, machine, summary, catalogue, file) says what is made from
// it, and options tune the kind. Everything between the markers is
// replaced when the blocks are regenerated.
type block struct {
	// Line is the opening marker's line number, from 1.
	Line int
	// Source is the result file, or the folder for a catalogue.
	Source string
	// Kind is what the block holds.
	Kind string
	// Options are the marker's key=value words.
	Options map[string]string
	// Body is the block's current content: the lines between the markers,
	// each ending with a newline.
	Body string
	// start and end are the byte offsets of the body in the document.
	start, end int
}

const closeMarker = "<!-- /stormbench:figures -->"

var openMarker = regexp.MustCompile(`^<!-- stormbench:figures (.*) -->$`)

// parseBlocks finds the generated blocks of a markdown document. A marker
// that is not closed, a block opened inside another, a close without an
// open and a marker without a source are errors, with their line.
func parseBlocks(doc string) ([]block, error) {
	var out []block
	var cur *block
	offset := 0
	for i, line := range strings.SplitAfter(doc, "\n") {
		next := offset + len(line)
		text := strings.TrimRight(line, "\r\n")
		switch {
		case strings.HasPrefix(text, "<!-- stormbench:figures"):
			if cur != nil {
				return nil, fmt.Errorf("line %d: a block opened inside the block of line %d", i+1, cur.Line)
			}
			m := openMarker.FindStringSubmatch(text)
			if m == nil {
				return nil, fmt.Errorf("line %d: malformed marker %q: want <!-- stormbench:figures SOURCE [KIND] [key=value ...] -->", i+1, text)
			}
			b, err := parseSpec(m[1])
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", i+1, err)
			}
			b.Line, b.start = i+1, next
			cur = &b
		case text == closeMarker:
			if cur == nil {
				return nil, fmt.Errorf("line %d: %s without an opening marker", i+1, closeMarker)
			}
			cur.end = offset
			cur.Body = doc[cur.start:cur.end]
			out = append(out, *cur)
			cur = nil
		}
		offset = next
	}
	if cur != nil {
		return nil, fmt.Errorf("line %d: block not closed with %s", cur.Line, closeMarker)
	}
	return out, nil
}

// kinds are the kinds of block and the options each takes.
var kinds = map[string][]string{
	kindAB:          {"metrics"},
	kindMachine:     nil,
	kindSummary:     nil,
	kindCatalogue:   nil,
	kindFile:        nil,
	kindCalibration: nil,
}

const (
	kindAB        = "ab"
	kindMachine   = "machine"
	kindSummary   = "summary"
	kindCatalogue = "catalogue"
	// kindFile quotes a text file whole, in a code block: a command's
	// --help as its golden file keeps it (cmd/stormbench/testdata/help),
	// which TestHelpGolden keeps equal to the CLI's.
	kindFile = "file"
	// kindCalibration is the verdict of a calibration folder (its
	// hollow.json and containerd.json combined): the two runs and every
	// row outside tolerance.
	kindCalibration = "calibration"
)

// parseSpec reads a marker's words: the source, then the kind (default
// ab), then key=value options.
func parseSpec(s string) (block, error) {
	words := strings.Fields(s)
	if len(words) == 0 {
		return block{}, fmt.Errorf("marker names no source file")
	}
	b := block{Source: words[0], Kind: kindAB, Options: map[string]string{}}
	rest := words[1:]
	if len(rest) > 0 && !strings.Contains(rest[0], "=") {
		b.Kind, rest = rest[0], rest[1:]
	}
	opts, ok := kinds[b.Kind]
	if !ok {
		return block{}, fmt.Errorf("unknown kind %q: one of ab, machine, summary, catalogue, file, calibration", b.Kind)
	}
	for _, w := range rest {
		k, v, ok := strings.Cut(w, "=")
		if !ok || !slices.Contains(opts, k) {
			return block{}, fmt.Errorf("kind %s takes no option %q", b.Kind, w)
		}
		b.Options[k] = v
	}
	return b, nil
}

// replaceBodies returns doc with every block's body replaced by bodies[i].
func replaceBodies(doc string, blocks []block, bodies []string) string {
	var b strings.Builder
	last := 0
	for i, bl := range blocks {
		b.WriteString(doc[last:bl.start])
		b.WriteString(bodies[i])
		last = bl.end
	}
	b.WriteString(doc[last:])
	return b.String()
}
