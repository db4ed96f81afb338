package storm

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestByNode(t *testing.T) {
	var got []string
	record := func(side string, fail bool) Restarter {
		return RestarterFunc(func(_ context.Context, r Restart) Outcome {
			got = append(got, side+":"+r.Node)
			o := Outcome{Restart: r}
			if fail {
				o.Err = errors.New(side + " failed")
			}
			return o
		})
	}
	isReal := func(node string) bool { return strings.HasPrefix(node, "real-") }
	rs := ByNode(isReal, record("real", true), record("sim", false))
	for _, node := range []string{"n-0", "real-0", "n-1"} {
		o := rs.Restart(context.Background(), Restart{Node: node})
		if want := node == "real-0"; (o.Err != nil) != want || o.Node != node {
			t.Errorf("%s: outcome of %s, err = %v, want an error: %v", node, o.Node, o.Err, want)
		}
	}
	if want := "sim:n-0 real:real-0 sim:n-1"; strings.Join(got, " ") != want {
		t.Errorf("restarts went to %q, want %q", strings.Join(got, " "), want)
	}
}

// TestOutcomeCounts: a restart is an outcome whose node went down; a
// failure is one with an error, whether or not its node went down; a
// dropped status sync is a line for people, not a failed restart.
func TestOutcomeCounts(t *testing.T) {
	at := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
	outcomes := []Outcome{
		{Restart: Restart{Node: "n1"}, Kind: "kubelet", Down: at, ReportedReady: at.Add(time.Second),
			Dropped: []DroppedSync{{At: at, Pod: "ns/p", Err: errors.New("conflict")}}},
		{Restart: Restart{Node: "n2"}, Kind: "kubelet", Real: true, Down: at, Err: errors.New("real node: kubelet exited")},
		// Failed before its node went down (the ownership check, a drain):
		// it restarted nothing.
		{Restart: Restart{Node: "n3"}, Err: errors.New("real node not started by this run")},
		{Restart: Restart{Node: "n1"}, Down: at.Add(time.Minute)}, // restarted again
	}
	for _, tc := range []struct {
		name     string
		outcomes []Outcome
		restarts int
		failed   int
		first    string
		failures []string
	}{
		{"none", nil, 0, 0, "", nil},
		{"mixed", outcomes, 3, 2, "n2: real node: kubelet exited",
			[]string{"n1: ns/p: conflict", "n2: real node: kubelet exited", "n3: real node not started by this run"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Restarts(tc.outcomes); got != tc.restarts {
				t.Errorf("Restarts = %d, want %d", got, tc.restarts)
			}
			if got := Failed(tc.outcomes); got != tc.failed {
				t.Errorf("Failed = %d, want %d", got, tc.failed)
			}
			if got := FirstFailure(tc.outcomes); got != tc.first {
				t.Errorf("FirstFailure = %q, want %q", got, tc.first)
			}
			var lines []string
			for i := range tc.outcomes {
				lines = append(lines, tc.outcomes[i].Failures()...)
			}
			if !slices.Equal(lines, tc.failures) {
				t.Errorf("Failures = %q, want %q", lines, tc.failures)
			}
		})
	}
}

// TestRecorder: steps marked from concurrent goroutines land in one
// outcome, timed by the recorder's clock; Outcome ends it with its error.
func TestRecorder(t *testing.T) {
	at := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	tick := at
	now := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		tick = tick.Add(time.Second)
		return tick
	}
	rec := NewRecorder(Restart{Node: "n1", Wave: 2}, "reboot", false, now)
	rec.Mark(StepDown)
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Go(func() { rec.Dropped("ns/p"+string(rune('0'+i)), errors.New("conflict")) })
	}
	wg.Wait()
	rec.Synced(5)
	rec.Mark(StepReportedReady)
	o := rec.Outcome(errors.New("handing back"))
	if o.Node != "n1" || o.Wave != 2 || o.Kind != "reboot" || o.Pods != 5 || len(o.Dropped) != 10 {
		t.Fatalf("outcome %+v", o)
	}
	if !o.Down.Equal(at.Add(time.Second)) || !o.Synced.After(o.Down) || !o.ReportedReady.After(o.Synced) || !o.KubeletStart.IsZero() || !o.PodsRecovered.IsZero() {
		t.Errorf("steps down %v synced %v ready %v start %v recovered %v", o.Down, o.Synced, o.ReportedReady, o.KubeletStart, o.PodsRecovered)
	}
	if o.Err == nil || o.Err.Error() != "handing back" || !o.End.After(o.ReportedReady) {
		t.Errorf("err %v, end %v; want handing back, after Ready", o.Err, o.End)
	}
	if !o.Restarted() {
		t.Error("a restart whose node went down is not Restarted")
	}
}

func TestOutcomesAll(t *testing.T) {
	var s Outcomes
	s.Add(Outcome{Restart: Restart{Node: "n1"}})
	s.Add(Outcome{Restart: Restart{Node: "late"}})
	if all := s.All(); len(all) != 2 || all[1].Node != "late" {
		t.Errorf("outcomes %+v", all)
	}
	var none *Outcomes
	if none.All() != nil {
		t.Error("a nil Outcomes has outcomes")
	}
}
