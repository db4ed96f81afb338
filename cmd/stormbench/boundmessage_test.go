package main

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestBoundMessage: a message of any length prints in at most
// maxMessageLen characters, keeps its start and its end, and says how much
// it left out; a short one is unchanged.
func TestBoundMessage(t *testing.T) {
	for _, n := range []int{0, 1, 499, 500, 501, 502, 600, 999, 1000, 1001, 10_000, 17_000, 1_000_000} {
		msg := "reading result r.json: " + strings.Repeat("é", n) + " the cause"
		got := boundMessage(msg, maxMessageLen)
		if l := utf8.RuneCountInString(got); l > maxMessageLen {
			t.Errorf("n=%d: %d characters", n, l)
		}
		if utf8.RuneCountInString(msg) <= maxMessageLen {
			if got != msg {
				t.Errorf("n=%d: changed a short message", n)
			}
			continue
		}
		if !strings.HasPrefix(got, "reading result r.json: ") || !strings.HasSuffix(got, " the cause") || !strings.Contains(got, "characters left out") {
			t.Errorf("n=%d: %q", n, got)
		}
		if !utf8.ValidString(got) {
			t.Errorf("n=%d: invalid UTF-8", n)
		}
	}
}
