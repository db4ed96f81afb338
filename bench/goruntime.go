package bench

import (
	"bufio"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/stormbench/stormbench/bench/result"
)

// LoadGeneratorGOGC is the GC percent stormbench runs with unless GOGC is
// set: a simulated kubelet's allocations are short-lived (decoded
// responses, patches, request headers) and its live heap small, so the
// default 100 collects several times a second during a storm and spends
// CPU the control plane on the same machine would otherwise have. The
// memory limit below keeps the heap from running away.
const LoadGeneratorGOGC = 400

// TuneGC sets stormbench's garbage-collector settings for a load
// generator: GOGC LoadGeneratorGOGC and a soft memory limit of a quarter
// of the machine's memory (at least 1 GiB), each unless its environment
// variable (GOGC, GOMEMLIMIT) says otherwise.
func TuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(LoadGeneratorGOGC)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		if total := memTotal(); total > 0 {
			debug.SetMemoryLimit(max(total/4, 1<<30))
		}
	}
}

// GoRuntimeSettings returns the process's garbage-collector settings, for
// the result.
func GoRuntimeSettings() *result.GoRuntime {
	gc := debug.SetGCPercent(-1)
	debug.SetGCPercent(gc)
	limit := debug.SetMemoryLimit(-1) // a negative limit reads it
	if limit == math.MaxInt64 {
		limit = 0
	}
	return &result.GoRuntime{GOGC: gc, MemoryLimitBytes: limit, GOMAXPROCS: runtime.GOMAXPROCS(0)}
}

// memTotal is /proc/meminfo's MemTotal in bytes; 0 when unknown.
func memTotal() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}
