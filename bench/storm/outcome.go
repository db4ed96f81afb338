package storm

import (
	"sync"
	"time"
)

// Outcome is the typed result of one restart, as its Restarter returns it:
// when its node went down and reached each step after, zero for a step it
// did not reach.
type Outcome struct {
	// Restart is the scheduled restart.
	Restart
	// Kind is the restart's kind (profiles.StormKubelet, StormRuntime,
	// StormReboot); Real marks a node with a real kubelet.
	Kind string
	Real bool
	// Down is when the node's kubelet, runtime or the whole node went down;
	// zero when the restart failed before that (it is not a restart then).
	Down time.Time
	// KubeletStart: the kubelet started again and began its start-up
	// requests.
	KubeletStart time.Time
	// Synced: its informers had synced; Pods is the number of the node's
	// pods then.
	Synced time.Time
	Pods   int
	// ReportedReady: the node reported Ready and was handed back to KWOK.
	ReportedReady time.Time
	// PodsRecovered: every pod of the node was Ready again.
	PodsRecovered time.Time
	// Dropped are the pod status syncs given up after their retries.
	Dropped []DroppedSync
	// End is when the restart was over (its restarter returned).
	End time.Time
	// Err is why the restart failed; nil when it did not.
	Err error
}

// DroppedSync is a pod status sync given up after its retries.
type DroppedSync struct {
	// At is when it was given up; Pod is namespace/name.
	At  time.Time
	Pod string
	Err error
}

// Restarted reports whether the restart took its node down: the one
// definition of a restart that Outcomes.Restarts counts.
func (o *Outcome) Restarted() bool { return !o.Down.IsZero() }

// Failures are the outcome's failures as lines for people: "node: error"
// for a failed restart, "node: pod: error" for each dropped status sync.
func (o *Outcome) Failures() []string {
	var out []string
	if o.Err != nil {
		out = append(out, o.Node+": "+o.Err.Error())
	}
	for _, d := range o.Dropped {
		out = append(out, o.Node+": "+d.Pod+": "+d.Err.Error())
	}
	return out
}

// Outcomes keeps a storm's outcomes as its restarts end: the measurements
// read them after the storm (Env.Outcomes), and the run counts its
// restarts and failures from them. It is safe for concurrent use.
type Outcomes struct {
	mu   sync.Mutex
	list []Outcome
}

// Add keeps an outcome, also one of a restart that ends after the storm
// gave up on it.
func (s *Outcomes) Add(o Outcome) {
	s.mu.Lock()
	s.list = append(s.list, o)
	s.mu.Unlock()
}

// All returns a copy of the outcomes in the order they were added; nil
// for a nil Outcomes (no storm ran).
func (s *Outcomes) All() []Outcome {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Outcome(nil), s.list...)
}

// Restarts counts the outcomes that took their node down. It is the one
// count of restarts: the variant's Restarts, the excess requests per
// restart and the recovery measurement all divide by it.
func Restarts(outcomes []Outcome) int { return count(outcomes, (*Outcome).Restarted) }

// Failed counts the failed restarts: the outcomes with an error.
func Failed(outcomes []Outcome) int {
	return count(outcomes, func(o *Outcome) bool { return o.Err != nil })
}

// count counts the outcomes for which is holds.
func count(outcomes []Outcome, is func(*Outcome) bool) int {
	n := 0
	for i := range outcomes {
		if is(&outcomes[i]) {
			n++
		}
	}
	return n
}

// FirstFailure is the first failed restart, "node: error"; "" for none.
func FirstFailure(outcomes []Outcome) string {
	for i := range outcomes {
		if o := &outcomes[i]; o.Err != nil {
			return o.Node + ": " + o.Err.Error()
		}
	}
	return ""
}

// Recorder builds one restart's Outcome as the restart goes: restarters
// mark its steps from their goroutines (a simulated kubelet's pod workers
// and node loop run concurrently). The zero value is not usable; see
// NewRecorder.
type Recorder struct {
	mu  sync.Mutex
	o   Outcome
	now func() time.Time
}

// NewRecorder starts the outcome of r, timing its steps with now.
func NewRecorder(r Restart, kind string, real bool, now func() time.Time) *Recorder {
	return &Recorder{o: Outcome{Restart: r, Kind: kind, Real: real}, now: now}
}

// Step is a step of a restart that Recorder.Mark records.
type Step int

// The steps, in the order a node passes through them.
const (
	StepDown Step = iota
	StepKubeletStart
	StepSynced
	StepReportedReady
	StepPodsRecovered
)

// Mark records that the restart reached step now.
func (r *Recorder) Mark(step Step) {
	t := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	*[...]*time.Time{&r.o.Down, &r.o.KubeletStart, &r.o.Synced, &r.o.ReportedReady, &r.o.PodsRecovered}[step] = t
}

// Synced records the informers' sync with the node's pod count.
func (r *Recorder) Synced(pods int) {
	t := r.now()
	r.mu.Lock()
	r.o.Synced, r.o.Pods = t, pods
	r.mu.Unlock()
}

// Dropped records a pod status sync given up.
func (r *Recorder) Dropped(pod string, err error) {
	t := r.now()
	r.mu.Lock()
	r.o.Dropped = append(r.o.Dropped, DroppedSync{At: t, Pod: pod, Err: err})
	r.mu.Unlock()
}

// Outcome ends the restart now and returns its outcome, with err as its
// error.
func (r *Recorder) Outcome(err error) Outcome {
	t := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	o := r.o
	o.End, o.Err = t, err
	o.Dropped = append([]DroppedSync(nil), o.Dropped...)
	return o
}
