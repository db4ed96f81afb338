package bench

import (
	"github.com/stormbench/stormbench/bench/realnode"

	"math"
	"runtime/debug"
	"testing"
)

// TestTuneGC: without GOGC and GOMEMLIMIT the load generator's settings
// apply and the result reads them back; a GOGC or GOMEMLIMIT in the
// environment wins.
func TestTuneGC(t *testing.T) {
	gc := debug.SetGCPercent(100)
	limit := debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() {
		debug.SetGCPercent(gc)
		debug.SetMemoryLimit(limit)
	})
	if got := GoRuntimeSettings(); got.GOGC != 100 || got.MemoryLimitBytes != 0 || got.GOMAXPROCS < 1 {
		t.Fatalf("before tuning: %+v, want GOGC 100, no memory limit", got)
	}

	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	TuneGC()
	got := GoRuntimeSettings()
	if got.GOGC != LoadGeneratorGOGC {
		t.Errorf("GOGC %d, want %d", got.GOGC, LoadGeneratorGOGC)
	}
	if total := realnode.MemTotal(); total > 0 && got.MemoryLimitBytes != max(total/4, 1<<30) {
		t.Errorf("memory limit %d, want a quarter of %d", got.MemoryLimitBytes, total)
	}

	debug.SetGCPercent(100)
	debug.SetMemoryLimit(math.MaxInt64)
	t.Setenv("GOGC", "100")
	t.Setenv("GOMEMLIMIT", "off")
	TuneGC()
	if got := GoRuntimeSettings(); got.GOGC != 100 || got.MemoryLimitBytes != 0 {
		t.Errorf("with GOGC and GOMEMLIMIT set: %+v, want them untouched", got)
	}
}

// TestGoRuntimeSettingsOff: GC off reads as -1, and reading changes nothing.
func TestGoRuntimeSettingsOff(t *testing.T) {
	gc := debug.SetGCPercent(-1)
	t.Cleanup(func() { debug.SetGCPercent(gc) })
	if got := GoRuntimeSettings().GOGC; got != -1 {
		t.Errorf("GOGC off reads %d, want -1", got)
	}
	if now := debug.SetGCPercent(-1); now != -1 {
		t.Errorf("reading the settings changed GOGC to %d", now)
	}
}
