package host

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/procfs"

	"github.com/stormbench/stormbench/bench/result"
)

// procStat is a /proc/stat of a two-CPU machine (Linux 5.x), trimmed after
// the cpu lines' neighbours.
const procStat = `cpu  21738 5 9829 12967 191 7 158 40 11 0
cpu0 10681 0 4763 6904 41 0 36 0 0 0
cpu1 11057 5 5066 6062 149 7 122 40 11 0
intr 3453627 0 9 0 0 0 0 0 0 0 0
ctxt 7070155
btime 1764781030
processes 16069
procs_running 3
procs_blocked 0
softirq 1569049 0 247096 0 31095 0 0 2 538049 0 752807
`

func TestReadCPUTimes(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       CPUTimes
		wantErr    string
	}{
		{name: "linux 5", text: procStat, want: CPUTimes{User: 217.38, Nice: 0.05, System: 98.29, Idle: 129.67, IOWait: 1.91, IRQ: 0.07, SoftIRQ: 1.58, Steal: 0.4, CPUs: 2}},
		{name: "old kernel without steal", text: "cpu 10 0 20 30 4 0 1\ncpu0 10 0 20 30 4 0 1\n", want: CPUTimes{User: 0.1, System: 0.2, Idle: 0.3, IOWait: 0.04, SoftIRQ: 0.01, CPUs: 1}},
		{name: "no cpu line", text: "cpu0 1 2 3 4\nintr 5\n", wantErr: "no cpu line"},
		{name: "not a number", text: "cpu 1 2 x 4\n", wantErr: `"cpu 1 2 x 4"`},
		{name: "empty", text: "", wantErr: "no cpu line"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			fs, err := procfs.NewFS(dir)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ReadCPUTimes(fs)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestUsage(t *testing.T) {
	base := CPUTimes{User: 1000, System: 500, Idle: 3000, IOWait: 100, Steal: 10, CPUs: 2}
	for _, tc := range []struct {
		name   string
		cur    CPUTimes
		want   HostUsage
		wantOK bool
	}{
		// 200 ticks (1 s on 2 CPUs at 100 Hz): 150 user, 30 idle, 10
		// iowait, 10 steal: busy = 1 - 40/200.
		{name: "busy with steal and iowait", cur: CPUTimes{User: 1150, System: 500, Idle: 3030, IOWait: 110, Steal: 20}, want: HostUsage{Busy: 0.8, IOWait: 0.05, Steal: 0.05}, wantOK: true},
		{name: "idle", cur: CPUTimes{User: 1000, System: 500, Idle: 3200, IOWait: 100, Steal: 10}, want: HostUsage{Busy: 0}, wantOK: true},
		{name: "all busy", cur: CPUTimes{User: 1100, System: 600, Idle: 3000, IOWait: 100, Steal: 10}, want: HostUsage{Busy: 1}, wantOK: true},
		{name: "no tick", cur: base},
		{name: "counters back", cur: CPUTimes{User: 1500, System: 500, Idle: 2900, IOWait: 100, Steal: 10}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := Usage(base, tc.cur)
			if ok != tc.wantOK {
				t.Fatalf("ok = %v, want %v", ok, tc.wantOK)
			}
			if !near(got.Busy, tc.want.Busy) || !near(got.IOWait, tc.want.IOWait) || !near(got.Steal, tc.want.Steal) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func samplesOf(secs float64, busy ...float64) []hostSample {
	var out []hostSample
	for i, b := range busy {
		out = append(out, hostSample{end: float64(i+1) * secs, seconds: secs, usage: HostUsage{Busy: b}})
	}
	return out
}

// windowValue is a figure of hostWindowValues over the samples, those of at
// least half a second long counting for the maximum.
func windowValue(samples []hostSample, name string) float64 {
	for _, v := range hostWindowValues(result.WindowStorm, samples, 2, 0.5) {
		if v.Name == name {
			return v.Value
		}
	}
	return math.NaN()
}

func TestSaturatedSecondsAndPercentiles(t *testing.T) {
	s := samplesOf(1, 0.5, 0.95, 0.9, 0.89, 1.0)
	if got := windowValue(s, SaturatedSeconds); got != 3 {
		t.Errorf("saturated seconds = %v, want 3 (0.95, 0.9 and 1.0 are at least 90 %% busy)", got)
	}
	if got := busyPercentile(s, 50); got != 0.9 {
		t.Errorf("p50 = %v, want 0.9", got)
	}
	if got := busyPercentile(s, 100); got != 1.0 {
		t.Errorf("p100 = %v, want 1", got)
	}
	// Time-weighted: a 4 s idle interval outweighs three 1 s busy ones.
	w := append(samplesOf(1, 1, 1, 1), hostSample{seconds: 4, usage: HostUsage{Busy: 0.1}})
	if got := busyPercentile(w, 50); got != 0.1 {
		t.Errorf("weighted p50 = %v, want 0.1", got)
	}
	if got := windowValue(w, SaturatedSeconds); got != 3 {
		t.Errorf("weighted saturated = %v, want 3", got)
	}
	// A 0.05 s sliver at 100 % is not the maximum; without long samples it is.
	sl := append(samplesOf(1, 0.4, 0.6), hostSample{seconds: 0.05, usage: HostUsage{Busy: 1}})
	if got := windowValue(sl, BusyMax); got != 0.6 {
		t.Errorf("max = %v, want 0.6", got)
	}
	if got := windowValue(sl[2:], BusyMax); got != 1 {
		t.Errorf("max of slivers = %v, want 1", got)
	}
	if got := busyPercentile(nil, 50); got != 0 {
		t.Errorf("p50 of nothing = %v", got)
	}
}

func TestIsHostBound(t *testing.T) {
	for _, tc := range []struct {
		saturated, window float64
		want              bool
	}{
		{0, 100, false},
		{10, 100, false}, // exactly 10 %: not more than
		{10.5, 100, true},
		{100, 100, true},
		{1, 5, true},
		{0, 0, false},
		{3, 0, false}, // no window
	} {
		if got := IsBound(tc.saturated, tc.window); got != tc.want {
			t.Errorf("IsHostBound(%v, %v) = %v, want %v", tc.saturated, tc.window, got, tc.want)
		}
	}
}
