package compare

import (
	"math"
	"testing"

	"github.com/stormbench/stormbench/bench/result"
)

func TestFormatValue(t *testing.T) {
	tests := []struct {
		x    float64
		unit string
		want string
	}{
		{0, result.UnitSeconds, "0s"},
		{0.000250, result.UnitSeconds, "250µs"},
		{0.00495, result.UnitSeconds, "4.95ms"},
		{0.0609, result.UnitSeconds, "60.9ms"},
		{0.5, result.UnitSeconds, "500ms"},
		{9.822, result.UnitSeconds, "9.82s"},
		{20.6, result.UnitSeconds, "20.6s"},
		{125, result.UnitSeconds, "2m05s"},
		{-0.822, result.UnitSeconds, "-822ms"},
		{1617, result.UnitRequests, "1617"},
		{157.94, result.UnitRequests, "158"},
		{70.309, result.UnitRequests, "70.3"},
		{0.25, result.UnitCount, "0.25"},
		{17580750, result.UnitEvents, "17.58M"},
		{309.26, result.UnitRequestsPerSecond, "309/s"},
		{277.04, result.UnitEndpointSeconds, "277 ep·s"},
		{96735232, result.UnitBytes, "92.3MiB"},
	}
	for _, tt := range tests {
		if got := FormatValue(tt.x, tt.unit); got != tt.want {
			t.Errorf("FormatValue(%v, %s) = %q, want %q", tt.x, tt.unit, got, tt.want)
		}
	}
}

// TestFormatChange: FormatPercent signs a fraction as a percentage, and
// FormatChange makes a rise to ten times the base or more a factor, not a
// percentage of seven digits; anything else is FormatPercent's.
func TestFormatChange(t *testing.T) {
	for _, c := range []struct {
		format func(float64) string
		f      float64
		want   string
	}{
		{FormatPercent, -1, "-100%"},
		{FormatPercent, -0.55, "-55.0%"},
		{FormatPercent, 0.1, "+10.0%"},
		{FormatPercent, 0, "0.0%"},
		{FormatPercent, 0.0001, "0.0%"},
		{FormatPercent, 2.5, "+250%"},
		{FormatPercent, math.Inf(1), "up from 0"},
		{FormatPercent, math.Inf(-1), "down from 0"},
		{FormatChange, 0.123, "+12.3%"},
		{FormatChange, -1, "-100%"},
		{FormatChange, 8.99, "+899%"},
		{FormatChange, 9, "×10.0"},
		{FormatChange, 12.19, "×13.2"},
		{FormatChange, 113409.44, "×113410"},
		{FormatChange, math.Inf(1), "up from 0"},
		{FormatChange, math.Inf(-1), "down from 0"},
		{FormatChange, math.NaN(), "?"},
	} {
		if got := c.format(c.f); got != c.want {
			t.Errorf("format(%v) = %q, want %q", c.f, got, c.want)
		}
	}
}
