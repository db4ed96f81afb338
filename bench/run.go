package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	"github.com/stormbench/stormbench/bench/fleet"
	"github.com/stormbench/stormbench/bench/kubelet"
	"github.com/stormbench/stormbench/bench/kubeversion"
	"github.com/stormbench/stormbench/bench/measure"
	"github.com/stormbench/stormbench/bench/measure/clientlatency"
	"github.com/stormbench/stormbench/bench/measure/host"
	"github.com/stormbench/stormbench/bench/measure/registry"
	"github.com/stormbench/stormbench/bench/measure/self"
	"github.com/stormbench/stormbench/bench/poll"
	"github.com/stormbench/stormbench/bench/realnode"
	"github.com/stormbench/stormbench/bench/result"
	"github.com/stormbench/stormbench/bench/storm"
	"github.com/stormbench/stormbench/bench/watchers"
	"github.com/stormbench/stormbench/profiles"
)

// Run names other runs' leftovers, provisions the fleet, runs every variant and repetition of the
// profile's storm with its measurements, and returns the result. When ctx is
// cancelled it stops starting restarts, brings every node back, gathers what
// it has and returns the result marked incomplete together with the error.
func Run(ctx context.Context, o Options) (_ *result.Result, err error) {
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Progress == nil {
		o.Progress = fleet.NopProgress{}
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	// A run given a shard records it, for merge; an unsharded run has none.
	var shard *result.Shard
	if o.ShardCount > 0 {
		shard = &result.Shard{Index: o.ShardIndex, Count: o.ShardCount}
	}
	if o.ShardCount == 0 {
		o.ShardCount = 1
	}
	p := o.Profile
	res, err := newResult(o)
	if err != nil {
		return nil, err
	}
	res.Run.Shard = shard
	if err := logLeftovers(ctx, o); err != nil {
		return res, err
	}
	if err := checkRealNodes(o); err != nil {
		return res, err
	}
	f, err := fleet.New(o.Target.Client, o.RunID, p.Fleet, o.Progress)
	if err != nil {
		return res, err
	}
	iso, err := isolate(o, f)
	if err != nil {
		return res, err
	}
	defer iso.cleanup()
	if p.ComparesVersions() && iso.reset == nil {
		return res, errNeedsSnapshot
	}
	res.Run.Isolation = iso.mode
	f.SetClock(o.Clock)
	rn := &realNodes{o: o, nodes: map[string]realnode.Runner{}}
	f.SetRealNodeStarter(rn.start)
	// After the fleet is deleted (below): its pods on real nodes need
	// their kubelets to go.
	defer func() {
		if serr := rn.stop(); serr != nil {
			err = errors.Join(err, serr)
		}
	}()
	f.SetStaleReadinessFixer(kubelet.StaleReadinessFixer(o.Target.Config, nil))
	res.Run.Fleet = result.Fleet{Nodes: p.Fleet.Nodes, Pods: f.Plan().ExpectedPods, Services: f.Plan().Services}
	o.Logf("Provisioning fleet %q: %d nodes, %d pods, %d services", o.RunID, p.Fleet.Nodes, f.Plan().ExpectedPods, f.Plan().Services)
	provStart := o.Clock.Now()
	if err := f.Up(ctx); err != nil {
		var hint string
		if o.Embedded != nil {
			hint = o.Embedded.Diagnose()
		}
		return res, fmt.Errorf("provisioning fleet: %w%s", err, hint)
	}
	o.Logf("Fleet Ready in %s", o.Clock.Since(provStart).Round(100*time.Millisecond))
	// An interrupt during the settle wait still deletes the fleet below.
	runErr := settleAfterProvisioning(ctx, o)
	if runErr == nil && iso.save != nil {
		o.Logf("Saving the provisioned fleet: every storm starts from it")
		if err := iso.save(ctx); err != nil {
			runErr = fmt.Errorf("saving the provisioned fleet: %w", err)
		}
	}
	if runErr == nil {
		runErr = runStorms(ctx, o, f, rn, res, iso)
	}
	res.Run.End = o.Clock.Now()
	res.Complete = runErr == nil
	if runErr != nil {
		res.Errors = append(res.Errors, runErr.Error())
	}
	if o.Checkpoint != nil {
		if err := o.Checkpoint(res); err != nil {
			runErr = errors.Join(runErr, err)
		}
	}
	if !o.KeepFleet {
		o.Logf("Deleting fleet %q", o.RunID)
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Minute)
		defer cancel()
		if err := fleet.Delete(dctx, o.Target.Client, o.RunID, 10*time.Minute, o.Progress); err != nil {
			runErr = errors.Join(runErr, fmt.Errorf("deleting fleet: %w (remove it with `stormbench fleet down --run-id %s`)", err, o.RunID))
		}
	}
	return res, runErr
}

// logLeftovers names other runs' nodes and namespaces on the cluster: they
// load it as this run does. A listing refused is not the run's failure
// (it is said, and the run goes on); one the API server did not answer,
// or that the run's end cut short, is: every later request would wait as
// long, and this is the failure to name.
func logLeftovers(ctx context.Context, o Options) error {
	runs, err := fleet.ListRuns(ctx, o.Target.Client)
	switch {
	case err == nil:
	case ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("listing other runs' leftovers: %w", err)
	default:
		o.Logf("Warning: listing other runs' leftovers: %v", err)
		return nil
	}
	for _, r := range runs {
		if r.RunID != o.RunID {
			o.Logf("Leftovers of run %s: %d nodes (%d not handed back to KWOK), %d namespaces; remove them with `stormbench cleanup --run-id %s`", r.RunID, r.Nodes, r.DownNodes, r.Namespaces, r.RunID)
		}
	}
	return nil
}

func newResult(o Options) (*result.Result, error) {
	p := o.Profile
	raw, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("encoding profile %s: %w", p.Metadata.Name, err)
	}
	versions := map[string]string{"kube-apiserver": o.Target.ServerVersion}
	var flags map[string]map[string]string
	var apf string
	var cpus float64 // the embedded control plane's CPU budget (controlPlane.cpus)
	if o.Embedded != nil {
		apf, cpus = o.Embedded.APFMode(), o.Embedded.CPUBudget()
		// Only the embedded cluster's flags are known, and they are the
		// cluster's, which need not be this profile's.
		flags = map[string]map[string]string{"kube-controller-manager": {"node-eviction-rate": o.Embedded.NodeEvictionRate()}}
	}
	return &result.Result{
		SchemaVersion: result.SchemaVersion,
		Run: result.Run{
			ID:          o.RunID,
			ToolVersion: Version,
			GitRevision: GitRevision,
			Start:       o.Clock.Now(),
			Cluster: result.Cluster{
				Embedded:          o.Embedded != nil,
				KubernetesVersion: p.KubeVersion().String(),
				ControlPlaneCPUs:  cpus,
				Versions:          versions,
				Settings: result.Settings{
					NodeMonitorGracePeriod:    result.Duration(time.Duration(float64(p.Timing.NodeMonitorGracePeriod.Duration) * p.Timing.HeartbeatFactor)),
					NodeLeaseDuration:         result.Duration(time.Duration(float64(p.Timing.NodeLeaseDurationSeconds)*p.Timing.HeartbeatFactor) * time.Second),
					NodeStatusUpdateFrequency: result.Duration(time.Duration(float64(p.Timing.NodeStatusUpdateFrequency.Duration) * p.Timing.HeartbeatFactor)),
					// kube-controller-manager 1.36 default
					// --endpointslice-updates-batch-period.
					EndpointSliceUpdatesBatchPeriod: 0,
					HeartbeatFactor:                 p.Timing.HeartbeatFactor,
					APF:                             apf,
					Flags:                           flags,
				},
			},
			Seed:      p.Seed,
			Profile:   raw,
			GoRuntime: GoRuntimeSettings(),
			Machine:   result.LocalMachine(),
		},
	}, nil
}

// stormStep is one storm the run plays on its fleet: a variant with its
// storm section (a sweep gives each wave size its own) and schedule.
type stormStep struct {
	variant profiles.Variant
	storm   *profiles.Storm
	// version is the Kubernetes version the step's kubelets are of: their
	// feature-gate defaults (profiles.EffectiveGatesAt), and the simulated
	// kubelets' version (kubelet.Config.Version).
	version kubeversion.Version
	sched   *storm.Schedule
	// restarts are this shard's share of sched.Restarts.
	restarts []storm.Restart
	// seed is the seed sched was drawn from and the simulated kubelets
	// draw their jitter from: the profile's, or with repetitions.seeds:
	// vary the block's (profiles.BlockSeed).
	seed int64
	// sweep is the capacity sweep step, nil outside a sweep.
	sweep *result.SweepStep
	// stage orders the steps of a block: steps of a lower stage run
	// first, and only steps of one stage are shuffled among themselves.
	// A run's variants are one stage; a sweep's steps each their own, so
	// that its wave sizes grow in order.
	stage int
}

// blockOrder returns the order of the steps in each of reps blocks: every
// step once per block, the steps of a stage in an order shuffled per block
// from the seed, so that drift over the run (etcd growing, caches warming,
// a neighbour on the machine) does not line up with one variant. The same
// seed gives the same order. A single block keeps the profile's order:
// with nothing to interleave against, a shuffle balances no drift and
// only moves the variants away from where the profile put them.
func blockOrder(steps []stormStep, reps int, seed int64) [][]int {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x5eed0b10c5))
	blocks := make([][]int, reps)
	for b := range blocks {
		order := make([]int, len(steps))
		for i := range order {
			order[i] = i
		}
		if reps == 1 {
			blocks[b] = order
			continue
		}
		for lo := 0; lo < len(order); {
			hi := lo
			for hi < len(order) && steps[hi].stage == steps[lo].stage {
				hi++
			}
			stage := order[lo:hi]
			rng.Shuffle(len(stage), func(i, j int) { stage[i], stage[j] = stage[j], stage[i] })
			lo = hi
		}
		blocks[b] = order
	}
	return blocks
}

// runStorms runs every variant × repetition on the provisioned fleet, in
// blocks (blockOrder), recorded in the result's Run.Order. Before each it
// restores the fleet (iso.reset) when it has to: every storm after the
// first, the first too when the fleet was saved (saving restarts the
// control plane; the first then starts, as every other, from a restore that
// has settled) or when it runs on another Kubernetes version than the
// cluster's.
func runStorms(ctx context.Context, o Options, f *fleet.Fleet, rn *realNodes, res *result.Result, iso isolation) error {
	p := o.Profile
	if p.Storm == nil {
		return nil
	}
	steps := stormSteps(o)
	blocks := blockOrder(steps, p.Repetitions.Count, p.Seed)
	// The first storm's restore comes before anything else asks the
	// cluster: a save restarts the control plane, whose authorizer then
	// refuses the harness for a moment.
	restore := func(s stormStep, rep int) (time.Duration, error) {
		o.Logf("Restoring the fleet before variant %s (repetition %d) into Kubernetes %s", s.variant.Name, rep, s.version.Short())
		took, err := iso.reset(ctx, s.version)
		if err != nil {
			return took, fmt.Errorf("restoring the fleet before variant %s repetition %d: %w", s.variant.Name, rep, err)
		}
		return took, nil
	}
	var firstReset time.Duration
	if first := steps[blocks[0][0]]; iso.reset != nil && (iso.save != nil || first.version != o.Embedded.KubeVersion()) {
		var err error
		if firstReset, err = restore(first, 0); err != nil {
			return err
		}
	}
	nodes, err := o.Target.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: f.RunSelector()})
	if err != nil {
		return fmt.Errorf("listing fleet nodes: %w", err)
	}
	infos := make([]storm.NodeInfo, 0, len(nodes.Items))
	for _, n := range nodes.Items {
		infos = append(infos, storm.NodeInfo{Name: n.Name, Labels: n.Labels})
	}
	seeds := BlockSeeds(p)
	res.Run.Seeds = &result.Seeds{Mode: p.Repetitions.Mode()}
	if p.Repetitions.Vary() {
		res.Run.Seeds.Blocks = seeds
	}
	if err := scheduleSteps(o, steps, seeds[0], infos); err != nil {
		return err
	}
	res.Run.Order = make([][]string, len(blocks))
	for b, order := range blocks {
		for _, i := range order {
			res.Run.Order[b] = append(res.Run.Order[b], steps[i].variant.Name)
		}
	}
	if len(blocks) > 1 {
		o.Logf("Storm order, %d blocks: %v", len(blocks), res.Run.Order)
	}
	if p.Repetitions.Vary() && len(blocks) > 1 {
		o.Logf("Seeds vary: the blocks play the schedules of seeds %v", seeds)
	}
	for rep, order := range blocks {
		if rep > 0 && seeds[rep] != seeds[rep-1] {
			if err := scheduleSteps(o, steps, seeds[rep], infos); err != nil {
				return err
			}
		}
		for _, i := range order {
			s := steps[i]
			if ctx.Err() != nil {
				return ctx.Err()
			}
			reset := firstReset
			if iso.reset != nil && len(res.Variants) > 0 {
				if reset, err = restore(s, rep); err != nil {
					return err
				}
			}
			r := &repetition{o: o, f: f, rn: rn, s: s, rep: rep}
			err := r.run(ctx)
			r.vr.ResetSeconds = reset.Seconds()
			res.Variants = append(res.Variants, r.vr)
			if o.Checkpoint != nil {
				if cerr := o.Checkpoint(res); cerr != nil {
					return errors.Join(err, cerr)
				}
			}
			if err != nil {
				return fmt.Errorf("variant %s repetition %d: %w", s.variant.Name, rep, err)
			}
		}
	}
	return nil
}

// scheduleSteps draws every step's schedule from seed and keeps this
// shard's share of its restarts.
func scheduleSteps(o Options, steps []stormStep, seed int64, infos []storm.NodeInfo) error {
	for i := range steps {
		s := &steps[i]
		var err error
		if s.sched, err = storm.NewSchedule(s.storm, seed, infos); err != nil {
			return fmt.Errorf("computing storm schedule (seed %d): %w", seed, err)
		}
		s.seed = seed
		s.restarts = s.sched.Restarts
		if o.ShardCount > 1 {
			s.restarts = s.sched.Shard(o.ShardIndex, o.ShardCount)
		}
	}
	return nil
}

// stormSteps lists the profile's variants, or for a capacity sweep each
// variant at each wave size: the same storm, all at once, on the same fleet.
func stormSteps(o Options) []stormStep {
	p := o.Profile
	var steps []stormStep
	if len(o.SweepWaveSizes) == 0 {
		for _, v := range p.ResolvedVariants() {
			steps = append(steps, stormStep{variant: v, storm: p.Storm, version: p.VariantVersion(&v)})
		}
		return steps
	}
	for _, v := range p.ResolvedVariants() {
		for _, size := range o.SweepWaveSizes {
			st := *p.Storm
			st.Select = profiles.Selection{Count: size, LabelSelector: p.Storm.Select.LabelSelector}
			st.Waves = profiles.Waves{}
			sv := v
			sv.Name = result.SweepVariantName(v.Name, size)
			// Each its own stage: a sweep keeps its order, the wave
			// sizes growing.
			steps = append(steps, stormStep{variant: sv, storm: &st, version: p.VariantVersion(&v), stage: len(steps), sweep: &result.SweepStep{Variant: v.Name, WaveSize: size}})
		}
	}
	return steps
}

// repetition is one repetition of a step's storm: what it runs against
// (the run's options, its fleet and real nodes), what it plays (the step),
// and, once run, what it measures and records.
type repetition struct {
	o   Options
	f   *fleet.Fleet
	rn  *realNodes
	s   stormStep
	rep int

	sim      *kubelet.Simulator
	set      *measure.Set
	outcomes *storm.Outcomes
	vr       result.VariantRun
}

// run runs the repetition: it starts the measurements, waits for their
// baseline, plays the storm until full recovery, and gathers into r.vr,
// which holds what was measured even when run fails.
func (r *repetition) run(ctx context.Context) error {
	o, f, s, rep := r.o, r.f, r.s, r.rep
	r.vr = newVariantRun(o, s, rep)
	vr := &r.vr
	steady := watchers.New(watchers.Options{Watches: o.Profile.Fleet.SteadyWatches, StormKind: s.storm.Kind, Base: o.Target.Config, Skip: f.Plan().IsReal, ShardIndex: o.ShardIndex, ShardCount: o.ShardCount})
	set, err := measure.NewSetFrom(steady.With(registry.Constructors()), o.Profile.Measurements)
	if err != nil {
		return err
	}
	defer set.Dispose()
	r.set, r.outcomes = set, &storm.Outcomes{}
	sim, err := newSimulator(o, s, vr.FeatureGates, measure.Get[*clientlatency.Recorder](set), steady)
	if err != nil {
		return err
	}
	r.sim = sim
	// SelfCost first: at the storm's end its CPU accounting stops before the
	// Simulator lists the fleet.
	set.Add(self.NewSelfCost(self.SelfCostOptions{HeapProfile: o.HeapProfile}),
		self.NewSimulator(self.SimulatorOptions{Counters: sim.Counters.Snapshot, Fleet: f}))
	// With a shared start time (shards), measurements start one baseline
	// before it, so the baseline holds no other shard's set-up traffic.
	if !o.StartAt.IsZero() {
		if err := poll.SleepUntil(ctx, o.Clock, o.StartAt.Add(-set.BaselineWait())); err != nil {
			return err
		}
	}
	if err := set.Start(ctx, measurementEnv(o, f, r.outcomes)); err != nil {
		vr.Errors = append(vr.Errors, err.Error())
	}
	if err := baseline(ctx, o, set); err != nil {
		vr.Measurements = set.Gather(context.WithoutCancel(ctx))
		return err
	}
	stormErr := r.play(ctx)
	gctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	vr.Measurements = set.Gather(gctx)
	vr.HostBound = host.Bound(vr)
	all := r.outcomes.All()
	vr.Restarts = storm.Restarts(all)
	failed := storm.Failed(all)
	vr.Complete = stormErr == nil && failed == 0
	for i := range all {
		for _, f := range all[i].Failures() {
			if len(vr.Errors) < 20 {
				vr.Errors = append(vr.Errors, f)
			}
		}
	}
	if stormErr != nil {
		o.Logf("Variant %s (repetition %d) stopped: %d restarts, %d failed, in %s", s.variant.Name, rep, vr.Restarts, failed, vr.End.Sub(vr.StormStart).Round(100*time.Millisecond))
	} else {
		o.Logf("Variant %s (repetition %d) done: %d restarts in %s", s.variant.Name, rep, vr.Restarts, vr.End.Sub(vr.StormStart).Round(100*time.Millisecond))
	}
	if stormErr == nil && failed > 0 {
		return fmt.Errorf("%d restarts failed (first: %s)", failed, storm.FirstFailure(all))
	}
	return stormErr
}

// newVariantRun starts the record of one repetition, with the schedule's
// wave starts, and logs what is about to run.
func newVariantRun(o Options, s stormStep, rep int) result.VariantRun {
	v, st := s.variant, s.storm
	vr := result.VariantRun{Variant: v.Name, Repetition: rep, FeatureGates: profiles.EffectiveGatesAt(s.version, st, &v), Start: o.Clock.Now(),
		WatchesClosedAfterSync: profiles.EffectiveCloseWatches(st, &v), Sweep: s.sweep}
	if s.version != o.Profile.KubeVersion() {
		vr.KubernetesVersion = s.version.String()
	}
	for _, w := range s.sched.WaveStarts {
		vr.WaveStarts = append(vr.WaveStarts, w.Seconds())
	}
	watches := "held"
	if vr.WatchesClosedAfterSync {
		watches = "closed after sync"
	}
	o.Logf("Variant %s (repetition %d): %s storm of %d nodes in %d wave(s), Kubernetes %s, gates %s, watches %s", v.Name, rep, st.Kind, len(s.restarts), s.sched.Waves, s.version.Short(), realnode.JoinGates(vr.FeatureGates), watches)
	return vr
}

// newSimulator builds the simulated kubelets of a step. Their requests, and
// the harness's, are timed by the client-latency measurement cl when the
// set has it; lifecycle (the steady watches) is told when a node goes down
// and when it is back. gates are the version's defaults overlaid with the
// step's settings; s.version is the step's Kubernetes version, what the
// simulated kubelets are of (their informers, user agent and start-up
// differences: kubelet.Config.Version).
func newSimulator(o Options, s stormStep, gates map[string]bool, cl *clientlatency.Recorder, lifecycle kubelet.NodeLifecycle) (*kubelet.Simulator, error) {
	var wrapKubelet func(http.RoundTripper) http.RoundTripper
	harnessCfg := rest.CopyConfig(o.Target.Config)
	if cl != nil {
		wrapKubelet = cl.Wrapper(clientlatency.SourceKubelet)
		harnessCfg.Wrap(cl.Wrapper(clientlatency.SourceHarness))
	}
	harness, err := kubernetes.NewForConfig(harnessCfg)
	if err != nil {
		return nil, err
	}
	st := s.storm
	return kubelet.NewSimulator(kubelet.Config{
		Base: o.Target.Config, Harness: harness, Wrap: wrapKubelet, RunID: o.RunID,
		Kind: st.Kind, Version: s.version, Gates: gates, InitDuration: st.InitDuration.Duration,
		CloseWatchesAfterSync: profiles.EffectiveCloseWatches(st, &s.variant), NodeChanges: st.NodeChanges,
		Planned: st.Planned, RuntimeMode: st.RuntimeMode, Seed: s.seed, Clock: o.Clock,
		RecoveryTimeout: st.RecoveryTimeout.Duration, Lifecycle: lifecycle,
	})
}

// measurementEnv is what the measurements of one repetition observe.
func measurementEnv(o Options, f *fleet.Fleet, outcomes *storm.Outcomes) *measure.Env {
	return &measure.Env{
		Client:       o.Target.Client,
		Namespace:    f.Plan().Namespace,
		NodeSelector: f.RunSelector(),
		Clock:        o.Clock,
		Nodes:        o.Profile.Fleet.Nodes,
		Outcomes:     outcomes,
		Scrapers:     metricsSources(o),
		Embedded:     o.Embedded != nil,
	}
}

// recoveredProgress passes outcomes on to its Outcomes and counts in
// progress those of restarts that took their node down and ended without
// an error (kubelet back, pods recovered).
type recoveredProgress struct {
	*storm.Outcomes
	progress fleet.Progress
}

func (r recoveredProgress) Add(o storm.Outcome) {
	r.Outcomes.Add(o)
	if o.Restarted() && o.Err == nil {
		r.progress.Add(1)
	}
}

// baseline waits for every measurement's baseline window, and with a shared
// start time (shards) until that time.
func baseline(ctx context.Context, o Options, set *measure.Set) error {
	end := o.Clock.Now().Add(set.BaselineWait())
	if !o.StartAt.IsZero() && o.StartAt.After(end) {
		end = o.StartAt
	}
	return poll.SleepUntil(ctx, o.Clock, end)
}

// play plays the storm from now and waits for full recovery: every node and
// pod Ready again. It records the storm's window in the repetition's
// record, marks it in the measurements and adds the component watcher's
// notes to the record's errors.
func (r *repetition) play(ctx context.Context) error {
	o, f, s, set, vr := r.o, r.f, r.s, r.set, &r.vr
	st := s.storm
	stopWatch := func() []string { return nil }
	if o.Embedded != nil {
		stopWatch = o.Embedded.Supervise(ctx, o.Clock, o.Logf)
	}
	vr.StormStart = o.Clock.Now()
	set.MarkStormStart(vr.StormStart)
	// Progress counts the nodes restarted and recovered, as its step
	// says: a failed or interrupted restart is not one; a rolling storm of
	// a big fleet runs for many minutes with nothing else to print.
	o.Progress.Start(fmt.Sprintf("variant %s: nodes restarted and recovered", s.variant.Name), len(s.restarts))
	report := recoveredProgress{Outcomes: r.outcomes, progress: o.Progress}
	// One driver for simulated and real nodes; their outcomes go to the
	// report, whose restarts and failures run counts.
	// Real kubelets of the version take only the gates they have.
	restarter := storm.ByNode(f.Plan().IsReal, r.rn.restarter(st, s.version.KubeletGates(vr.FeatureGates)), r.sim)
	err := storm.Play(ctx, o.Clock, s.restarts, vr.StormStart, func(ctx context.Context, rs storm.Restart) {
		report.Add(restarter.Restart(ctx, rs))
	})
	o.Progress.Done()
	if err == nil {
		if err = f.WaitReady(ctx, st.RecoveryTimeout.Duration); err == nil {
			err = f.WaitEndpointsReady(ctx, st.RecoveryTimeout.Duration)
		}
		if err != nil {
			err = fmt.Errorf("waiting for full recovery: %w", err)
		}
	}
	vr.End = o.Clock.Now()
	ectx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	set.MarkStormEnd(ectx, vr.End)
	cancel()
	vr.Errors = append(vr.Errors, stopWatch()...)
	return err
}
