package bench

import (
	"time"

	"k8s.io/utils/clock"

	"github.com/stormbench/stormbench/bench/cluster"
	"github.com/stormbench/stormbench/bench/fleet"
	"github.com/stormbench/stormbench/bench/measure/self"
	"github.com/stormbench/stormbench/bench/result"
	"github.com/stormbench/stormbench/profiles"
)

// Options configure one run.
type Options struct {
	// Profile is the resolved profile.
	Profile *profiles.Profile
	// RunID labels every object of the run.
	RunID string
	// Target is the connected cluster (harness identity).
	Target *cluster.Target
	// Embedded is the embedded cluster, or nil for an existing one.
	Embedded *cluster.Embedded
	// Progress receives progress of long steps.
	Progress fleet.Progress
	// Logf receives one-line progress messages; optional.
	Logf func(format string, args ...any)
	// Checkpoint is called with the result so far after every variant
	// and when the run stops early, so partial results are never lost.
	Checkpoint func(*result.Result) error
	// KeepFleet leaves the fleet in place at the end.
	KeepFleet bool
	// Shard restricts restarts to this shard's share: index and count.
	ShardIndex, ShardCount int
	// StartAt delays the first storm's start to this time (shared by shards).
	StartAt time.Time
	// SweepWaveSizes, when set, runs the storm all at once at each of these
	// sizes, one after another on the same fleet (a capacity sweep); the
	// variants are named "<variant>/wave=<size>".
	SweepWaveSizes []int
	// HeapProfile, when set, receives heap profiles at stormbench's RSS
	// peaks during the storms (see self.SelfCost).
	HeapProfile *self.PeakHeapProfile
	// RestoreEach starts every storm of an embedded cluster from the same
	// fleet (isolate): saved once provisioned and restored before each
	// storm, into the control plane of the storm's Kubernetes version. run
	// sets it unless --no-restore; without it every storm starts from the
	// state the previous one left, and the result says so. Variants of
	// other Kubernetes versions than the profile's need it.
	RestoreEach bool
	// FromSnapshot is the fleet snapshot the embedded cluster was restored
	// from before the run (run --from-snapshot): with RestoreEach the
	// storms after the first start from it again, and the fleet is not
	// saved.
	FromSnapshot string
	// Clock is injected for tests; default the real clock.
	Clock clock.Clock
}

// Storms is how many storms a run of the profile plays: every variant
// (at every sweep wave size) times the repetitions.
func Storms(p *profiles.Profile, sweepWaveSizes int) int {
	return len(p.ResolvedVariants()) * max(1, sweepWaveSizes) * p.Repetitions.Count
}

// BlockSeeds returns the seed of every block of the profile's repetitions:
// the profile's seed in each, or with repetitions.seeds: vary each block's
// own (profiles.BlockSeed), so that each block plays its own schedule.
func BlockSeeds(p *profiles.Profile) []int64 {
	seeds := make([]int64, max(1, p.Repetitions.Count))
	for b := range seeds {
		seeds[b] = p.Seed
		if p.Repetitions.Vary() {
			seeds[b] = profiles.BlockSeed(p.Seed, b)
		}
	}
	return seeds
}
