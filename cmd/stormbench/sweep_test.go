package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/stormbench/stormbench/bench/measure/apiserver"
	"github.com/stormbench/stormbench/bench/measure/churn"
	"github.com/stormbench/stormbench/bench/result"
	"github.com/stormbench/stormbench/profiles"
)

func sweepVariant(size string, p99, throttled, outage float64) result.VariantRun {
	return result.VariantRun{
		Variant:  "default/wave=" + size,
		Complete: true,
		Measurements: []result.Measurement{
			{Name: apiserver.Name,
				Values: []result.Value{
					{Name: apiserver.Throttled, Window: result.WindowStorm, Value: throttled},
					{Name: apiserver.RequestRatePeak, Window: result.WindowStorm, Value: 100},
				},
				Histograms: []result.Histogram{{Name: apiserver.RequestDuration, Window: result.WindowStorm, Labels: map[string]string{result.LabelClass: apiserver.ClassMutating}, Summary: result.Summary{P99: p99}}},
			},
			{Name: churn.Name, Values: []result.Value{{Name: churn.SliceOutageSeconds, Window: result.WindowStorm, Value: outage}}},
		},
	}
}

func TestWriteSweep(t *testing.T) {
	tests := []struct {
		name     string
		variants []result.VariantRun
		want     string
	}{
		{"p99 breaks at 200", []result.VariantRun{sweepVariant("50", 0.1, 0, 0), sweepVariant("100", 0.4, 0, 0), sweepVariant("200", 1.5, 0, 0)}, "max safe restart wave: 100 nodes"},
		{"429s at 100", []result.VariantRun{sweepVariant("50", 0.1, 0, 0), sweepVariant("100", 0.2, 3, 0)}, "max safe restart wave: 50 nodes"},
		{"outage at the smallest", []result.VariantRun{sweepVariant("50", 0.1, 0, 2)}, "no wave size tried was safe"},
		// A safe size after an unsafe one does not count: capacity must hold
		// for every smaller wave too.
		{"not monotone", []result.VariantRun{sweepVariant("50", 0.1, 0, 0), sweepVariant("100", 2, 0, 0), sweepVariant("200", 0.1, 0, 0)}, "max safe restart wave: 50 nodes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := writeSweep(&b, &result.Result{Variants: tt.variants}); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.String(), tt.want) {
				t.Errorf("output lacks %q:\n%s", tt.want, b.String())
			}
		})
	}
}

func TestParseWaveSizes(t *testing.T) {
	p, err := profiles.Load("quick")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		in   string
		want string // error substring, or "" for success
	}{
		{"5,10,20", ""},
		{"", "required"},
		{"10,5", "must grow"},
		{"0", "between 1"},
		{"51", "between 1"},
		{"x", "not a size"},
	} {
		_, err := parseWaveSizes(tt.in, p)
		if (err == nil) != (tt.want == "") || (err != nil && !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("parseWaveSizes(%q) = %v, want %q", tt.in, err, tt.want)
		}
	}
}

func TestParseShard(t *testing.T) {
	for _, tc := range []struct {
		in   string
		i, n int
		ok   bool
	}{
		{"0/4", 0, 4, true},
		{"3/4", 3, 4, true},
		{"0/1", 0, 1, true},
		{"1/2x", 0, 0, false}, // Sscanf took this
		{"4/4", 0, 0, false},
		{"-1/4", 0, 0, false},
		{"+1/4", 0, 0, false},
		{"1/0", 0, 0, false},
		{"1", 0, 0, false},
		{"1/2/3", 0, 0, false},
		{" 1/2", 0, 0, false},
		{"", 0, 0, false},
	} {
		i, n, err := parseShard(tc.in)
		if (err == nil) != tc.ok || i != tc.i || n != tc.n {
			t.Errorf("parseShard(%q) = %d, %d, %v; want %d, %d, ok %v", tc.in, i, n, err, tc.i, tc.n, tc.ok)
		}
		if err != nil && !errors.As(err, new(usageError)) {
			t.Errorf("parseShard(%q): %v is not a usage error (exit 2)", tc.in, err)
		}
	}
}
