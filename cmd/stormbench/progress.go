package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/stormbench/stormbench/bench/fleet"
)

// progress draws a bar on a TTY and prints a plain line every few seconds
// otherwise (CI logs).
type progress struct {
	w   io.Writer
	tty bool

	mu       sync.Mutex
	bar      *progressbar.ProgressBar
	step     string
	total    int
	done     int
	lastLine time.Time
	started  time.Time
}

var _ fleet.Progress = (*progress)(nil)

func newProgress(w io.Writer) *progress {
	f, ok := w.(*os.File)
	return &progress{w: w, tty: ok && isTTY(f)}
}

func (p *progress) Start(step string, total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.step, p.total, p.done, p.started = step, total, 0, time.Now()
	if p.tty {
		p.bar = progressbar.NewOptions(total,
			progressbar.OptionSetWriter(p.w),
			progressbar.OptionSetDescription(step),
			progressbar.OptionShowCount(),
			progressbar.OptionSetWidth(30),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
		)
		return
	}
	fmt.Fprintf(p.w, "%s: 0/%d\n", step, total)
	p.lastLine = time.Now()
}

func (p *progress) Add(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.setLocked(p.done + n)
}

func (p *progress) Set(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.setLocked(n)
}

func (p *progress) setLocked(n int) {
	p.done = n
	if p.bar != nil {
		_ = p.bar.Set(n)
		return
	}
	if time.Since(p.lastLine) >= 5*time.Second {
		fmt.Fprintf(p.w, "%s: %d/%d (%s)\n", p.step, p.done, p.total, time.Since(p.started).Round(time.Second))
		p.lastLine = time.Now()
	}
}

func (p *progress) Done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		_ = p.bar.Finish()
		p.bar = nil
	}
	if p.step != "" {
		fmt.Fprintf(p.w, "%s: %d/%d done in %s\n", p.step, p.done, p.total, time.Since(p.started).Round(100*time.Millisecond))
	}
	p.step = ""
}
