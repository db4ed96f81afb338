package self

import (
	"bytes"
	"fmt"
	"runtime/pprof"
	"sync"

	"github.com/stormbench/stormbench/bench/outfile"
)

// PeakHeapProfile writes a pprof heap profile of stormbench each time its
// RSS during a storm passes the last written peak by a tenth, so the file
// ends up holding the heap near the run's peak: the memory a storm's
// syncing kubelets hold at once, not what is left after the storms.
type PeakHeapProfile struct {
	// Path is the profile file; it is replaced atomically.
	Path string

	mu      sync.Mutex
	written int64 // RSS when the file was last written
	err     error
}

// observe is called with each RSS sample; it writes a profile when rss is
// a new peak by 10 % or more. Safe for concurrent use; nil does nothing.
func (p *PeakHeapProfile) observe(rss int64) {
	if p == nil || p.Path == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil || rss < p.written+p.written/10 || rss == 0 {
		return
	}
	if err := p.write(); err != nil {
		p.err = err
		return
	}
	p.written = rss
}

// write replaces the file with the current heap profile, atomically as
// the result and report files are written.
func (p *PeakHeapProfile) write() error {
	var buf bytes.Buffer
	if err := pprof.Lookup("heap").WriteTo(&buf, 0); err != nil {
		return err
	}
	// Replaced at every new peak: the command checked the path (and its
	// --force) before the run.
	return outfile.Write(p.Path, buf.Bytes(), outfile.Options{Force: true})
}

// Finish writes a profile if none was written during the run (no storm
// ran), and reports the first error met.
func (p *PeakHeapProfile) Finish() error {
	if p == nil || p.Path == "" {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err == nil && p.written == 0 {
		p.err = p.write()
	}
	if p.err != nil {
		return fmt.Errorf("heap profile %s: %w", p.Path, p.err)
	}
	return nil
}
