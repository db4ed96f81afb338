package result

import (
	"testing"
	"time"
)

// hdrOf records the given durations into a histogram.
func hdrOf(t *testing.T, name, window string, labels map[string]string, ds ...time.Duration) Histogram {
	t.Helper()
	h := NewHDR(time.Hour)
	for _, d := range ds {
		if err := h.RecordValue(d.Microseconds()); err != nil {
			t.Fatal(err)
		}
	}
	out, err := FromHDR(name, window, labels, h)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
