package bench

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"

	"github.com/stormbench/stormbench/bench/realnode"
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
		if total := realnode.MemTotal(); total > 0 {
			debug.SetMemoryLimit(max(total/4, 1<<30))
		}
	}
}

// GoRuntimeSettings returns the process's garbage-collector settings, for
// the result, read from runtime/metrics (no setter is touched).
func GoRuntimeSettings() *result.GoRuntime {
	samples := []metrics.Sample{{Name: "/gc/gogc:percent"}, {Name: "/gc/gomemlimit:bytes"}}
	metrics.Read(samples)
	out := &result.GoRuntime{GOGC: -1, GOMAXPROCS: runtime.GOMAXPROCS(0)}
	if v := samples[0].Value; v.Kind() == metrics.KindUint64 {
		// The runtime stores GC off as -1 and reports it as a uint64.
		out.GOGC = int(int64(v.Uint64()))
	}
	if v := samples[1].Value; v.Kind() == metrics.KindUint64 && v.Uint64() < math.MaxInt64 {
		out.MemoryLimitBytes = int64(v.Uint64())
	}
	return out
}
