package self

import (
	"os"
	"path/filepath"
	"testing"
)

func TestPeakHeapProfile(t *testing.T) {
	dir := t.TempDir()
	p := &PeakHeapProfile{Path: filepath.Join(dir, "heap.pprof")}
	mtimes := func() int64 {
		st, err := os.Stat(p.Path)
		if err != nil {
			return -1
		}
		return st.ModTime().UnixNano()
	}
	steps := []struct {
		rss   int64
		write bool
	}{
		{100 << 20, true},  // first sample: always written
		{105 << 20, false}, // below 110 MiB
		{109 << 20, false},
		{110 << 20, true}, // a tenth above the last written peak
		{90 << 20, false},
		{200 << 20, true},
	}
	for i, s := range steps {
		os.Remove(p.Path)
		p.observe(s.rss)
		if wrote := mtimes() >= 0; wrote != s.write {
			t.Fatalf("step %d (rss %d MiB): wrote %v, want %v", i, s.rss>>20, wrote, s.write)
		}
	}
	os.Remove(p.Path)
	if err := p.Finish(); err != nil {
		t.Fatal(err)
	}
	if mtimes() >= 0 {
		t.Error("Finish rewrote a profile although one was written during the run")
	}
}

func TestPeakHeapProfileFinish(t *testing.T) {
	p := &PeakHeapProfile{Path: filepath.Join(t.TempDir(), "heap.pprof")}
	if err := p.Finish(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(p.Path)
	if err != nil {
		t.Fatalf("no profile written when no storm ran: %v", err)
	}
	// pprof's format is gzip-compressed protobuf.
	if len(data) < 2 || data[0] != 0x1f || data[1] != 0x8b {
		t.Fatalf("not a pprof profile: % x", data[:min(len(data), 8)])
	}

	bad := &PeakHeapProfile{Path: filepath.Join(t.TempDir(), "missing", "heap.pprof")}
	bad.observe(1 << 20)
	if err := bad.Finish(); err == nil {
		t.Error("Finish: no error for a directory that does not exist")
	}
	var none *PeakHeapProfile
	none.observe(1 << 20)
	if err := none.Finish(); err != nil {
		t.Errorf("nil profile: %v", err)
	}
}
