package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	"github.com/stormbench/stormbench/bench/cluster"
	"github.com/stormbench/stormbench/bench/fleet"
	"github.com/stormbench/stormbench/bench/kubelet"
	"github.com/stormbench/stormbench/bench/measure"
	"github.com/stormbench/stormbench/bench/result"
	"github.com/stormbench/stormbench/bench/storm"
	"github.com/stormbench/stormbench/bench/watchers"
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
	// peaks during the storms.
	HeapProfile *PeakHeapProfile
	// Clock is injected for tests; default the real clock.
	Clock clock.Clock
}

// Run provisions the fleet, runs every variant and repetition of the
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
	if o.ShardCount == 0 {
		o.ShardCount = 1
	}
	p := o.Profile
	res := newResult(o)
	if err := checkRealNodes(o); err != nil {
		return res, err
	}
	f, err := fleet.New(o.Target.Client, o.RunID, p.Fleet, o.Progress)
	if err != nil {
		return res, err
	}
	rn := newRealNodes(o)
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
		return res, fmt.Errorf("provisioning fleet: %w", err)
	}
	o.Logf("Fleet Ready in %s", o.Clock.Since(provStart).Round(100*time.Millisecond))
	runErr := runStorms(ctx, o, f, rn, res)
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
		if err := f.Down(dctx, 10*time.Minute); err != nil {
			runErr = errors.Join(runErr, fmt.Errorf("deleting fleet: %w (remove it with `stormbench fleet down --run-id %s`)", err, o.RunID))
		}
	}
	return res, runErr
}

func newResult(o Options) *result.Result {
	p := o.Profile
	raw, _ := json.Marshal(p)
	versions := map[string]string{"kube-apiserver": o.Target.ServerVersion}
	var flags map[string]map[string]string
	var apf string
	if o.Embedded != nil {
		apf = o.Embedded.APFMode()
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
				Embedded: o.Embedded != nil,
				Versions: versions,
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
			Seed:    p.Seed,
			Profile: raw,
		},
	}
}

// runStorms runs every variant × repetition on the provisioned fleet.
func runStorms(ctx context.Context, o Options, f *fleet.Fleet, rn *realNodes, res *result.Result) error {
	p := o.Profile
	if p.Storm == nil {
		return nil
	}
	nodes, err := o.Target.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: f.RunSelector()})
	if err != nil {
		return fmt.Errorf("listing fleet nodes: %w", err)
	}
	infos := make([]storm.NodeInfo, 0, len(nodes.Items))
	for _, n := range nodes.Items {
		infos = append(infos, storm.NodeInfo{Name: n.Name, Labels: n.Labels})
	}
	type step struct {
		variant profiles.Variant
		storm   *profiles.Storm
	}
	var steps []step
	for _, v := range p.ResolvedVariants() {
		if len(o.SweepWaveSizes) == 0 {
			steps = append(steps, step{v, p.Storm})
			continue
		}
		// A capacity sweep: the same storm, all at once, at growing sizes,
		// on the same fleet.
		for _, size := range o.SweepWaveSizes {
			st := *p.Storm
			st.Select = profiles.Selection{Count: size, LabelSelector: p.Storm.Select.LabelSelector}
			st.Waves = profiles.Waves{}
			sv := v
			sv.Name = fmt.Sprintf("%s/wave=%d", v.Name, size)
			steps = append(steps, step{sv, &st})
		}
	}
	for _, s := range steps {
		sched, err := storm.NewSchedule(s.storm, p.Seed, infos)
		if err != nil {
			return fmt.Errorf("computing storm schedule: %w", err)
		}
		restarts := sched.Restarts
		if o.ShardCount > 1 {
			restarts = sched.Shard(o.ShardIndex, o.ShardCount)
		}
		v := s.variant
		for rep := 0; rep < p.Repetitions; rep++ {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			vr, err := runVariant(ctx, o, f, rn, s.storm, v, rep, restarts, sched.Waves)
			res.Variants = append(res.Variants, vr)
			if o.Checkpoint != nil {
				if cerr := o.Checkpoint(res); cerr != nil {
					return errors.Join(err, cerr)
				}
			}
			if err != nil {
				return fmt.Errorf("variant %s repetition %d: %w", v.Name, rep, err)
			}
		}
	}
	return nil
}

func runVariant(ctx context.Context, o Options, f *fleet.Fleet, rn *realNodes, st *profiles.Storm, v profiles.Variant, rep int, restarts []storm.Restart, waves int) (result.VariantRun, error) {
	p := o.Profile
	gates := profiles.EffectiveGates(st, &v)
	closeWatches := profiles.EffectiveCloseWatches(st, &v)
	vr := result.VariantRun{Variant: v.Name, Repetition: rep, FeatureGates: gates, Start: o.Clock.Now(),
		WatchesClosedAfterSync: closeWatches}
	watches := "held"
	if closeWatches {
		watches = "closed after sync"
	}
	o.Logf("Variant %s (repetition %d): %s storm of %d nodes in %d wave(s), gates %v, watches %s", v.Name, rep, st.Kind, len(restarts), waves, gates, watches)
	steady := watchers.New(watchers.Options{Watches: p.Fleet.SteadyWatches, StormKind: st.Kind, Base: o.Target.Config, Skip: f.Plan().IsReal, ShardIndex: o.ShardIndex, ShardCount: o.ShardCount})
	set, err := measure.NewSetFrom(steady.With(measure.Constructors()), p.Measurements)
	if err != nil {
		return vr, err
	}
	defer set.Dispose()
	events := &storm.EventLog{}
	env := &measure.Env{
		Client:       o.Target.Client,
		Namespace:    f.Plan().Namespace,
		RunID:        o.RunID,
		NodeSelector: f.RunSelector(),
		Clock:        o.Clock,
		Nodes:        p.Fleet.Nodes,
		Events:       events,
		Scrapers:     metricsSources(o),
	}
	// With a shared start time (shards), measurements start one baseline
	// before it, so the baseline holds no other shard's set-up traffic.
	if !o.StartAt.IsZero() {
		if err := sleep(ctx, o.Clock, o.StartAt.Add(-set.BaselineWait()).Sub(o.Clock.Now())); err != nil {
			return vr, err
		}
	}
	if err := set.Start(ctx, env); err != nil {
		vr.Errors = append(vr.Errors, err.Error())
	}
	baselineEnd := o.Clock.Now().Add(set.BaselineWait())
	if !o.StartAt.IsZero() && o.StartAt.After(baselineEnd) {
		baselineEnd = o.StartAt
	}
	if err := sleep(ctx, o.Clock, baselineEnd.Sub(o.Clock.Now())); err != nil {
		vr.Measurements = set.Gather(context.WithoutCancel(ctx))
		return vr, err
	}
	var wrapKubelet, wrapHarness func(http.RoundTripper) http.RoundTripper
	if cl := set.ClientLatency(); cl != nil {
		wrapKubelet = cl.Wrapper(measure.SourceKubelet)
		wrapHarness = cl.Wrapper(measure.SourceHarness)
	}
	harnessCfg := rest.CopyConfig(o.Target.Config)
	if wrapHarness != nil {
		harnessCfg.Wrap(wrapHarness)
	}
	harness, err := kubernetes.NewForConfig(harnessCfg)
	if err != nil {
		return vr, err
	}
	sim, err := kubelet.NewSimulator(kubelet.Config{
		Base: o.Target.Config, Harness: harness, Wrap: wrapKubelet, RunID: o.RunID,
		Kind: st.Kind, Gates: gates, InitDuration: st.InitDuration.Duration,
		CloseWatchesAfterSync: closeWatches, NodeChanges: st.NodeChanges,
		Planned: st.Planned, RuntimeMode: st.RuntimeMode, Seed: p.Seed, Clock: o.Clock, Events: events,
		RecoveryTimeout: st.RecoveryTimeout.Duration, Lifecycle: steady.Lifecycle(),
	})
	if err != nil {
		return vr, err
	}
	fixedBefore := f.StaleReadinessFixed()
	// stormbench's own memory during the storm: RSS sampled every 500ms,
	// against the RSS when the storm starts, so the fleet's provisioning
	// caches do not count. FreeOSMemory collects and returns freed memory
	// to the OS, so a variant does not start from an earlier variant's
	// peak (its growth would be understated).
	debug.FreeOSMemory()
	rssStart := currentRSS()
	var rssMax atomic.Int64
	rssMax.Store(rssStart)
	sampleCtx, stopSampling := context.WithCancel(ctx)
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-sampleCtx.Done():
				return
			case <-t.C:
				if r := currentRSS(); r > rssMax.Load() {
					rssMax.Store(r)
					o.HeapProfile.observe(r)
				}
			}
		}
	}()
	stopWatch := watchComponents(ctx, o, events, &vr)
	cpuStart := selfCPU()
	stormStart := o.Clock.Now()
	vr.StormStart = stormStart
	set.MarkStormStart(stormStart)
	events.Add(storm.Event{Time: stormStart, Type: storm.EventWaveStart})
	// Progress counts nodes whose restart is over (kubelet back, pods
	// recovered, or failed); a rolling storm of a big fleet runs for many
	// minutes with nothing else to print.
	o.Progress.Start(fmt.Sprintf("variant %s: nodes restarted and recovered", v.Name), len(restarts))
	playErr := storm.Play(ctx, o.Clock, restarts, stormStart, func(ctx context.Context, r storm.Restart) {
		if f.Plan().IsReal(r.Node) {
			rn.restart(ctx, r, st, gates, sim, events)
		} else {
			_ = sim.Restart(ctx, r)
		}
		o.Progress.Add(1)
	})
	o.Progress.Done()
	var recErr error
	if playErr == nil {
		// Full recovery: every node and pod Ready again.
		recErr = f.WaitReady(ctx, st.RecoveryTimeout.Duration)
		if recErr == nil {
			recErr = f.WaitEndpointsReady(ctx, st.RecoveryTimeout.Duration)
		}
	}
	end := o.Clock.Now()
	events.Add(storm.Event{Time: end, Type: storm.EventStormEnd})
	cpu := selfCPU() - cpuStart
	stopWatch()
	stopSampling()
	<-sampled
	vr.Restarts = int(sim.Counters.Restarts.Load())
	vr.End = end
	gctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	lost := 0
	if r, err := f.Readiness(gctx); err == nil {
		lost = r.LostPods
	}
	vr.Measurements = append(set.Gather(gctx), withValues(stormMeasurement(sim, cpu, lost, f.StaleReadinessFixed()-fixedBefore, stormStart, end),
		rssValues(rssStart, rssMax.Load(), len(restarts))...))
	vr.Complete = playErr == nil && recErr == nil && sim.Counters.Errors.Load() == 0
	for _, e := range events.Events() {
		if (e.Type == storm.EventError || e.Type == storm.EventStatusSyncDropped) && len(vr.Errors) < 20 {
			vr.Errors = append(vr.Errors, e.Node+": "+e.Detail)
		}
	}
	o.Logf("Variant %s (repetition %d) done: %d restarts in %s", v.Name, rep, vr.Restarts, end.Sub(stormStart).Round(100*time.Millisecond))
	switch {
	case playErr != nil:
		return vr, playErr
	case recErr != nil:
		return vr, fmt.Errorf("waiting for full recovery: %w", recErr)
	case sim.Counters.Errors.Load() > 0:
		first := ""
		for _, e := range events.Events() {
			if e.Type == storm.EventError {
				first = e.Node + ": " + e.Detail
				break
			}
		}
		return vr, fmt.Errorf("%d restarts failed (first: %s)", sim.Counters.Errors.Load(), first)
	}
	return vr, nil
}

// stormMeasurement records what the simulated kubelets did and what
// stormbench itself cost during the storm.
func stormMeasurement(sim *kubelet.Simulator, cpu time.Duration, lostPods int, fixed int64, start, end time.Time) result.Measurement {
	m := result.Measurement{Name: measure.MeasurementStorm, Windows: []result.Window{{Name: result.WindowStorm, Start: start, End: end}}}
	for k, v := range sim.Counters.Snapshot() {
		m.Values = append(m.Values, result.Value{Name: k, Window: result.WindowStorm, Unit: result.UnitCount, Value: float64(v)})
	}
	m.Values = append(m.Values,
		result.Value{Name: measure.StormCPUSeconds, Window: result.WindowStorm, Unit: result.UnitSeconds, Value: cpu.Seconds()},
		result.Value{Name: measure.StormPeakRSS, Window: result.WindowStorm, Unit: result.UnitBytes, Value: float64(PeakRSS())},
		// Standalone pods evicted while their node was down: nothing
		// replaces them.
		result.Value{Name: measure.StormPodsLost, Window: result.WindowStorm, Unit: result.UnitCount, Value: float64(lostPods)},
		// Pods the node-lifecycle controller left not ready on nodes that
		// KWOK (not a simulated kubelet) brought back, set Ready by
		// stormbench acting as their kubelet (kwok#1464).
		result.Value{Name: measure.StormStaleReadinessFixed, Window: result.WindowStorm, Unit: result.UnitCount, Value: float64(fixed)},
	)
	m.Sort()
	return m
}

// watchComponents watches the embedded cluster's component processes during
// the storm: a component that exits, and one that comes back, is written to
// the event log and the variant's errors, so the result says what happened
// (the measurements mark the gap in their own series). The returned stop
// waits for the watcher.
func watchComponents(ctx context.Context, o Options, events *storm.EventLog, vr *result.VariantRun) (stop func()) {
	if o.Embedded == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	var notes []string
	go func() {
		defer close(done)
		down := map[string]time.Time{}
		last := o.Embedded.PIDs()
		for {
			select {
			case <-ctx.Done():
				return
			case <-o.Clock.After(time.Second):
			}
			now := o.Clock.Now()
			pids := o.Embedded.PIDs()
			for name, pid := range last {
				alive := cluster.ProcessAlive(pids[name])
				_, wasDown := down[name]
				switch {
				case !alive && !wasDown:
					down[name] = now
					msg := fmt.Sprintf("%s (pid %d) exited during the storm at %s; log: %s", name, pid, now.Format(time.RFC3339), o.Embedded.LogPath(name))
					notes = append(notes, msg)
					events.Add(storm.Event{Time: now, Type: storm.EventComponentExited, Detail: msg})
					o.Logf("%s", msg)
				case alive && wasDown:
					msg := fmt.Sprintf("%s came back (pid %d) after %s", name, pids[name], now.Sub(down[name]).Round(time.Second))
					delete(down, name)
					notes = append(notes, msg)
					events.Add(storm.Event{Time: now, Type: storm.EventComponentBack, Detail: msg})
					o.Logf("%s", msg)
				}
			}
			for name, pid := range pids {
				last[name] = pid
			}
		}
	}()
	return func() {
		cancel()
		<-done
		vr.Errors = append(vr.Errors, notes...)
	}
}

func withValues(m result.Measurement, vs ...result.Value) result.Measurement {
	m.Values = append(m.Values, vs...)
	m.Sort()
	return m
}

// rssValues are stormbench's RSS at the storm's start, its peak during the
// storm, and the growth per restarted node.
func rssValues(start, peak int64, restarts int) []result.Value {
	out := []result.Value{
		{Name: measure.StormRSSStart, Window: result.WindowStorm, Unit: result.UnitBytes, Value: float64(start)},
		{Name: measure.StormRSSPeak, Window: result.WindowStorm, Unit: result.UnitBytes, Value: float64(peak)},
	}
	if restarts > 0 {
		out = append(out, result.Value{Name: measure.StormRSSGrowthPerRestart, Window: result.WindowStorm, Unit: result.UnitBytes, Value: float64(peak-start) / float64(restarts)})
	}
	return out
}

// currentRSS is this process's resident set size, in bytes.
func currentRSS() int64 {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	var size, resident int64
	if _, err := fmt.Sscanf(string(data), "%d %d", &size, &resident); err != nil {
		return 0
	}
	return resident * int64(os.Getpagesize())
}

func metricsSources(o Options) []measure.MetricsSource {
	var out []measure.MetricsSource
	if o.Embedded != nil {
		if eps, err := o.Embedded.MetricsEndpoints(); err == nil {
			for _, ep := range eps {
				out = append(out, measure.HTTPSource(ep.Component, ep.URL, ep.Client))
			}
			return out
		}
	}
	return append(out, measure.APIServerSource(o.Target.Client.CoreV1().RESTClient()))
}

func sleep(ctx context.Context, clk clock.Clock, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-clk.After(d):
		return nil
	}
}

// selfCPU is this process's user+system CPU time.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// PeakRSS is this process's peak resident set size (VmHWM), in bytes.
func PeakRSS() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb int64
			if _, err := fmt.Sscanf(strings.TrimSpace(rest), "%d kB", &kb); err == nil {
				return kb * 1024
			}
		}
	}
	return 0
}
