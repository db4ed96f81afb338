package measure

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stormbench/stormbench/bench/result"
	"github.com/stormbench/stormbench/bench/testutil"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

// goldenMeasurement sorts m and compares its JSON with a golden file.
func goldenMeasurement(t *testing.T, name string, m result.Measurement) {
	t.Helper()
	m.Sort()
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, name, append(b, '\n'))
}

// value returns a figure or fails the test.
func value(t *testing.T, m *result.Measurement, name, window string, labels ...string) float64 {
	t.Helper()
	v, ok := m.Value(name, window, labels...)
	if !ok {
		t.Fatalf("no value %s window=%q labels=%v", name, window, labels)
	}
	return v
}

func approx(a, b float64) bool {
	d := a - b
	if d < 0 {
		d = -d
	}
	return d <= 1e-9*max(1, abs(a), abs(b))
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// fetchBytes adapts a fetch returning its body to MetricsSource.Fetch.
func fetchBytes(f func(ctx context.Context) ([]byte, string, error)) func(context.Context, *bytes.Buffer) (string, error) {
	return func(ctx context.Context, body *bytes.Buffer) (string, error) {
		b, contentType, err := f(ctx)
		body.Write(b)
		return contentType, err
	}
}

// fetchOf fetches src once and returns the body.
func fetchOf(ctx context.Context, src MetricsSource) ([]byte, string, error) {
	var body bytes.Buffer
	contentType, err := src.Fetch(ctx, &body)
	return body.Bytes(), contentType, err
}
