package main

import (
	"fmt"
	"io"
	"time"

	"github.com/stormbench/stormbench/bench"
	"github.com/stormbench/stormbench/bench/fleet"
	"github.com/stormbench/stormbench/bench/result"
	"github.com/stormbench/stormbench/bench/storm"
	"github.com/stormbench/stormbench/profiles"
)

// writePlan prints what a run would do, as --dry-run shows it: per variant
// (and per wave size of a sweep) the restarts the seed picks, their waves,
// downtimes and the modelled end of the storm, and this shard's share. The
// nodes are the fleet as stormbench would name and label it; a label
// selector is matched against those labels.
func writePlan(w io.Writer, p *profiles.Profile, runID string, sizes []int, shardI, shardN int) error {
	if p.Storm == nil {
		fmt.Fprintf(w, "Plan: provision %d nodes × %d pods (run %s), Kubernetes %s; the profile has no storm.\n", p.Fleet.Nodes, p.Fleet.PodsPerNode, runID, p.KubeVersion().Short())
		return nil
	}
	infos := make([]storm.NodeInfo, 0, p.Fleet.Nodes)
	for i := range p.Fleet.Nodes {
		n, err := fleet.BuildNode(fleet.NodeSpec{RunID: runID, Index: i, CPU: p.Fleet.NodeCPU, Memory: p.Fleet.NodeMemory, Pods: p.Fleet.MaxPodsPerNode})
		if err != nil {
			return err
		}
		infos = append(infos, storm.NodeInfo{Name: n.Name, Labels: n.Labels})
	}
	type step struct {
		name string
		st   *profiles.Storm
	}
	var steps []step
	for _, v := range p.ResolvedVariants() {
		if len(sizes) == 0 {
			steps = append(steps, step{v.Name, p.Storm})
			continue
		}
		for _, size := range sizes {
			st := *p.Storm
			st.Select = profiles.Selection{Count: size, LabelSelector: p.Storm.Select.LabelSelector}
			st.Waves = profiles.Waves{}
			steps = append(steps, step{result.SweepVariantName(v.Name, size), &st})
		}
	}
	fmt.Fprintf(w, "Plan: %d nodes × %d pods (run %s), Kubernetes %s, %s storm, seed %d, %d repetition(s) per variant:\n",
		p.Fleet.Nodes, p.Fleet.PodsPerNode, runID, p.KubeVersion().Short(), p.Storm.Kind, p.Seed, p.Repetitions.Count)
	if p.Repetitions.Vary() && p.Repetitions.Count > 1 {
		fmt.Fprintf(w, "  (repetitions.seeds: vary: each block plays its own schedule, from seeds %v; below, the first block's)\n", bench.BlockSeeds(p))
	}
	for _, s := range steps {
		sched, err := storm.NewSchedule(s.st, p.Seed, infos)
		if err != nil {
			return usagef("%s: %v", s.name, err)
		}
		lo, hi := time.Duration(-1), time.Duration(0)
		for _, r := range sched.Restarts {
			if lo < 0 || r.Downtime < lo {
				lo = r.Downtime
			}
			hi = max(hi, r.Downtime)
		}
		interval := "at once"
		if sched.Waves > 1 {
			interval = "every " + s.st.Waves.Interval.Duration.String()
		}
		line := fmt.Sprintf("  %-24s %d of %d candidate nodes in %d wave(s) of %d %s, down %s to %s, Ready again by %s",
			s.name, len(sched.Restarts), sched.Candidates, sched.Waves, sched.WaveSize, interval, max(lo, 0).Round(100*time.Millisecond), hi.Round(100*time.Millisecond), sched.End.Round(time.Second))
		if shardN > 1 {
			line += fmt.Sprintf("; shard %d/%d restarts %d", shardI, shardN, len(sched.Shard(shardI, shardN)))
		}
		fmt.Fprintln(w, line)
	}
	return nil
}

// writeStart prints when the storm starts: at a shared --start-at (with how
// long from now), or as soon as the fleet is provisioned.
func writeStart(w io.Writer, at, now time.Time) {
	if at.IsZero() {
		fmt.Fprintln(w, "Start: as soon as the fleet is provisioned and the request rate has settled (no --start-at)")
		return
	}
	fmt.Fprintf(w, "Start: %s (in %s); the fleet must be provisioned by then\n", at.UTC().Format(time.RFC3339), at.Sub(now).Round(time.Second))
}
