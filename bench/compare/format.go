package compare

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/stormbench/stormbench/bench/result"
)

// FormatValue renders x in the unit for people: durations as 1.25s or
// 61.0ms, rates with a /s suffix, bytes in KiB/MiB/GiB, counts as integers
// when they are whole and with three significant digits otherwise.
func FormatValue(x float64, unit string) string {
	switch unit {
	case result.UnitSeconds:
		return FormatSeconds(x)
	case result.UnitMicroseconds:
		return FormatSeconds(x / 1e6)
	case result.UnitRequestsPerSecond:
		return FormatNumber(x) + "/s"
	case result.UnitEndpointSeconds:
		return FormatNumber(x) + " ep·s"
	case result.UnitBytes:
		return formatBytes(x)
	case result.UnitCores:
		return FormatNumber(x) + " cores"
	case result.UnitRatio:
		return strconv.FormatFloat(x*100, 'f', 1, 64) + "%"
	}
	return FormatNumber(x)
}

// FormatNumber prints whole numbers below a million exactly and anything
// else with about three significant digits.
func FormatNumber(x float64) string {
	ax := math.Abs(x)
	switch {
	case x == math.Trunc(x) && ax < 1e6:
		return strconv.FormatFloat(x, 'f', 0, 64)
	case ax >= 1e9:
		return strconv.FormatFloat(x/1e9, 'f', 2, 64) + "G"
	case ax >= 1e6:
		return strconv.FormatFloat(x/1e6, 'f', 2, 64) + "M"
	case ax >= 100:
		return strconv.FormatFloat(x, 'f', 0, 64)
	case ax >= 10:
		return strconv.FormatFloat(x, 'f', 1, 64)
	default:
		return strconv.FormatFloat(x, 'f', 2, 64)
	}
}

func formatBytes(x float64) string {
	const k = 1024
	switch ax := math.Abs(x); {
	case ax >= k*k*k:
		return strconv.FormatFloat(x/(k*k*k), 'f', 2, 64) + "GiB"
	case ax >= k*k:
		return strconv.FormatFloat(x/(k*k), 'f', 1, 64) + "MiB"
	case ax >= k:
		return strconv.FormatFloat(x/k, 'f', 1, 64) + "KiB"
	}
	return strconv.FormatFloat(x, 'f', 0, 64) + "B"
}

// FormatSeconds formats seconds with about three significant digits.
func FormatSeconds(s float64) string {
	neg := ""
	if s < 0 {
		neg, s = "-", -s
	}
	d := time.Duration(s * float64(time.Second))
	var out string
	switch {
	case d <= 0:
		return "0s"
	case d < time.Millisecond:
		out = strconv.FormatFloat(s*1e6, 'f', 0, 64) + "µs"
	case d < 10*time.Millisecond:
		out = strconv.FormatFloat(s*1e3, 'f', 2, 64) + "ms"
	case d < 100*time.Millisecond:
		out = strconv.FormatFloat(s*1e3, 'f', 1, 64) + "ms"
	case d < time.Second:
		out = strconv.FormatFloat(s*1e3, 'f', 0, 64) + "ms"
	case d < 10*time.Second:
		out = strconv.FormatFloat(s, 'f', 2, 64) + "s"
	case d < time.Minute:
		out = strconv.FormatFloat(s, 'f', 1, 64) + "s"
	default:
		d = d.Round(time.Second)
		out = fmt.Sprintf("%dm%02ds", int(d/time.Minute), int(d%time.Minute/time.Second))
	}
	return neg + out
}

// FormatChange formats a relative change as FormatPercent does, except
// that a rise to ten times the base or more reads as a factor ("×13.2",
// "×113410"), not as "+11340944%": such a base is near zero and the
// percentage means nothing.
func FormatChange(f float64) string {
	if f >= 9 && !math.IsInf(f, 1) {
		if f < 99 {
			return "×" + strconv.FormatFloat(1+f, 'f', 1, 64)
		}
		return "×" + strconv.FormatFloat(1+f, 'f', 0, 64)
	}
	return FormatPercent(f)
}

// FormatPercent formats a fraction (0.123) as a signed percentage (+12.3%).
// An infinite change is a change from 0 (RelChange), which no percentage
// describes: it reads "up from 0" or "down from 0".
func FormatPercent(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "up from 0"
	case math.IsInf(f, -1):
		return "down from 0"
	case math.IsNaN(f):
		return "?"
	}
	p := f * 100
	switch ap := math.Abs(p); {
	case ap >= 100:
		return fmt.Sprintf("%+.0f%%", p)
	case ap >= 0.05:
		return fmt.Sprintf("%+.1f%%", p)
	}
	return "0.0%"
}

// RelChange returns (new-old)/old; +Inf when old is 0 and new is larger,
// 0 when both are 0.
func RelChange(old, new float64) float64 {
	switch {
	case old == new:
		return 0
	case old == 0 && new > 0:
		return math.Inf(1)
	case old == 0:
		return math.Inf(-1)
	}
	return (new - old) / math.Abs(old)
}
