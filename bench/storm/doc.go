// Package storm decides which nodes restart and when: a profile's storm
// section (selection, waves, downtime distribution, seed) becomes a
// [Schedule] of [Restart]s ([NewSchedule]), deterministic for a seed and
// node list, which [Play] starts on a clock at their offsets. It also holds
// the run's restart events ([EventLog]): what each restart did and when,
// which the measurements read after the storm.
//
// What a restart does on the API server is bench/kubelet's; which
// figures a storm yields is bench/measure's.
package storm
