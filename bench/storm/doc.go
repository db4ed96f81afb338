// Package storm decides which nodes restart and when.
//
// A storm, everywhere in stormbench, is one variant run's coordinated
// restarts: the profile's storm section describes it, this package plays
// it, and the result's storm window (result.WindowStorm) is the time it
// spans, from its start to the gather after recovery. The "storm"
// measurement holds what the simulated kubelets did in it (their
// counters), and bench.Run's runStorms plays each variant's storm in turn.
//
// A profile's storm section (selection, waves, downtime distribution, seed)
// becomes a [Schedule] of [Restart]s ([NewSchedule]), deterministic for a
// seed and node list, which [Play] starts on a clock at their offsets. It
// also holds the one driver of a storm's restarts ([Restarter], [ByNode])
// and what a restart returns: its typed [Outcome] (when its node went
// down and reached each step after, its dropped status syncs, its error),
// which a [Recorder] builds as the restart goes. The run adds each
// outcome to [Outcomes] as its restart ends, for the measurements to read
// after the storm and the run to count its restarts ([Restarts]) and
// failures once. [Deal] is the one split of nodes between the shards of a
// sharded run.
//
// What a restart does on the API server is bench/kubelet's; which
// figures a storm yields is bench/measure's.
package storm
