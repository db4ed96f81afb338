package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stormbench/stormbench/bench/result"
	"github.com/stormbench/stormbench/bench/testutil"
)

// summaryFixture is the result package's schema fixture, a fixed
// two-variant result covering every summary row.
func summaryFixture(t *testing.T) *result.Result {
	t.Helper()
	r, err := result.ReadFile("../result/testdata/result.golden.json")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestSummaryGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteSummary(&buf, summaryFixture(t)); err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, "summary.golden", buf.Bytes())
}

func TestSummaryIncompleteAndRepetitions(t *testing.T) {
	r := summaryFixture(t)
	r.Complete = false
	r.Variants[1].Variant = "legacy"
	r.Variants[1].Repetition = 1
	r.Variants[1].Measurements = nil
	r.Errors = []string{"interrupted"}
	var buf bytes.Buffer
	if err := WriteSummary(&buf, r); err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, "summary-incomplete.golden", buf.Bytes())
}

func TestSummaryRelaxedHeartbeats(t *testing.T) {
	tests := []struct {
		factor float64
		want   string // "" means no note
	}{
		{0, ""},
		{1, ""},
		{5, "relaxed heartbeats: heartbeatFactor 5 (3m20s leases, status every 50s, 4m10s grace period); not a fleet at kubelet timing\n"},
	}
	for _, tt := range tests {
		r := summaryFixture(t)
		s := &r.Run.Cluster.Settings
		s.HeartbeatFactor = tt.factor
		s.NodeLeaseDuration = result.Duration(200 * time.Second)
		s.NodeStatusUpdateFrequency = result.Duration(50 * time.Second)
		s.NodeMonitorGracePeriod = result.Duration(250 * time.Second)
		var buf bytes.Buffer
		if err := WriteSummary(&buf, r); err != nil {
			t.Fatal(err)
		}
		has := strings.Contains(buf.String(), "relaxed heartbeats")
		if has != (tt.want != "") || (tt.want != "" && !strings.Contains(buf.String(), tt.want)) {
			t.Errorf("factor %g: summary\n%s\nwant note %q", tt.factor, buf.String(), tt.want)
		}
	}
}

func TestFmtSeconds(t *testing.T) {
	tests := map[float64]string{
		0: "0s", 0.0000421: "42µs", 0.00123: "1.23ms", 0.0456: "45.6ms", 0.5: "500ms",
		1.234: "1.23s", 12.34: "12.3s", 62.4: "1m02s", 3600: "60m00s",
	}
	for in, want := range tests {
		if got := fmtSeconds(in); got != want {
			t.Errorf("fmtSeconds(%v) = %q, want %q", in, got, want)
		}
	}
}
